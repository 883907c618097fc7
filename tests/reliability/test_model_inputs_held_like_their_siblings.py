"""The model and generator take only what their sibling already refuses to take (issue 30 round 25).

The kind: a value one entry point refuses in one line was taken by its sibling, silently or into a raw torch error.
``with_vocab_size('400')`` was Python's "'>' not supported" where ``ModelConfig(vocab_size='400')`` is refused (Y23);
a label outside a restricted softmax gave loss inf with the default ``return_logits=True`` and raised with False
(Y31); a NaN in ``attention_mask`` was read as 1 (Y45); meta ids reached torch's ".item() cannot be called on meta
tensors" in ``CausalLM`` while the generator refuses them (Y52); uint16 ids (the token files' dtype), which
``CausalLM`` converts, were torch's '"min_all" not implemented' in the bare generator (Y79); ``output_scale=1e308``
passed as finite and made every output inf (Y94); ``linear_cross_entropy`` over zero positions was NaN where all
-100 labels are refused (Y105); a ``KVCache`` carried across ``model.half()`` was torch's dtype error from the
attention (Y118).
"""

from __future__ import annotations

import pytest
import torch

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _config(**extra):
    from leviathan import ModelConfig

    return ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                       max_position_embeddings=64, generator_seed_dim=8, generator_modes=2, generator_knots=8,
                       generator_rank=4, **extra)


def _model():
    from leviathan import CausalLM

    torch.manual_seed(0)
    return CausalLM(_config()).eval()


def _generator():
    from leviathan import LeviathanGenerator

    return LeviathanGenerator(300, 16, seed_dim=8, modes=2, knots=8, rank=4)


@pytest.mark.parametrize("size", ["400", 400.0, True], ids=["text", "float", "bool"])
def test_with_vocab_size_takes_what_model_config_takes(size):
    """Y23: '400' was a raw TypeError, 400.0 was named as past the generator's capacity."""
    with pytest.raises(UserError, match=r"with_vocab_size: vocab_size must be a positive integer .*got "):
        _config().with_vocab_size(size)
    assert _config(embedding="dense_tied").with_vocab_size(400).vocab_size == 400


def test_a_label_outside_a_restricted_softmax_raises_with_logits_too():
    """Y31: loss tensor(inf) without a word with the default return_logits=True."""
    m = _model().restrict_output_([1, 2, 3])
    ids = torch.tensor([[1, 2, 3]])
    for return_logits in (True, False):
        with pytest.raises(ValueError, match=r"target ids \(e.g. 5\) are outside this model's restricted softmax"):
            m(ids, labels=torch.tensor([[1, 2, 5]]), return_logits=return_logits)
    assert torch.isfinite(m(ids, labels=torch.tensor([[1, 2, -100]]))[1])


@pytest.mark.parametrize("value", [float("nan"), 0.5, float("-inf")], ids=["nan", "half", "additive"])
def test_an_attention_mask_holds_zeros_and_ones(value):
    """Y45: a NaN in the mask was taken as 1 (attend) without a word."""
    m, ids = _model(), torch.tensor([[1, 2, 3, 4]])
    with pytest.raises(UserError, match=r"attention_mask must hold 1 for each key to attend and 0 for padding"):
        m(ids, attention_mask=torch.tensor([[1.0, value, 1.0, 1.0]]))
    for mask in (torch.tensor([[0.0, 1.0, 1.0, 1.0]]), torch.tensor([[0, 1, 1, 1]]), torch.tensor([[True] * 4])):
        assert m(ids, attention_mask=mask)[0].shape == (1, 4, 300)


def test_meta_ids_are_named_by_the_model():
    """Y52: torch's 'Tensor.item() cannot be called on meta tensors'."""
    with pytest.raises(UserError, match=r"input_ids is on the meta device .*; pass ids with values"):
        _model()(torch.tensor([[1, 2]], device="meta"))
    with pytest.raises(UserError, match=r"labels is on the meta device .*; pass target ids with values"):
        _model()(torch.tensor([[1, 2]]), labels=torch.tensor([[1, 2]], device="meta"))


def test_the_generator_takes_the_token_files_dtype():
    """Y79: uint16 ids were torch's '"min_all" not implemented for 'UInt16'' (CausalLM converts them itself)."""
    g, ids = _generator(), torch.tensor([1, 2, 3])
    for dtype in (torch.uint16, torch.uint32):
        assert torch.equal(g(ids.to(dtype)), g(ids))
        assert torch.equal(g.embed_unique(ids.to(dtype)), g.embed_unique(ids))
    with pytest.raises(UserError, match=r"token id 400 is outside the generator's range \[0, 343\)"):
        g(torch.tensor([400], dtype=torch.uint16))


@pytest.mark.parametrize("scale", [1e308, 1e6, 1e-300], ids=["past-float32", "past-fp16", "zero-in-float32"])
def test_an_output_scale_is_one_every_dtype_holds(scale):
    """Y94: output_scale=1e308 was accepted as 'a finite number > 0' and every output was inf."""
    from leviathan.hf.adoption import ScaledLeviathanGenerator

    with pytest.raises(UserError, match=r"output_scale must be a finite number > 0, in \[6e-08, 65,504\]"):
        ScaledLeviathanGenerator(300, 16, output_scale=scale, seed_dim=8, modes=2, knots=8, rank=4)
    g = ScaledLeviathanGenerator(300, 16, output_scale=25.25, seed_dim=8, modes=2, knots=8, rank=4)
    assert bool(g(torch.tensor([1, 2])).isfinite().all())


def test_linear_cross_entropy_refuses_zero_positions():
    """Y105: tensor(nan) without a word for a loss over no position."""
    from leviathan.model.loss import linear_cross_entropy

    with pytest.raises(ValueError, match=r"linear_cross_entropy: labels hold no position \(shape \(0,\)\)"):
        linear_cross_entropy(torch.randn(0, 8), torch.randn(10, 8), torch.zeros(0, dtype=torch.long))
    assert torch.isfinite(linear_cross_entropy(torch.randn(2, 8), torch.randn(10, 8), torch.tensor([1, 2])))


def test_a_kv_cache_is_refused_across_a_dtype_change():
    """Y118: torch's 'Expected query, key, and value to have the same dtype' from the attention."""
    from leviathan import KVCache

    m, cache = _model(), KVCache()
    m(torch.tensor([[1, 2, 3]]), cache=cache)
    m.half()
    with pytest.raises(UserError, match=r"this KV cache holds keys in torch.float32, and the input continues in "
                                        r"torch.float16 .*model.half\(\)"):
        m(torch.tensor([[4]]), cache=cache)
