"""``position_ids`` outside the model's positions are refused by every forward (issue 30 round 29, W525).

``CausalLM.forward(x of 9 ids, position_ids 60..68)`` with ``max_position_embeddings`` 64 returned logits from rotary
angles the model never trained on, and -1 ran too, without a word, while the same reach by ids (65 ids) is refused
(round 28, U53). ``attention_inputs.check_position_values`` now reads them in ``LlamaModel.forward`` (so ``CausalLM`` and
``LeviathanForCausalLM``) and in the adopted classes' forward: one line naming the position and the range, an
``ArgumentValueError`` (a float tensor an ``ArgumentTypeError``).
"""

from __future__ import annotations

import pytest
import torch

from leviathan import ModelConfig
from leviathan.errors import UserError
from leviathan.hf.configuration import LeviathanConfig
from leviathan.hf.modeling import LeviathanForCausalLM
from leviathan.model.llama import CausalLM

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

SIZES = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=64)
GEN = dict(generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)


def _native():
    torch.manual_seed(0)
    return CausalLM(ModelConfig(**SIZES, **GEN))


def _hf():
    torch.manual_seed(0)
    return LeviathanForCausalLM(LeviathanConfig(**SIZES, **GEN))


def _adopted():
    transformers = pytest.importorskip("transformers")
    from leviathan.hf import adopt

    torch.manual_seed(0)
    config = transformers.LlamaConfig(**SIZES, intermediate_size=64, num_key_value_heads=2)
    return adopt(config, seed_dim=8, modes=2, knots=8, rank=4)


def _logits(model, x, positions):
    out = model(x, position_ids=positions)
    return out[0] if isinstance(out, tuple) else out.logits


MODELS = [_native, _hf, _adopted]


@pytest.mark.parametrize("build", MODELS)
@pytest.mark.parametrize("first, shown", [(60, "64"), (-1, "-1")])
def test_positions_outside_the_model_are_refused(build, first, shown):
    x = torch.randint(0, 300, (2, 9))
    with pytest.raises(UserError, match=rf"position_ids holds position {shown}, outside the model's positions "
                                        rf"\[0, 64\) \(max_position_embeddings 64\)") as caught:
        _logits(build(), x, (torch.arange(9) + first).unsqueeze(0))
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)


@pytest.mark.parametrize("build", MODELS)
def test_float_positions_are_refused(build):
    x = torch.randint(0, 300, (1, 9))
    with pytest.raises(TypeError, match="position_ids must be integer positions, got a torch.float32 tensor; pass "
                                        "torch.long positions") as caught:
        _logits(build(), x, torch.arange(9.0).unsqueeze(0))
    assert isinstance(caught.value, UserError)


@pytest.mark.parametrize("build", MODELS)
def test_positions_up_to_the_last_one_are_taken(build):
    x = torch.randint(0, 300, (2, 9))
    assert _logits(build(), x, (torch.arange(9) + 55).unsqueeze(0)).shape == (2, 9, 300)


def test_adopted_positions_given_by_place_are_read():
    x = torch.randint(0, 300, (1, 9))
    with pytest.raises(UserError, match=r"LeviathanLlamaForCausalLM.forward: position_ids holds position 64"):
        _adopted()(x, None, (torch.arange(9) + 60).unsqueeze(0))


def test_the_shape_is_still_named():
    x = torch.randint(0, 300, (2, 9))
    with pytest.raises(ValueError, match=r"position_ids must have shape \(2, 9\)"):
        _logits(_native(), x, torch.arange(8).unsqueeze(0))
