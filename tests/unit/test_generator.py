"""The Leviathan generator (docs/DESIGN.md §2): fast path vs the literal formula, gradients, test vectors, memory;
the fused CPU kernel vs the eager torch path, its build fallback, torch.compile.

Tolerances are relative to the largest magnitude of the compared tensor (the product over d_s seed
coordinates amplifies fp32 rounding, so element-wise relative error is meaningless for entries near 0).
"""

from __future__ import annotations

import math

import pytest
import torch
from torch.func import functional_call

import leviathan.model.spline_op as spline_op_module
from leviathan.model import spline_kernel
from leviathan.model.generator import LeviathanGenerator
from leviathan.model.spline_op import spline_product
from leviathan.model.reference import reference_embed, reference_from_module

pytestmark = pytest.mark.usefixtures("single_thread")

PARAM_NAMES = ("codebooks", "proj", "ln_weight", "ln_bias", "spline_coeff", "out")

SMALL = dict(vocab_size=100, hidden_size=16, seed_dim=8, modes=2, knots=8, rank=4)  # b = 5, capacity 125
PAPER_SHAPE = dict(vocab_size=1000, hidden_size=8, seed_dim=128, modes=8, knots=32, rank=64)  # b = 10
TINY = dict(vocab_size=30, hidden_size=3, seed_dim=3, modes=2, knots=5, rank=2)  # b = 4, capacity 64


def scaled_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """max |actual - expected| / max |expected| in float64."""
    actual, expected = actual.detach().double(), expected.detach().double()
    return float((actual - expected).abs().max() / expected.abs().max().clamp_min(1e-300))


def make_generator(shape: dict, dtype=torch.float32, degree: int = 2, seed: int = 0) -> LeviathanGenerator:
    """A generator whose every parameter is generic (non-trivial LN affine, spread-out seeds), so a swapped
    or mis-indexed parameter cannot go unnoticed."""
    torch.manual_seed(seed)
    g = LeviathanGenerator(degree=degree, **shape)
    with torch.no_grad():
        g.codebooks.normal_(0.0, 1.0)
        g.ln_weight.normal_(1.0, 0.3)
        g.ln_bias.normal_(0.0, 0.3)
    return g.to(dtype)


def forward_and_grads(g: LeviathanGenerator, ids: torch.Tensor, weight: torch.Tensor, reference: bool):
    g.zero_grad(set_to_none=True)
    y = reference_from_module(g, ids) if reference else g(ids)
    (y * weight).sum().backward()
    return y.detach(), {n: getattr(g, n).grad.detach().clone() for n in PARAM_NAMES}


def ids_with_duplicates(capacity: int, shape=(3, 5)) -> torch.Tensor:
    ids = torch.randint(0, capacity, shape)
    ids[1, :3] = ids[0, :3]  # repeats across rows
    ids[-1, -1] = ids[-1, 0]  # and within a row
    ids[0, 0] = capacity - 1  # the last addressable id (>= vocab_size)
    return ids


# ---------------------------------------------------------------------------------------------
# fast path == literal formula


