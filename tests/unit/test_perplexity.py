"""eval.perplexity against hand-computed values: a bigram 'model' whose logits are a fixed table."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from leviathan.eval.perplexity import evaluate, token_losses


class Bigram(nn.Module):
    """logits[b, t] = table[ids[b, t]]: the loss of each prediction is known in closed form."""

    def __init__(self, table):
        super().__init__()
        self.table = nn.Parameter(torch.tensor(table, dtype=torch.float32))

    def forward(self, ids, labels=None):
        return self.table[ids], None


def expected_nats(table, tokens):
    t = np.asarray(table, dtype=np.float64)
    logp = t - np.log(np.exp(t).sum(-1, keepdims=True))
    return np.array([-logp[a, b] for a, b in zip(tokens[:-1], tokens[1:])])


def test_uniform_model_gives_log_vocab():
    model = Bigram(np.zeros((4, 4)))
    out = evaluate(model, np.array([0, 1, 2, 3, 0, 1, 2]), seq_len=3, batch_size=2, num_bytes=12)
    assert out.tokens == 6
    assert out.loss == pytest.approx(math.log(4), abs=1e-6)
    assert out.ppl == pytest.approx(4.0, rel=1e-6)
    # 6 predictions x 2 bits each over 12 bytes = 1 bit per byte
    assert out.bpb == pytest.approx(1.0, rel=1e-6)


def test_hand_computed_bigram():
    # V = 2; from token 0: p(0)=e^2/(e^2+1); from token 1: uniform
    table = [[2.0, 0.0], [0.0, 0.0]]
    tokens = np.array([0, 0, 1, 1, 0])
    p00 = math.exp(2) / (math.exp(2) + 1)
    by_hand = np.array([-math.log(p00), -math.log(1 - p00), math.log(2), math.log(2)])
    np.testing.assert_allclose(expected_nats(table, tokens), by_hand, rtol=1e-12)
    for seq_len, batch_size in [(1, 1), (2, 1), (3, 2), (4, 8), (100, 3)]:  # remainder windows, batching
        got = token_losses(Bigram(table), tokens, seq_len, batch_size)
        np.testing.assert_allclose(got, by_hand, rtol=1e-6)
    out = evaluate(Bigram(table), tokens, 2, 2, num_bytes=10)
    assert out.loss == pytest.approx(by_hand.mean(), rel=1e-6)
    assert out.ppl == pytest.approx(math.exp(by_hand.mean()), rel=1e-6)
    assert out.bpb == pytest.approx(by_hand.sum() / math.log(2) / 10, rel=1e-6)


def test_order_and_window_independence_random():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(7, 7))
    tokens = rng.integers(0, 7, size=53)
    ref = expected_nats(table, tokens)
    for seq_len, bs in [(5, 3), (52, 1), (8, 100)]:
        np.testing.assert_allclose(token_losses(Bigram(table), tokens, seq_len, bs), ref, rtol=1e-5)


def test_no_bytes_and_restores_training_mode():
    model = Bigram(np.zeros((3, 3))).train()
    out = evaluate(model, np.array([0, 1, 2]), 4, 1)
    assert out.bpb is None and model.training
    with pytest.raises(ValueError):
        token_losses(model, np.array([1]), 4, 1)


def test_causal_lm_context_is_windowed():
    """With a real transformer, a token's loss depends only on its own window's earlier tokens."""
    from leviathan import CausalLM
    from leviathan.presets import preset

    torch.manual_seed(0)
    model = CausalLM(preset("cpu-tiny", vocab_size=50, num_hidden_layers=1))
    tokens = np.random.default_rng(1).integers(0, 50, size=41)
    got = token_losses(model, tokens, seq_len=8, batch_size=3)
    # window 2 covers inputs tokens[16:24] -> targets tokens[17:25]
    x = torch.from_numpy(tokens[16:25].astype(np.int64))[None]
    _, loss = model(x[:, :-1], labels=x[:, 1:])
    assert got[16:24].mean() == pytest.approx(loss.item(), rel=1e-5)


class Counting(Bigram):
    """A Bigram that counts its forwards (FSDP's collectives need the same count on every rank)."""

    def __init__(self, table):
        super().__init__(table)
        self.calls = 0

    def forward(self, ids, labels=None):
        self.calls += 1
        return super().forward(ids, labels)


@pytest.mark.parametrize("world", [2, 3, 7])
def test_shards_sum_to_the_one_process_losses(world):
    """Under torchrun each rank scores every world-th batch; the ranks' arrays sum to one process's, bit for
    bit, and with ``even`` every rank runs the same number of forwards (here 4 full batches and a remainder)."""
    rng = np.random.default_rng(1)
    table = rng.normal(size=(7, 7))
    tokens = rng.integers(0, 7, size=5 * 2 * 4 + 3 + 1)  # 43 predictions: 4 batches of 2 windows of 5, then 3
    whole = token_losses(Bigram(table), tokens, 5, 2)
    parts, calls = [], []
    for rank in range(world):
        model = Counting(table)
        parts.append(token_losses(model, tokens, 5, 2, shard=(rank, world), even=True))
        calls.append(model.calls)
    assert np.array_equal(np.sum(parts, axis=0), whole)
    assert all(np.count_nonzero(p) > 0 for p in parts[:5])  # 5 batches: ranks past the fifth score none
    assert calls == [-(-5 // world)] * world
    uneven = Counting(table)
    token_losses(uneven, tokens, 5, 2, shard=(world - 1, world))
    assert uneven.calls == len(range(world - 1, 5, world))  # without ``even``: only its own batches
