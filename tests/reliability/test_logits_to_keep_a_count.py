"""``LeviathanForCausalLM.forward(logits_to_keep=...)`` takes a whole number >= 0 or an index tensor, as transformers
documents it (issue 30, noticed while fixing round 27): -3 kept every position without a word (transformers' Llama
keeps positions 3 onwards) and True was taken as 1. Both are refused in one line; 0, N and a tensor keep working.
"""

from __future__ import annotations

import pytest
import torch

pytestmark = [pytest.mark.reliability]


@pytest.fixture(scope="module")
def model():
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

    torch.manual_seed(0)
    cfg = LeviathanConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                          num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32)
    return LeviathanForCausalLM(cfg).eval()


@pytest.mark.parametrize("value, error, said", [
    (-3, ValueError, "logits_to_keep must be >= 0 (the last N positions; 0 keeps every one), got -3"),
    (True, TypeError, "logits_to_keep must be a whole number of positions (or an index tensor), got bool True"),
    (1.5, TypeError, "logits_to_keep must be a whole number of positions (or an index tensor), got float 1.5"),
])
def test_a_count_that_is_not_one_is_refused(model, value, error, said):
    from leviathan.errors import UserError

    x = torch.randint(0, 64, (1, 6))
    with pytest.raises(error, match="^" + __import__("re").escape(said)) as caught:
        model(x, logits_to_keep=value, use_cache=False)
    assert isinstance(caught.value, UserError)


def test_counts_and_index_tensors_keep_what_they_say(model):
    x = torch.randint(0, 64, (1, 6))
    with torch.no_grad():
        full = model(x, use_cache=False).logits
        assert full.shape == (1, 6, 64)
        # the head's matmul of fewer rows may sum in another order: equal to rounding
        torch.testing.assert_close(model(x, logits_to_keep=2, use_cache=False).logits, full[:, -2:])
        torch.testing.assert_close(model(x, logits_to_keep=torch.tensor([0, 3]), use_cache=False).logits, full[:, [0, 3]])