@pytest.mark.parametrize("shape", [SMALL, PAPER_SHAPE], ids=["small", "paper-shape"])
def test_fast_matches_reference_forward_and_every_gradient_fp32(shape):
    g = make_generator(shape)
    ids = ids_with_duplicates(g.capacity, (2, 6) if shape is PAPER_SHAPE else (3, 5))
    assert ids.unique().numel() < ids.numel()
    weight = torch.randn(*ids.shape, g.hidden_size)
    y_fast, g_fast = forward_and_grads(g, ids, weight, reference=False)
    y_ref, g_ref = forward_and_grads(g, ids, weight, reference=True)
    # the truth: the literal formula in float64 on the same (fp32-representable) parameters
    g64 = make_generator(shape, torch.float64)
    g64.load_state_dict({k: v.double() for k, v in g.state_dict().items()})
    y_true, g_true = forward_and_grads(g64, ids, weight.double(), reference=True)

    assert y_fast.shape == (*ids.shape, g.hidden_size)
    assert scaled_error(y_fast, y_ref) < 1e-5
    assert scaled_error(y_fast, y_true) < 1e-5
    # gradients: both fp32 paths sit ~2e-6..7e-6 from the float64 truth at the paper shape (measured)
    for name in PARAM_NAMES:
        assert g_fast[name].shape == getattr(g, name).shape
        assert g_ref[name].abs().max() > 0, name  # the test would be vacuous otherwise
        assert scaled_error(g_fast[name], g_true[name]) < 1.5e-5, name
        assert scaled_error(g_fast[name], g_ref[name]) < 2e-5, name


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_fast_matches_reference_float64_all_degrees(degree):
    g = make_generator(SMALL, torch.float64, degree=degree)
    ids = ids_with_duplicates(g.capacity)
    weight = torch.randn(*ids.shape, g.hidden_size, dtype=torch.float64)
    y_fast, g_fast = forward_and_grads(g, ids, weight, reference=False)
    y_ref, g_ref = forward_and_grads(g, ids, weight, reference=True)
    assert scaled_error(y_fast, y_ref) < 1e-12
    for name in PARAM_NAMES:
        assert scaled_error(g_fast[name], g_ref[name]) < 1e-11, name


def test_exclusive_product_gradient_is_exact_when_a_factor_is_zero():
    """phi = 0 for one (mode, coordinate, rank) entry: dP/dphi there is the product of the others, which a
    P / phi shortcut would get wrong (0/0). Compare with autograd through the literal formula."""
    g = make_generator(SMALL, torch.float64)
    with torch.no_grad():
        g.spline_coeff[0, 3, :, 1] = 0.0  # phi_{0,3,1} = 0 for every u
    ids = torch.tensor([0, 7, 7, 99, 124])
    weight = torch.randn(5, g.hidden_size, dtype=torch.float64)
    _, g_fast = forward_and_grads(g, ids, weight, reference=False)
    _, g_ref = forward_and_grads(g, ids, weight, reference=True)
    assert g_ref["spline_coeff"][0, 3, :, 1].abs().max() > 0
    for name in PARAM_NAMES:
        assert torch.isfinite(g_fast[name]).all(), name
        assert scaled_error(g_fast[name], g_ref[name]) < 1e-12, name


# ---------------------------------------------------------------------------------------------
# gradcheck (float64)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_gradcheck_through_module_parameters(degree):
    g = make_generator(TINY, torch.float64, degree=degree)
    ids = torch.tensor([[0, 5, 5], [29, 63, 0]])
    params = tuple(getattr(g, n).detach().clone().requires_grad_(True) for n in PARAM_NAMES)

    def f(*tensors):
        return functional_call(g, dict(zip(PARAM_NAMES, tensors)), (ids,))

    assert torch.autograd.gradcheck(f, params, eps=1e-6, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_gradcheck_spline_product(degree):
    U, M, d_s, kappa, r = 3, 2, 4, 6, 3
    u = (torch.rand(U, M, d_s, dtype=torch.float64) * 0.98 + 0.01).requires_grad_(True)
    S = (1 + 0.3 * torch.randn(M, d_s, kappa, r, dtype=torch.float64)).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda u_, S_: spline_product(u_, S_, degree), (u, S), eps=1e-6, atol=1e-8,
                                    rtol=1e-6)


def test_spline_product_matches_literal_contraction():
    U, M, d_s, kappa, r = 4, 3, 5, 7, 2
    u = torch.rand(U, M, d_s, dtype=torch.float64)
    S = 1 + 0.3 * torch.randn(M, d_s, kappa, r, dtype=torch.float64)
    from leviathan.model.bspline import dense_basis

    phi = torch.einsum("umdg,mdgr->umdr", dense_basis(u, kappa, 2), S)
    torch.testing.assert_close(spline_product(u, S, 2), phi.prod(2), rtol=1e-13, atol=0)


# ---------------------------------------------------------------------------------------------
# chunking, deduplication, bake, spare ids


