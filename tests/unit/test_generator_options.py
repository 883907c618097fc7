"""The generator's options (issue 29): table_rms init, centring, output norm, the KHRONOS form, and the input lr.

Each option is checked against the literal formula (``model.reference``, which writes every option out in its
plainest form), for bake == forward, for the start it claims (measured on the module, not assumed), for its
parameter count, and for the fused kernel carrying it. Export and adoption are in
tests/integration/test_generator_options_hf.py.
"""

from __future__ import annotations

import math

import pytest
import torch

from leviathan.config import ConfigError
from leviathan.model import spline_kernel
from leviathan.model.accounting import count_config, count_model
from leviathan.model.config import ModelConfig
from leviathan.model.embedding import TableEmbedding, build_input_embedding
from leviathan.model.generator import LeviathanGenerator, probe_ids
from leviathan.model.llama import CausalLM
from leviathan.model.reference import reference_from_module
from leviathan.run_config import OptimConfig
from leviathan.train.optim import build_optimizer, param_groups

pytestmark = pytest.mark.usefixtures("single_thread")

SMALL = dict(vocab_size=100, hidden_size=16, seed_dim=8, modes=2, knots=8, rank=4)  # b = 5, capacity 125
OPTIONS = {"reference": {}, "table_rms": dict(init="table_rms"), "center": dict(center=True),
           "norm": dict(norm=True), "khronos": dict(form="khronos"),
           "all": dict(init="table_rms", center=True, norm=True, form="khronos")}


def generic(options: dict, dtype=torch.float64, degree: int = 2, seed: int = 0) -> LeviathanGenerator:
    """A generator whose every parameter is off its init (spread seeds, knot scales and a bias that are not 0/1),
    so an option's parameter that is ignored or mis-indexed changes the output."""
    torch.manual_seed(seed)
    g = LeviathanGenerator(degree=degree, **SMALL, **options).to(dtype)
    with torch.no_grad():
        g.codebooks.normal_(0.0, 1.0)
        g.ln_weight.normal_(1.0, 0.3)
        g.ln_bias.normal_(0.0, 0.3)
        if g.knot_log_scale is not None:
            g.knot_log_scale.normal_(0.0, 0.7)  # dilations of 0.25x-4x: clamping and edge windows both occur
            g.out_bias.normal_(0.0, 0.1)
        if g.out_norm is not None:
            g.out_norm.weight.normal_(0.02, 0.01)
    return g


@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("name", list(OPTIONS))
def test_forward_and_every_gradient_match_the_literal_formula(name, degree):
    g = generic(OPTIONS[name], degree=degree)
    ids = torch.randint(0, g.capacity, (3, 7))
    ids[1, :3] = ids[0, :3]
    weight = torch.randn(3, 7, g.hidden_size, dtype=torch.float64)
    grads = {}
    for which, fn in (("fast", g), ("literal", lambda x: reference_from_module(g, x))):
        g.zero_grad(set_to_none=True)
        y = fn(ids)
        (y * weight).sum().backward()
        grads[which] = (y.detach(), {n: p.grad.clone() for n, p in g.named_parameters()})
    (y_fast, g_fast), (y_lit, g_lit) = grads["fast"], grads["literal"]
    assert torch.allclose(y_fast, y_lit, rtol=1e-10, atol=1e-12)
    assert set(g_fast) == set(g_lit)
    for n in g_fast:
        assert torch.allclose(g_fast[n], g_lit[n], rtol=1e-9, atol=1e-12), n
    if name == "khronos":
        assert g_fast["knot_log_scale"].abs().max() > 0 and g_fast["out_bias"].abs().max() > 0


def test_khronos_basis_is_unnormalised_at_the_ends():
    """Where the missing outside knots cut the basis sum below 1, the KHRONOS form and the paper's differ; in the
    interior they agree (same parameters, knot scale 1, bias 0)."""
    torch.manual_seed(0)
    paper = LeviathanGenerator(**SMALL).double()
    khronos = LeviathanGenerator(**SMALL, form="khronos").double()
    khronos.load_state_dict(paper.state_dict(), strict=False)
    u = torch.tensor([[[0.0, 0.02, 0.5, 0.6, 0.98, 1.0, 0.3, 0.7]]], dtype=torch.float64).expand(1, 2, 8)
    from leviathan.model.spline_op import spline_product
    P_paper = spline_product(*paper.spline_input(u.contiguous()), 2)
    P_khr = spline_product(*khronos.spline_input(u.contiguous()), 2)
    inner = u.clone()
    inner[..., [0, 1, 4, 5]] = 0.5  # the same point with its edge coordinates moved inside
    assert not torch.allclose(P_paper, P_khr)  # the ends differ
    assert torch.allclose(spline_product(*paper.spline_input(inner.contiguous()), 2),
                          spline_product(*khronos.spline_input(inner.contiguous()), 2), rtol=1e-12)


