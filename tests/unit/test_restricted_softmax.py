"""Restricted softmax (CausalLM.restrict_output_): the loss over a subset of ids, on every path."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from leviathan.eval.perplexity import token_losses
from leviathan.model.config import ModelConfig
from leviathan.model.llama import CausalLM
from leviathan.checkpoint import load_model_state

pytestmark = pytest.mark.usefixtures("single_thread")

V = 300
IDS = torch.tensor(sorted(set(range(0, V, 3)) | {1, 298}))  # 101 of 300 ids


def model(kind: str = "leviathan") -> CausalLM:
    cfg = ModelConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=32, embedding=kind, generator_seed_dim=8,
                      generator_modes=2, generator_knots=8, generator_rank=4)
    torch.manual_seed(0)
    return CausalLM(cfg)


def batch(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, V, (3, 16), generator=g)  # inputs: any id
    y = IDS[torch.randint(0, len(IDS), (3, 16), generator=g)]  # targets: in the subset
    y[0, :4] = -100
    return x, y


def reference_loss(m: CausalLM, x, y):
    """Cross-entropy of the full logits with every id outside IDS removed from the softmax."""
    logits = F.linear(m.model(x), m.lm_head.weight)  # (B, T, V)
    outside = torch.ones(V, dtype=torch.bool)
    outside[IDS] = False
    return F.cross_entropy(logits.masked_fill(outside, float("-inf")).view(-1, V), y.reshape(-1), ignore_index=-100)


@pytest.mark.parametrize("kind", ["dense_tied", "leviathan", "dense_untied"])
def test_chunked_and_logits_paths_equal_the_masked_softmax(kind):
    m = model(kind)
    x, y = batch()
    ref = reference_loss(m, x, y)
    ref.backward()
    want = {n: p.grad.clone() for n, p in m.named_parameters()}
    m.restrict_output_(IDS)
    for return_logits in (False, True):
        m.zero_grad(set_to_none=True)
        logits, loss = m(x, labels=y, return_logits=return_logits)
        loss.backward()
        torch.testing.assert_close(loss, ref, rtol=1e-5, atol=1e-6)
        for name, p in m.named_parameters():
            scale = want[name].abs().max().clamp_min(1e-12)
            assert float((p.grad - want[name]).abs().max() / scale) < 1e-4, (name, return_logits)
    # the loss differs from the full softmax's (ids outside the subset no longer take probability)
    m.restrict_output_(None)
    with torch.no_grad():
        assert float(m(x, labels=y, return_logits=False)[1]) > float(ref) + 1e-3


def test_logits_outside_the_subset_are_minus_infinity_and_eval_agrees():
    m = model().restrict_output_(IDS)
    x, _ = batch()
    logits, _ = m(x)
    inside = torch.zeros(V, dtype=torch.bool)
    inside[IDS] = True
    assert torch.isinf(logits[..., ~inside]).all() and torch.isfinite(logits[..., inside]).all()
    tokens = IDS[torch.randint(0, len(IDS), (60,))].numpy()
    chunked = token_losses(m, tokens, seq_len=8, batch_size=3)

    class LogitsOnly(torch.nn.Module):  # the same model scored through its (masked) full logits
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, ids):
            return self.inner(ids)

    np.testing.assert_allclose(chunked, token_losses(LogitsOnly(m), tokens, seq_len=8, batch_size=3), rtol=1e-5)


def test_a_target_outside_the_subset_is_one_clear_error():
    m = model().restrict_output_(IDS)
    x, y = batch()
    y[1, 3] = 2  # 2 is not in IDS
    with pytest.raises(ValueError, match=r"1 target ids \(e.g. 2\) are outside .*data.softmax=full"):
        m(x, labels=y, return_logits=False)
    with pytest.raises(ValueError, match="outside"):
        m.token_nll(x, y)


def test_text_from_elsewhere_is_scored_on_the_targets_inside_the_subset():
    """Out-of-domain text for a restricted model: targets outside the set get NaN, the rest score exactly
    as the full-softmax-over-the-set reference, and inputs (any id) are never changed."""
    m = model().restrict_output_(IDS)
    g = torch.Generator().manual_seed(3)
    tokens = torch.randint(0, V, (90,), generator=g).numpy()  # about 2/3 of the targets outside IDS
    losses = token_losses(m, tokens, seq_len=8, batch_size=3, outside="nan")
    inside = np.isin(tokens[1:], IDS.numpy())
    assert np.isnan(losses[~inside]).all() and np.isfinite(losses[inside]).all() and 0 < inside.sum() < 89
    with pytest.raises(ValueError, match="outside"):
        token_losses(m, tokens, seq_len=8, batch_size=3)  # the default still refuses
    # each finite loss is the masked-softmax NLL of its target given the unchanged inputs
    x = torch.from_numpy(tokens[:8]).long().unsqueeze(0)
    with torch.no_grad():
        logits = m(x)[0][0]  # (8, V), -inf outside IDS
    ref = -torch.log_softmax(logits, -1)[torch.arange(8), torch.from_numpy(tokens[1:9]).long()].numpy()
    np.testing.assert_allclose(losses[:8][inside[:8]], ref[inside[:8]], rtol=1e-5)


@pytest.mark.parametrize("ids", [[], [3, 2], [5, 5], [-1, 4], [4, V]])
def test_bad_subsets_are_refused(ids):
    with pytest.raises(ValueError, match="sorted, distinct"):
        model().restrict_output_(torch.tensor(ids, dtype=torch.long))


def test_the_subset_travels_in_the_state_dict():
    m = model().restrict_output_(IDS)
    state = m.state_dict()
    assert torch.equal(state["output_ids"], IDS) and "output_index" not in state
    fresh = model()
    assert "output_ids" not in fresh.state_dict()  # a full-softmax model's state dict is unchanged
    load_model_state(fresh, state)
    assert fresh.restricted and torch.equal(fresh.output_ids, IDS)
    x, y = batch()
    torch.testing.assert_close(fresh(x, labels=y)[1], m(x, labels=y)[1])
    with pytest.raises(ValueError, match="restricted softmax"):
        fresh.add_tokens(1)


@pytest.mark.parametrize("kind", ["leviathan", "dense_untied"])
def test_gradients_do_not_depend_on_the_micro_batching(kind):
    """One batch of 4 sequences, or two micro batches of 2 with the loss halved (the trainer's accumulation): the
    same gradients up to float summation order, with the restricted softmax as with the full one. (That order can
    still move a run's weights: Adam amplifies it for an element whose gradient is near its eps, by chance, with
    either softmax; see ``PARITY_EPS`` in tests/integration/test_fsdp.py.)"""
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, V, (4, 16), generator=g)
    y = IDS[torch.randint(0, len(IDS), (4, 16), generator=g)]

    def grads(micro: int) -> dict[str, torch.Tensor]:
        m = model(kind).restrict_output_(IDS)
        for i in range(0, 4, micro):
            _, loss = m(x[i:i + micro], labels=y[i:i + micro], return_logits=False)
            (loss * micro / 4).backward()
        return {n: p.grad for n, p in m.named_parameters() if p.grad is not None}

    whole, split = grads(4), grads(2)
    assert whole.keys() == split.keys() and whole
    for name in whole:
        torch.testing.assert_close(split[name], whole[name], rtol=1e-5, atol=1e-7, msg=name)