def test_chunked_kernel_gives_the_same_result(monkeypatch):
    g = make_generator(SMALL)
    ids = torch.arange(0, 125, 3)  # 42 distinct ids
    weight = torch.randn(ids.shape[0], g.hidden_size)
    y_one, g_one = forward_and_grads(g, ids, weight, reference=False)

    per_id = g.modes * g.seed_dim * (g.degree + 1) * g.rank
    monkeypatch.setattr(spline_op_module, "CHUNK_ELEMENTS", 5 * per_id)  # 5 ids per chunk
    calls = []
    original = spline_op_module._SplineProduct._chunk

    def counting_chunk(u, S, degree):
        calls.append(u.shape[0])
        return original(u, S, degree)

    monkeypatch.setattr(spline_op_module._SplineProduct, "_chunk", staticmethod(counting_chunk))
    y_many, g_many = forward_and_grads(g, ids, weight, reference=False)
    assert len(calls) == 2 * math.ceil(42 / 5)  # forward and backward each ran 9 chunks
    assert max(calls) == 5 and sum(calls) == 2 * 42
    torch.testing.assert_close(y_many, y_one, rtol=1e-6, atol=1e-7)
    for name in PARAM_NAMES:
        torch.testing.assert_close(g_many[name], g_one[name], rtol=1e-5, atol=1e-6 * g_one[name].abs().max().item())


def test_the_eager_path_with_a_gpus_chunk_and_block_sizes_gives_the_same_result(monkeypatch):
    """Off the CPU the eager spline path takes launch-sized chunks and coordinate blocks (``spline_op._budget``);
    run here with those sizes (and with blocks of 3 coordinates, so the walk over blocks has a ragged end), it
    computes what the CPU's sizes compute."""
    monkeypatch.setenv("LEVIATHAN_SPLINE_KERNEL", "eager")
    g = make_generator(SMALL)
    ids = torch.arange(0, 125, 2)  # 63 distinct ids
    weight = torch.randn(ids.shape[0], g.hidden_size)
    y_cpu, g_cpu = forward_and_grads(g, ids, weight, reference=False)
    for block in (spline_op_module.DEVICE_BLOCK_ELEMENTS, 3 * g.modes * ids.shape[0] * g.rank):
        monkeypatch.setattr(spline_op_module, "_budget",
                            lambda device, block=block: (spline_op_module.DEVICE_CHUNK_ELEMENTS, block))
        y_dev, g_dev = forward_and_grads(g, ids, weight, reference=False)
        torch.testing.assert_close(y_dev, y_cpu, rtol=1e-6, atol=1e-7)
        for name in PARAM_NAMES:
            torch.testing.assert_close(g_dev[name], g_cpu[name], rtol=1e-5, atol=1e-6 * g_cpu[name].abs().max().item())


def test_step_3_in_plain_ops_equals_the_cpu_function():
    """``modes_u`` takes ``_ModeActivation`` in eager CPU code and plain ops elsewhere (on CUDA under torch.compile
    the Function's backward gave h a zero gradient); the plain ops are the same function with the same gradients.
    Compiled here (aot_eager: no code generation) so that the plain ops run on this CPU."""
    g = make_generator(SMALL)
    ids = torch.arange(0, 125, 2)
    weight = torch.randn(ids.shape[0], g.hidden_size)
    y_fn, g_fn = forward_and_grads(g, ids, weight, reference=False)
    torch._dynamo.reset()
    compiled = torch.compile(g.embed_unique, backend="aot_eager")
    g.zero_grad(set_to_none=True)
    y_ops = compiled(ids)
    (y_ops * weight).sum().backward()
    torch.testing.assert_close(y_ops.detach(), y_fn, rtol=1e-5, atol=1e-6)
    for name in PARAM_NAMES:
        grad = getattr(g, name).grad
        assert grad is not None and grad.abs().max() > 0, name
        torch.testing.assert_close(grad, g_fn[name], rtol=1e-4, atol=1e-5 * g_fn[name].abs().max().item())


def test_forward_computes_each_distinct_id_once(monkeypatch):
    g = make_generator(SMALL)
    seen = []
    original = LeviathanGenerator._embed  # embed_unique's body, which forward calls with ids it checked

    def spy(self, ids):
        seen.append(ids.clone())
        return original(self, ids)

    monkeypatch.setattr(LeviathanGenerator, "_embed", spy)
    ids = torch.tensor([[4, 4, 9, 4], [9, 1, 1, 4]])
    y = g(ids)
    assert len(seen) == 1 and sorted(seen[0].tolist()) == [1, 4, 9]
    torch.testing.assert_close(y[0, 0], y[1, 3], rtol=0, atol=0)