def test_khronos_runs_through_the_fused_kernel(monkeypatch):
    if spline_kernel.mode() == "eager" or spline_kernel.library() is None:
        pytest.skip("fused kernel unavailable")
    calls = []
    real = spline_kernel.forward
    monkeypatch.setattr(spline_kernel, "forward", lambda *a, **k: calls.append(1) or real(*a, **k))
    g = LeviathanGenerator(**SMALL, form="khronos")
    calls.clear()
    g(torch.arange(50))
    assert calls


@pytest.mark.parametrize("name", list(OPTIONS))
def test_bake_equals_forward(name):
    g = generic(OPTIONS[name], dtype=torch.float32)
    with torch.no_grad():
        assert torch.allclose(g.bake(), g(torch.arange(g.vocab_size)), rtol=1e-5, atol=1e-7)


def test_a_normalised_table_bakes_and_counts_its_gain():
    torch.manual_seed(0)
    t = TableEmbedding(50, 8, norm=True, init_gain=0.02)
    x = torch.randint(0, 50, (3, 4))
    with torch.no_grad():
        assert torch.allclose(t.bake()[x], t(x))
        rms = t(x).pow(2).mean(-1).sqrt()
    assert torch.allclose(rms, torch.full_like(rms, 0.02), rtol=1e-4)  # every row starts at the table scale


# ---- the start each option claims, measured ------------------------------------------------------------------
def start(g: LeviathanGenerator) -> tuple[float, float]:
    """(RMS per id, share of the output energy in the mean over ids), over all ids of the vocabulary."""
    with torch.no_grad():
        e = g.bake()  # (V, D)
    return e.pow(2).mean().sqrt().item(), (e.mean(0).pow(2).sum() / e.pow(2).sum(1).mean()).item()


def test_measured_start_of_each_option_at_the_papers_shapes():
    """o200k-sized vocabulary would take a minute; 20,000 ids at the paper's generator shapes (d_s 128, M 8,
    kappa 32, r 64), D 64, show the same start: the reference ~12x a 0.02 row with most energy shared."""
    shape = dict(vocab_size=20_000, hidden_size=64)
    starts = {}
    for name in ("reference", "table_rms", "center", "norm", "khronos"):
        torch.manual_seed(0)
        starts[name] = start(LeviathanGenerator(**shape, **OPTIONS[name]))
    rms, shared = starts["reference"]
    assert 0.15 < rms < 0.35 and shared > 0.35  # the reference start (docs/DESIGN.md §2)
    assert starts["table_rms"][0] == pytest.approx(0.02, rel=0.02)  # the probe is all 16,384 ids spaced evenly
    assert starts["table_rms"][1] == pytest.approx(shared, rel=1e-4)  # a scale leaves the shared share alone
    assert starts["center"][1] < 1e-3 and starts["center"][0] < rms  # the shared part is gone
    assert starts["norm"][0] == pytest.approx(0.02, rel=1e-4)
    assert starts["khronos"] == pytest.approx(starts["reference"], rel=1e-3)  # the same start but at the ends


def test_calibration_is_exact_on_the_probe_and_uses_no_randomness():
    torch.manual_seed(3)
    g = LeviathanGenerator(**SMALL, init="table_rms", center=True).double()
    after_options = torch.random.get_rng_state()
    torch.manual_seed(3)
    ref = LeviathanGenerator(**SMALL).double()
    assert torch.equal(after_options, torch.random.get_rng_state())  # the same draws as the reference, no more
    assert torch.equal(g.codebooks, ref.codebooks) and torch.equal(g.spline_coeff, ref.spline_coeff)
    with torch.no_grad():
        e = g.embed_unique(probe_ids(g.vocab_size))  # the probe: the vocabulary's ids (all 100 here)
    assert e.mean(0).abs().max() < 1e-6  # calibrated in float32 at construction
    assert e.pow(2).mean().sqrt().item() == pytest.approx(0.02, rel=1e-5)


