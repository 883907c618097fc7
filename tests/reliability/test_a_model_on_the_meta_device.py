"""A model moved to the meta device is refused by its forward in one line (issue 30 round 27, S545).

``CausalLM(cfg).to('meta')`` then a forward ended in torch's raw "Tensor on device meta is not on the expected device
cpu!" from the rotary embedding, while the generator alone (S544), ``generate`` and ``adopt`` refuse the meta device
in one line (``meta_device.refuse_meta``). ``LlamaModel.forward`` now refuses it too, so ``CausalLM.forward``,
``token_nll`` and the Hugging Face adapter's forward say it the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from test_model_inputs_held_like_their_siblings import _config, _model  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

pytestmark = [pytest.mark.reliability]

MATCH = r"^the model is on the meta device .*; load it with its weights"


def test_a_forward_of_a_model_on_meta_is_one_line():
    ids = torch.tensor([[1, 2, 3]])
    with pytest.raises(UserError, match=MATCH):
        _model().to("meta")(ids)
    with pytest.raises(UserError, match=MATCH):
        _model().to("meta")(ids, labels=ids, return_logits=False)
    with pytest.raises(UserError, match=MATCH):
        _model().to("meta").token_nll(ids, ids)


def test_a_model_built_on_meta_is_refused_and_one_off_it_still_runs():
    from leviathan import CausalLM

    with torch.device("meta"):
        built = CausalLM(_config())
    with pytest.raises(UserError, match=MATCH):
        built(torch.tensor([[1, 2]]))
    assert _model()(torch.tensor([[1, 2]]))[0].shape == (1, 2, 300)


def test_the_hugging_face_adapter_on_meta_is_one_line():
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

    model = LeviathanForCausalLM(LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                 num_attention_heads=4, max_position_embeddings=64)).to("meta")
    with pytest.raises(UserError, match=MATCH):
        model(torch.tensor([[1, 2]]))


def test_round_35_meta_lines_name_the_model_and_both_loaders():
    """AI557: token_nll with targets moved to the model's (meta) device, as evaluate does, blamed the targets; AI560:
    LeviathanForCausalLM's line named only the native checkpoint loader."""
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

    ids = torch.tensor([[1, 2, 3]])
    with pytest.raises(UserError, match=MATCH):
        _model().to("meta").token_nll(ids.to("meta"), ids.to("meta"))
    model = LeviathanForCausalLM(LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                 num_attention_heads=4, max_position_embeddings=64)).to("meta")
    with pytest.raises(UserError, match=MATCH + r" \(a CausalLM: .*load_model\(RUN\); a LeviathanForCausalLM: "
                                                 r"LeviathanForCausalLM\.from_pretrained\(DIR\)\)"):
        model(ids)