def test_bake_equals_forward_on_arange():
    g = make_generator(SMALL)
    table = g.bake(batch_size=7)  # several batches
    assert table.shape == (g.vocab_size, g.hidden_size) and not table.requires_grad
    torch.testing.assert_close(table, g(torch.arange(g.vocab_size)).detach(), rtol=1e-6, atol=1e-7)
    full = g.bake(num_rows=g.capacity)
    torch.testing.assert_close(full[: g.vocab_size], table, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="125"):
        g.bake(num_rows=g.capacity + 1)


def test_spare_ids_between_vocab_size_and_capacity_work():
    g = make_generator(SMALL, torch.float64)
    assert (g.vocab_size, g.base, g.capacity) == (100, 5, 125)
    spare = torch.arange(g.vocab_size, g.capacity)
    y = g(spare)
    torch.testing.assert_close(y, reference_from_module(g, spare), rtol=1e-12, atol=1e-14)
    assert torch.isfinite(y).all()
    with pytest.raises(ValueError, match=r"token id 125 .*\[0, 125\)"):
        g(torch.tensor([3, 125]))
    with pytest.raises(ValueError, match="token id -1"):
        g(torch.tensor([-1, 3]))


def test_scalar_and_empty_inputs():
    g = make_generator(SMALL)
    assert g(torch.tensor(7)).shape == (g.hidden_size,)
    assert g(torch.zeros(0, 3, dtype=torch.long)).shape == (0, 3, g.hidden_size)


def test_explicit_base_is_respected_and_too_small_base_rejected():
    g = LeviathanGenerator(100, 4, seed_dim=4, modes=1, knots=4, rank=2, base=9)  # 9 the largest: 10^2 >= 100
    assert g.base == 9 and g.codebooks.shape == (3, 9, 4) and g.capacity == 729
    with pytest.raises(ValueError, match="cannot address"):
        LeviathanGenerator(1001, 4, seed_dim=4, modes=1, knots=4, rank=2, base=10)


# ---------------------------------------------------------------------------------------------
# the shared test vectors (independent float64 computation of docs/DESIGN.md §2)


def load_vectors(path):
    from safetensors import safe_open
    from safetensors.torch import load_file

    tensors = load_file(str(path))
    with safe_open(str(path), "pt") as f:
        meta = f.metadata()
    return tensors, meta


@pytest.mark.parametrize("name", ["lev_small", "lev_paper_o200k"])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-9), (torch.float32, 1e-5)], ids=["fp64", "fp32"])
@pytest.mark.parametrize("path_kind", ["fast", "reference"])
def test_reproduces_shared_test_vectors(testvectors_dir, name, dtype, tol, path_kind):
    file = testvectors_dir / f"{name}.safetensors"
    if not file.is_file():
        pytest.skip(f"{file} is absent")
    t, meta = load_vectors(file)
    g = LeviathanGenerator(int(meta["vocab_size"]), int(meta["hidden_size"]), k=int(meta["k"]),
                           seed_dim=int(meta["d_seed"]), modes=int(meta["modes"]), knots=int(meta["knots"]),
                           rank=int(meta["rank"]), degree=2, ln_eps=float(meta["ln_eps"]), base=int(meta["base"]))
    assert g.base == int(meta["base"])
    with torch.no_grad():
        for n in PARAM_NAMES:
            assert getattr(g, n).shape == t[n].shape, n
            getattr(g, n).copy_(t[n])
    g = g.to(dtype)
    ids, expected = t["ids"], t["embeddings"]
    if path_kind == "reference" and name == "lev_paper_o200k":
        ids, expected = ids[:4], expected[:4]  # the literal formula is slow: 32 ids incl. 0, V-1, b^k-1
    with torch.no_grad():
        y = g(ids) if path_kind == "fast" else reference_from_module(g, ids)
    assert y.dtype == dtype and y.shape == expected.shape
    assert scaled_error(y, expected) < tol