def test_probe_ids_are_all_ids_or_an_even_spread():
    assert torch.equal(probe_ids(100), torch.arange(100))
    big = probe_ids(200_019)
    assert big.numel() == 16_384 and big[0] == 0 and big[-1] == 200_018 and (big.diff() > 0).all()


# ---- config, accounting, optimiser ----------------------------------------------------------------------------
CFG = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=32,
           generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)
MODEL_OPTIONS = [dict(embedding="leviathan"), dict(embedding="leviathan", generator_init="table_rms"),
                 dict(embedding="leviathan", generator_center=True), dict(embedding="leviathan", embedding_norm=True),
                 dict(embedding="leviathan", generator_form="khronos"), dict(embedding="dense_untied", embedding_norm=True),
                 dict(embedding="leviathan", generator_init="table_rms", generator_center=True, embedding_norm=True,
                      generator_form="khronos")]


@pytest.mark.parametrize("options", MODEL_OPTIONS, ids=lambda o: "-".join(f"{v}" for v in o.values()))
def test_analytic_counts_equal_the_built_model(options):
    cfg = ModelConfig(**CFG, **options)
    torch.manual_seed(0)
    model = CausalLM(cfg)
    assert count_config(cfg.resolved()) == count_model(model)
    base = count_config(ModelConfig(**CFG, embedding=options["embedding"]).resolved()).input
    extra = (32 if options.get("embedding_norm") else 0) + (2 * 8 + 32 if options.get("generator_form") else 0)
    assert count_model(model).input == base + extra


@pytest.mark.parametrize("options", MODEL_OPTIONS[1:], ids=lambda o: "-".join(f"{v}" for v in o.values()))
def test_the_input_lr_group_holds_every_input_parameter(options):
    torch.manual_seed(0)
    model = CausalLM(ModelConfig(**CFG, **options))
    groups = {g["name"]: g for g in param_groups(model, 0.1, input_lr_mult=3.0)}
    expected = {n for n, _ in model.named_parameters() if n.startswith("model.embed_tokens.")}
    assert set(groups["input"]["names"]) == expected and groups["input"]["lr_mult"] == 3.0
    assert groups["input"]["weight_decay"] == 0.0
    opt = build_optimizer(model, OptimConfig(lr=1e-2, input_lr_mult=3.0))
    assert sum(len(g["params"]) for g in opt.param_groups) == len(list(model.parameters()))


def test_the_default_model_is_unchanged_by_the_options_code():
    """Same seed -> the same tensors as a model built with every option at its default, bit for bit."""
    torch.manual_seed(0)
    a = CausalLM(ModelConfig(**CFG))
    torch.manual_seed(0)
    b = CausalLM(ModelConfig(**CFG, generator_init="reference", generator_center=False, generator_form="paper",
                             embedding_norm=False))
    assert a.state_dict().keys() == b.state_dict().keys()
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())
    assert not any(k.endswith(("center", "knot_log_scale", "out_bias", "out_norm.weight")) for k in a.state_dict())


@pytest.mark.parametrize("bad,message", [
    (dict(embedding="leviathan", generator_init="small"), "generator_init must be one of"),
    (dict(embedding="leviathan", generator_form="kan"), "generator_form must be one of"),
    (dict(embedding="leviathan", generator_center="yes"), "generator_center must be true or false"),
    (dict(embedding="dense_untied", generator_center=True), "generator options, for embedding=leviathan only"),
    (dict(embedding="dense_tied", embedding_norm=True), "embedding_norm applies to dense_untied and leviathan"),
])
def test_bad_options_are_refused_with_the_fix(bad, message):
    with pytest.raises(ConfigError, match=message):
        ModelConfig(**CFG, **bad)


def test_build_input_embedding_passes_every_option():
    cfg = ModelConfig(**CFG, embedding="leviathan", generator_init="table_rms", generator_center=True,
                      embedding_norm=True, generator_form="khronos", initializer_range=0.03)
    torch.manual_seed(0)
    g = build_input_embedding(cfg.resolved())
    assert (g.init, g.form, g.table_std) == ("table_rms", "khronos", 0.03)
    assert g.center is not None and g.out_norm is not None and math.isclose(g.out_norm.weight[0].item(), 0.03, rel_tol=1e-6)
