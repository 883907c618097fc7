"""Property-based tests (hypothesis): digits, basis, generator batching invariance, config round trips,
data loader resume."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leviathan.config import apply_overrides, from_dict, to_dict
from leviathan.data.loader import SHUFFLE_MODES, BatchLoader
from leviathan.model import bspline
from leviathan.model.config import EMBEDDING_KINDS, ModelConfig, min_base
from leviathan.model.digits import check_ids, from_digits, to_digits
from leviathan.model.generator import LeviathanGenerator
from leviathan.model.generator_size import largest_base

pytestmark = pytest.mark.usefixtures("single_thread")

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONFIGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------
# digits


@FAST
@given(vocab_size=st.integers(1, 10**9), k=st.integers(1, 6), data=st.data())
def test_digits_round_trip_and_range(vocab_size, k, data):
    b = min_base(vocab_size, k)
    assert b >= 2 and b**k >= vocab_size
    assert b == 2 or (b - 1) ** k < vocab_size  # smallest such base
    ids = data.draw(st.lists(st.integers(0, b**k - 1), min_size=1, max_size=20))
    t = torch.tensor(ids)
    digits = to_digits(t, b, k)
    assert digits.shape == (len(ids), k)
    assert int(digits.min()) >= 0 and int(digits.max()) < b
    assert from_digits(digits, b).tolist() == ids
    # most significant first: the value is the polynomial in b with the first digit highest
    for i, row in zip(ids, digits.tolist()):
        value = 0
        for d in row:
            value = value * b + d
        assert value == i


@FAST
@given(base=st.integers(2, 300), k=st.integers(1, 4), offset=st.integers(0, 10**6))
def test_out_of_range_ids_always_raise(base, k, offset):
    capacity = base**k
    for bad in (capacity + offset, -1 - offset):
        with pytest.raises(ValueError, match=rf"token id {bad} .*\[0, {capacity}\)"):
            check_ids(torch.tensor([0, bad]), base, k)


# ---------------------------------------------------------------------------------------------
# basis


@FAST
@given(num_knots=st.integers(2, 40), degree=st.sampled_from([1, 2, 3]),
       u=st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30))
def test_basis_partition_of_unity_and_local_support(num_knots, degree, u):
    x = torch.tensor(u, dtype=torch.float64)
    B = bspline.dense_basis(x, num_knots, degree)
    assert (B >= 0).all()
    torch.testing.assert_close(B.sum(-1), torch.ones_like(x), rtol=0, atol=1e-12)
    nz = B > 0
    assert int(nz.sum(-1).max()) <= degree + 1
    # the support sits within (degree + 1) / 2 knot spacings of u
    s = x.unsqueeze(-1) * (num_knots - 1)
    distance = (s - torch.arange(num_knots, dtype=torch.float64)).abs()
    assert (distance[nz] < (degree + 1) / 2).all()
    idx, w, _ = bspline.window(x, num_knots, degree)
    dense = torch.zeros_like(B).scatter_add_(1, idx, w)
    torch.testing.assert_close(dense, B, rtol=0, atol=1e-13)


# ---------------------------------------------------------------------------------------------
# generator: batching invariance


@functools.lru_cache(maxsize=None)
def small_generator() -> LeviathanGenerator:
    """float64 so that "equal" can be tight; generic parameters (see test_generator.make_generator)."""
    gen = torch.Generator().manual_seed(1)
    g = LeviathanGenerator(100, 6, k=3, seed_dim=6, modes=2, knots=7, rank=3).double()  # b = 5, capacity 125
    with torch.no_grad():
        for p in g.parameters():
            p.copy_(p + 0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return g.requires_grad_(False)


@functools.lru_cache(maxsize=None)
def embedding_alone(i: int) -> torch.Tensor:
    return small_generator()(torch.tensor([i]))[0]


@FAST
@given(ids=st.lists(st.integers(0, 124), min_size=1, max_size=24), data=st.data())
def test_generator_rows_do_not_depend_on_the_batch(ids, data):
    g = small_generator()
    batch = torch.tensor(ids)
    out = g(batch)
    assert out.shape == (len(ids), 6)
    for row, i in zip(out, ids):
        torch.testing.assert_close(row, embedding_alone(i), rtol=1e-12, atol=1e-13)
    perm = torch.tensor(data.draw(st.permutations(range(len(ids)))))
    torch.testing.assert_close(g(batch[perm]), out[perm], rtol=1e-12, atol=1e-13)
    doubled = torch.cat([batch, batch]).view(2, -1)
    torch.testing.assert_close(g(doubled), out.expand(2, -1, -1), rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------------------------
# config round trips


@st.composite
def model_configs(draw) -> ModelConfig:
    heads = draw(st.integers(1, 8))
    kv = draw(st.sampled_from([d for d in range(1, heads + 1) if heads % d == 0]))
    head_dim = 2 * draw(st.integers(1, 16))
    explicit_head_dim = draw(st.booleans())
    hidden = heads * head_dim if not explicit_head_dim else draw(st.integers(1, 256))
    embedding = draw(st.sampled_from(EMBEDDING_KINDS))
    vocab_size = draw(st.integers(1, 300_000))
    k = draw(st.integers(1, 4))
    top = min(min_base(vocab_size, k) + 50, largest_base(vocab_size, k))  # past the largest: unused digits (round 27)
    base = draw(st.one_of(st.none(), st.integers(min_base(vocab_size, k), top)))
    return ModelConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=draw(st.one_of(st.none(), st.integers(1, 4096))),
        num_hidden_layers=draw(st.integers(1, 64)),
        num_attention_heads=heads,
        num_key_value_heads=draw(st.sampled_from([None, kv])),
        head_dim=head_dim if explicit_head_dim else draw(st.sampled_from([None, head_dim])),
        max_position_embeddings=draw(st.integers(1, 8192)),
        rope_theta=draw(st.floats(1.0, 1e7, allow_nan=False)),
        rms_norm_eps=draw(st.floats(1e-12, 1e-2, allow_nan=False)),
        initializer_range=draw(st.floats(1e-6, 1.0, allow_nan=False)),
        embedding=embedding,
        embedding_rank=draw(st.integers(1, max(min(vocab_size, hidden), 128))),  # past both: refused (round 24, W21)
        generator_k=k,
        generator_seed_dim=draw(st.integers(1, 256)),
        generator_modes=(modes := draw(st.integers(1, 16))),
        generator_knots=draw(st.integers(2, 64)),
        # modes x rank past max(V, 512) is refused (round 28, U27, U28: features the ids cannot use)
        generator_rank=draw(st.integers(1, min(128, max(vocab_size, 512) // modes))),
        generator_degree=draw(st.sampled_from([1, 2, 3])),
        generator_ln_eps=draw(st.floats(1e-12, 1e-2, allow_nan=False)),
        generator_base=base,
    )


@CONFIGS
@given(cfg=model_configs())
def test_model_config_dict_round_trip(cfg):
    data = to_dict(cfg)
    assert set(data) == {f for f in ModelConfig.__dataclass_fields__}
    assert from_dict(ModelConfig, data) == cfg
    assert from_dict(ModelConfig, yaml.safe_load(yaml.safe_dump(data))) == cfg
    assert from_dict(ModelConfig, to_dict(cfg.resolved())) == cfg.resolved()


@CONFIGS
@given(cfg=model_configs())
def test_model_config_dotted_overrides_round_trip(cfg):
    overrides = []
    for key, value in to_dict(cfg).items():
        text = "null" if value is None else repr(value) if isinstance(value, float) else str(value)
        overrides.append(f"model.{key}={text}")
    data = apply_overrides({}, overrides)
    assert from_dict(ModelConfig, data["model"], prefix="model.") == cfg


@FAST
@given(value=st.integers(-(10**6), 0), key=st.sampled_from(["hidden_size", "num_hidden_layers", "generator_rank",
                                                              "vocab_size"]))
def test_non_positive_sizes_always_rejected(value, key):
    with pytest.raises(ValueError, match=rf"model\.{key} must be a positive integer, got {value}"):
        from_dict(ModelConfig, {key: str(value)})


# ---------------------------------------------------------------------------------------------
# data loader resume


@FAST
@given(seq_len=st.integers(1, 16), extra=st.integers(0, 300), batch_size=st.integers(1, 6),
       world=st.integers(1, 3), data=st.data(), shuffle=st.sampled_from(SHUFFLE_MODES),
       shuffle_buffer=st.integers(1, 50), seed=st.integers(0, 2**32 - 1), before=st.integers(0, 25),
       after=st.integers(1, 10))
def test_loader_state_round_trip_resumes_exactly(seq_len, extra, batch_size, world, data, shuffle, shuffle_buffer,
                                                 seed, before, after):
    # at least one global batch of windows (a batch past the data is refused, round 20 M288); often several epochs
    tokens = np.arange(seq_len * batch_size * world + 1 + extra, dtype=np.int64) % 997
    rank = data.draw(st.integers(0, world - 1), label="rank")
    kw = dict(seq_len=seq_len, batch_size=batch_size, seed=seed, rank=rank, world_size=world, shuffle=shuffle,
              shuffle_buffer=shuffle_buffer)
    loader = BatchLoader(tokens, **kw)
    for _ in range(before):
        loader.next_batch()
    state = loader.state_dict()
    assert json.loads(json.dumps(state)) == state  # plain JSON: goes into state.json as is
    expected = [loader.next_batch() for _ in range(after)]
    fresh = BatchLoader(tokens, **kw)
    fresh.load_state_dict(json.loads(json.dumps(state)))
    assert fresh.state_dict() == state
    for (x, y), (fx, fy) in zip(expected, (fresh.next_batch() for _ in range(after))):
        assert torch.equal(x, fx) and torch.equal(y, fy)