# ---------------------------------------------------------------------------------------------
# memory kept for backward, initialisation


def saved_bytes_per_distinct_id(g: LeviathanGenerator, ids: torch.Tensor, fn) -> float:
    """Unique storage bytes of the non-parameter tensors autograd saves for backward, per distinct id."""
    param_storages = {p.untyped_storage().data_ptr() for p in g.parameters()}
    storages: dict[int, int] = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in param_storages:
            storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn(g, ids)
    assert y.requires_grad
    return sum(storages.values()) / ids.unique().numel()


def test_backward_memory_per_distinct_id_at_paper_defaults():
    g = LeviathanGenerator(200_019, 512, k=3, seed_dim=128, modes=8, knots=32, rank=64)
    ids = torch.randperm(g.capacity)[:512]
    ids = torch.cat([ids, ids[:100]])  # duplicates cost nothing extra on the generator side
    per_id = saved_bytes_per_distinct_id(g, ids, lambda m, i: m(i))
    # z (d_s) + W z (M d_s) + LN stats (2M) + u (M d_s) + P (M r) floats = 10.6 KiB
    assert per_id <= 16 * 1024, f"{per_id / 1024:.1f} KiB per distinct id"
    assert per_id >= 8 * 1024, f"{per_id / 1024:.1f} KiB: the measurement missed saved tensors"

    # the same measurement sees the literal formula's (ids, M, d_s, kappa) basis: it cannot be blind
    literal = saved_bytes_per_distinct_id(g, ids[:4], reference_from_module)
    assert literal > 10 * per_id


def test_reference_initialisation_statistics():
    M = 8
    g = LeviathanGenerator(200_019, 512, k=3, seed_dim=128, modes=M, knots=32, rank=64)
    assert g.codebooks.shape == (3, 59, 128)
    for tensor, mean, std in [
        (g.codebooks, 0.0, 0.02),
        (g.proj, 0.0, 0.02),
        (g.spline_coeff, 1.0, 0.1),
        (g.out, 0.0, 0.02 / math.sqrt(M)),
    ]:
        assert abs(tensor.mean().item() - mean) < 0.05 * std
        assert abs(tensor.std().item() - std) < 0.05 * std
    assert torch.equal(g.ln_weight, torch.ones(M, 128))
    assert torch.equal(g.ln_bias, torch.zeros(M, 128))
    # every phi starts near 1, so the product over 128 coordinates neither vanishes nor explodes
    y = g(torch.tensor([0, 1000, 200_018]))
    assert torch.isfinite(y).all() and 0 < y.std() < 1


def test_reference_embed_rejects_out_of_range_ids():
    g = make_generator(SMALL)
    with pytest.raises(ValueError, match="125"):
        reference_embed(torch.tensor([125]), g.codebooks, g.proj, g.ln_weight, g.ln_bias, g.spline_coeff, g.out)


def test_non_finite_weights_give_nan_not_an_index_error():
    """A diverged generator must yield NaN embeddings/gradients (so training reports the loss), not crash."""
    gen = LeviathanGenerator(1000, 32, seed_dim=8, modes=2, knots=8, rank=4)
    with torch.no_grad():
        gen.proj[0, 0, 0] = float("nan")
    emb = gen(torch.tensor([1, 2, 3, 2]))
    assert torch.isnan(emb).any()
    emb.sum().backward()
    assert torch.isnan(gen.spline_coeff.grad).all()


# ---------------------------------------------------------------------------------------------
# the fused CPU kernel vs the eager torch path; build fallback; torch.compile


def fused_available() -> bool:
    return spline_kernel.mode() != "eager" and spline_kernel.library() is not None


def spline_and_grads(u, S, degree, mode, monkeypatch, grad=None):
    """P and (grad_u, grad_S) of spline_product with the kernel selection LEVIATHAN_SPLINE_KERNEL=mode."""
    monkeypatch.setenv(spline_kernel.ENV_MODE, mode)
    u, S = u.detach().clone().requires_grad_(True), S.detach().clone().requires_grad_(True)
    P = spline_product(u, S, degree)
    grad = torch.randn_like(P) if grad is None else grad
    gu, gS = torch.autograd.grad(P, (u, S), grad)
    return P.detach(), gu, gS, grad


