"""``forward(logits_to_keep=...)`` takes a whole number >= 0 or a 1-D index tensor of positions inside the sequence,
as transformers documents it, in both of leviathan's Hugging Face classes (one rule: ``hf.logits_to_keep``).

Issue 30, noticed while fixing round 27: LeviathanForCausalLM kept every position for -3 without a word
(transformers' Llama keeps positions 3 onwards) and took True as 1. Round 30: an adopted model's forward (transformers'
own) ended in torch's raw IndexError for numpy's True, 2.0 or an index past the sequence, and a TypeError for '2'
(Y80, Y98, Y99, Y100); it read -1 as every position but the first and True as 1, silently (Y77, Y97);
LeviathanForCausalLM raised the raw IndexError for the index past the sequence too. Each is refused in one line
naming the class; 0, N, numpy's ints and an index tensor keep working. Round 31: an index tensor of int8 / int16 was
torch's raw "tensors used as indices must be long, int, byte or bool tensors" and one of uint8 was read as a mask (a
raw IndexError about its shape), in both classes (AA78, AA79, AA520, AA521); a count beside labels was torch's raw
"Expected input batch_size (4) to match target batch_size (18)" (AA85, AA86). Each is one line now.
"""

from __future__ import annotations

import re

import numpy as np
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


@pytest.fixture(scope="module")
def adopted():
    from transformers import LlamaConfig

    from leviathan.hf import adopt

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=2, max_position_embeddings=32)
    return adopt(cfg, seed_dim=8, modes=2, knots=8, rank=4).eval()


def _both(model, adopted):
    return [("LeviathanForCausalLM", model), (type(adopted).__name__, adopted)]


COUNT = "logits_to_keep must be a whole number of positions (or a 1-D index tensor), got "


@pytest.mark.parametrize("value, error, said", [
    (-3, ValueError, "logits_to_keep must be >= 0 (the last N positions; 0 keeps every one), got -3"),
    (-1, ValueError, "logits_to_keep must be >= 0 (the last N positions; 0 keeps every one), got -1"),  # Y77
    (True, TypeError, COUNT + "bool True"),  # Y97
    (np.bool_(True), TypeError, COUNT + "bool np.True_"),  # Y80
    (1.5, TypeError, COUNT + "float 1.5"),
    (2.0, TypeError, COUNT + "float 2.0"),  # Y98
    ("2", TypeError, COUNT + "str '2'"),  # Y100
    (torch.tensor([0, 6]), ValueError, "logits_to_keep holds position 6, outside the input's 6 positions [0, 6); "
                                       "pass indices from 0 to 5"),  # Y99
    (torch.tensor([-1]), ValueError, "logits_to_keep holds position -1, outside the input's 6 positions"),
    (torch.tensor(2), TypeError, "logits_to_keep as a tensor must be a 1-D integer tensor of positions, got a "
                                 "torch.int64 tensor of shape ()"),
    (torch.tensor([0.0, 1.0]), TypeError, "logits_to_keep as a tensor must be a 1-D integer tensor of positions, got "
                                          "a torch.float32 tensor"),
    (torch.ones(6, dtype=torch.bool), TypeError, "logits_to_keep as a tensor must be a 1-D integer tensor"),
])
def test_a_count_or_index_that_is_not_one_is_refused(model, adopted, value, error, said):
    from leviathan.errors import UserError

    x = torch.randint(0, 64, (1, 6))
    for name, hf in _both(model, adopted):
        with pytest.raises(error, match="^" + re.escape(f"{name}.forward: {said}")) as caught:
            hf(x, logits_to_keep=value, use_cache=False)
        assert isinstance(caught.value, UserError) and "\n" not in str(caught.value)


def test_counts_and_index_tensors_keep_what_they_say(model, adopted):
    x = torch.randint(0, 64, (1, 6))
    for _, hf in _both(model, adopted):
        with torch.no_grad():
            full = hf(x, use_cache=False).logits
            assert full.shape == (1, 6, 64)
            # the head's matmul of fewer rows may sum in another order: equal to rounding
            torch.testing.assert_close(hf(x, logits_to_keep=2, use_cache=False).logits, full[:, -2:])
            torch.testing.assert_close(hf(x, logits_to_keep=np.int64(2), use_cache=False).logits, full[:, -2:])
            torch.testing.assert_close(hf(x, logits_to_keep=torch.tensor([0, 5]), use_cache=False).logits,
                                       full[:, [0, 5]])
            assert hf(x, logits_to_keep=100, use_cache=False).logits.shape == (1, 6, 64)  # more than T: all of them


def test_an_adopted_models_logits_to_keep_given_in_its_place_is_checked_too(adopted):
    x = torch.randint(0, 64, (1, 6))
    names = [*__import__("inspect").signature(adopted.forward).parameters]
    place = names.index("logits_to_keep")
    with pytest.raises(ValueError, match="logits_to_keep must be >= 0"):
        adopted(x, *[None] * (place - 1), -1)
    assert adopted(x, *[None] * (place - 1), 2).logits.shape == (1, 2, 64)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.uint8])  # AA78, AA520; AA79, AA521 (uint8)
def test_an_index_tensor_torch_cannot_index_with_is_refused(model, adopted, dtype):
    from leviathan.errors import UserError

    x = torch.randint(0, 64, (2, 6))
    for name, hf in _both(model, adopted):
        with pytest.raises(TypeError, match="^" + re.escape(
                f"{name}.forward: logits_to_keep as a tensor must hold torch.long (or torch.int32) positions, got a "
                f"{dtype} tensor")) as caught:
            hf(x, logits_to_keep=torch.tensor([1, 2], dtype=dtype), use_cache=False)
        assert isinstance(caught.value, UserError) and "\n" not in str(caught.value)
        assert str(caught.value).endswith("pass logits_to_keep.long()")
        kept = hf(x, logits_to_keep=torch.tensor([1, 2], dtype=torch.int32), use_cache=False).logits  # int32 indexes
        assert kept.shape == (2, 2, 64)


@pytest.mark.parametrize("value", [2, torch.tensor([5, 4, 3, 2, 1, 0])])  # AA85, AA86; the pairs mixed up silently
def test_logits_kept_beside_labels_are_refused(model, adopted, value):
    from leviathan.errors import UserError

    x = torch.randint(0, 64, (2, 6))
    for name, hf in _both(model, adopted):
        with pytest.raises(ValueError, match="^" + re.escape(f"{name}.forward: labels were given beside "
                                                             f"logits_to_keep=")) as caught:
            hf(x, labels=x, logits_to_keep=value, use_cache=False)
        assert isinstance(caught.value, UserError) and "leave logits_to_keep out (0) when passing labels" in str(
            caught.value)
        with torch.no_grad():  # every position kept: the loss of logits_to_keep=0
            assert torch.equal(hf(x, labels=x, logits_to_keep=6, use_cache=False).loss,
                               hf(x, labels=x, use_cache=False).loss)