def test_fused_kernel_is_built_and_used_on_cpu():
    """On a machine with a C++ compiler the fast path must not silently fall back to the eager one."""
    if spline_kernel.mode() == "eager" or spline_kernel._compiler() is None:
        pytest.skip("no C++ compiler, or LEVIATHAN_SPLINE_KERNEL=eager")
    assert spline_kernel.library() is not None, spline_kernel._state["error"]
    u, S = torch.rand(2, 3, 4), torch.rand(3, 4, 5, 2)
    assert spline_kernel.usable(u, S)
    assert not spline_kernel.usable(u.half(), S.half()) and not spline_kernel.usable(u.double(), S)


@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 2e-5)], ids=["fp64", "fp32"])
def test_fused_kernel_matches_eager_path(degree, dtype, tol, monkeypatch):
    """Edge windows (u at and near 0 and 1), an r that is not a multiple of the vector width, several tiles of
    ids, and (id, mode) rows whose P is exactly 0 (the exact exclusive-product pass)."""
    if not fused_available():
        pytest.skip("fused kernel unavailable")
    U, M, d_s, kappa, r = 1100, 2, 5, 7, 67  # tiles of ~700 fp32 / ~350 fp64 ids: several
    u = torch.rand(U, M, d_s, dtype=dtype)
    u[0], u[1], u[2, :, :2] = 0.0, 1.0, 1e-7
    u[3, :, 0] = 1 - 1e-7
    S = 1 + 0.3 * torch.randn(M, d_s, kappa, r, dtype=dtype)
    S[1, 2, :, 5] = 0.0  # phi = 0 in one column of mode 1: every id's P[:, 1] has a zero entry
    P_f, gu_f, gS_f, grad = spline_and_grads(u, S, degree, "fused", monkeypatch)
    P_e, gu_e, gS_e, _ = spline_and_grads(u, S, degree, "eager", monkeypatch, grad)
    assert (P_e[:, 1, 5] == 0).all() and gS_e[1, 2, :, 5].abs().max() > 0
    assert scaled_error(P_f, P_e) < tol
    assert scaled_error(gu_f, gu_e) < tol
    assert scaled_error(gS_f, gS_e) < tol


def test_fused_kernel_results_do_not_depend_on_threads(monkeypatch):
    if not fused_available():
        pytest.skip("fused kernel unavailable")
    U, M, d_s, kappa, r = 300, 4, 16, 8, 64  # U M d_s r above spline_kernel.PARALLEL_MIN_WORK: threads are used
    assert U * M * d_s * r >= spline_kernel.PARALLEL_MIN_WORK
    u, S = torch.rand(U, M, d_s), 1 + 0.1 * torch.randn(M, d_s, kappa, r)
    one = spline_and_grads(u, S, 2, "fused", monkeypatch, torch.ones(U, M, r))
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        three = spline_and_grads(u, S, 2, "fused", monkeypatch, torch.ones(U, M, r))
    finally:
        torch.set_num_threads(before)
    for a, b in zip(one, three):
        assert torch.equal(a, b)


def test_spline_product_accepts_strided_and_mixed_dtype_inputs():
    u = torch.rand(6, 3, 4, dtype=torch.float64).transpose(0, 1).contiguous().transpose(0, 1)  # not contiguous
    S = 1 + 0.3 * torch.randn(3, 4, 5, 2, dtype=torch.float64)
    assert not u.is_contiguous()
    expected = spline_product(u.contiguous(), S, 2)
    torch.testing.assert_close(spline_product(u, S, 2), expected, rtol=0, atol=0)
    mixed = spline_product(u.float(), S, 2)  # promoted to float64
    assert mixed.dtype == torch.float64
    torch.testing.assert_close(mixed, spline_product(u.float().double(), S, 2), rtol=0, atol=0)


def test_kernel_build_failure_falls_back_to_eager_with_one_warning(monkeypatch, tmp_path):
    monkeypatch.setattr(spline_kernel, "_state", {"lib": None, "tried": False, "error": None})
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(spline_kernel, "_compiler", lambda: str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv(spline_kernel.ENV_MODE, "auto")
    u, S = torch.rand(5, 2, 3, dtype=torch.float64), 1 + 0.3 * torch.randn(2, 3, 4, 2, dtype=torch.float64)
    with pytest.warns(RuntimeWarning, match="eager torch path") as record:
        P1 = spline_product(u, S, 2)
        P2 = spline_product(u, S, 2)
    assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1
    torch.testing.assert_close(P1, P2, rtol=0, atol=0)
    assert spline_kernel.library() is None and "no-such-compiler" in spline_kernel._state["error"]
    # LEVIATHAN_SPLINE_KERNEL=fused makes the same failure an error instead
    monkeypatch.setattr(spline_kernel, "_state", {"lib": None, "tried": False, "error": None})
    monkeypatch.setenv(spline_kernel.ENV_MODE, "fused")
    with pytest.raises(RuntimeError, match="fused spline kernel is unavailable"):
        spline_product(u, S, 2)


def compiled_matches_eager(model, loss_compiled, loss_eager, tol=1e-5):
    """The compiled loss and every gradient of ``model``'s parameters equal eager's (fp32 tolerance)."""
    model.zero_grad(set_to_none=True)
    loss_c = loss_compiled()
    loss_c.backward()
    grads_c = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    loss_e = loss_eager()
    loss_e.backward()
    assert abs(loss_c.item() - loss_e.item()) <= tol * max(1.0, abs(loss_e.item()))
    names = {n for n, p in model.named_parameters() if p.grad is not None}
    assert grads_c.keys() == names and "spline_coeff" in " ".join(names)
    for n, p in model.named_parameters():
        if p.grad is not None:
            assert scaled_error(grads_c[n], p.grad) < tol, n


def test_torch_compile_generator_matches_eager():
    """The spline operator is opaque to dynamo: embed_unique compiles as one graph (fullgraph: no break), and
    the compiled generator (range check and unique stay eager) matches eager for two batches with different
    numbers of distinct ids. aot_eager: dynamo + fake tensors + AOTAutograd, without inductor's C++ build."""
    g = make_generator(SMALL)
    torch._dynamo.reset()
    uniq = torch.tensor([0, 3, 17, 99, 124])
    whole = torch.compile(g.embed_unique, backend="aot_eager", fullgraph=True)
    compiled_matches_eager(g, lambda: whole(uniq).square().sum(), lambda: g.embed_unique(uniq).square().sum())

    cg = torch.compile(g, backend="aot_eager")
    for shape in [(3, 5), (4, 9)]:
        ids = ids_with_duplicates(g.capacity, shape)
        weight = torch.randn(*shape, g.hidden_size)
        compiled_matches_eager(g, lambda: (cg(ids) * weight).sum(), lambda: (g(ids) * weight).sum())


def test_torch_compile_causal_lm_with_generator_matches_eager():
    from leviathan.model.config import ModelConfig
    from leviathan.model.llama import CausalLM

    cfg = ModelConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                      max_position_embeddings=16, embedding="leviathan", generator_seed_dim=8, generator_modes=2,
                      generator_knots=8, generator_rank=4)
    model = CausalLM(cfg)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="aot_eager")
    for seed in (0, 1):  # two batches: different numbers of distinct ids (a dynamic size after one recompile)
        ids = torch.randint(0, cfg.vocab_size, (2, 9), generator=torch.Generator().manual_seed(seed))
        x, y = ids[:, :-1], ids[:, 1:]
        compiled_matches_eager(model, lambda: compiled(x, labels=y)[1], lambda: model(x, labels=y)[1])


@pytest.mark.slow
def test_torch_compile_inductor_generator_matches_eager():
    """The default backend (inductor generates and builds C++ for the surrounding ops: about a minute here)."""
    g = make_generator(SMALL)
    torch._dynamo.reset()
    cg = torch.compile(g)
    for shape in [(3, 5), (4, 9)]:
        ids = ids_with_duplicates(g.capacity, shape)
        weight = torch.randn(*shape, g.hidden_size)
        compiled_matches_eager(g, lambda: (cg(ids) * weight).sum(), lambda: (g(ids) * weight).sum())
