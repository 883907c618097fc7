"""Parameter accounting by named group, the isoparametric depth solver and the ``params`` verb."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from leviathan.cli import main
from leviathan.model.accounting import (count_config, count_model, flops_per_token, generator_params,
                                        isoparametric_depth, layer_params)
from leviathan.model.config import EMBEDDING_KINDS, ModelConfig
from leviathan.model.generator import LeviathanGenerator
from leviathan.model.llama import CausalLM, count_params
from leviathan.presets import preset

pytestmark = pytest.mark.usefixtures("single_thread")

O200K = 200_019

BACKBONES = {
    "plain": {},
    "gqa": dict(num_attention_heads=4, num_key_value_heads=2),
    "mqa+explicit-ffn": dict(num_attention_heads=4, num_key_value_heads=1, intermediate_size=40),
    "explicit-head-dim": dict(num_attention_heads=2, head_dim=24, num_hidden_layers=3),
}


@pytest.mark.parametrize("backbone", list(BACKBONES))
@pytest.mark.parametrize("kind", EMBEDDING_KINDS)
def test_analytic_counts_equal_built_model(kind, backbone, tiny_model_config):
    cfg = tiny_model_config(kind, **BACKBONES[backbone])
    model = CausalLM(cfg)
    analytic, built = count_config(cfg), count_model(model)
    assert analytic == built
    assert analytic.input + analytic.body + analytic.head == analytic.total
    assert analytic.as_dict()["total"] == analytic.total
    # an independent count: every distinct parameter tensor once
    assert analytic.total == count_params(model) == sum(p.numel() for p in model.parameters())
    assert analytic.input == sum(p.numel() for p in model.model.embed_tokens.parameters())


def test_tied_matrix_is_counted_once(tiny_model_config):
    tied_cfg, untied_cfg = tiny_model_config("dense_tied"), tiny_model_config("dense_untied")
    tied, untied = count_config(tied_cfg), count_config(untied_cfg)
    V, D = tied_cfg.vocab_size, tied_cfg.hidden_size
    assert tied.tied and tied.head == 0 and tied.input == V * D
    assert not untied.tied and untied.head == V * D
    assert untied.total - tied.total == V * D
    assert count_model(CausalLM(tied_cfg)).tied
    # named_parameters() lists the tied tensor once, but the count must not rely on that
    model = CausalLM(tied_cfg)
    names = [n for n, _ in model.named_parameters(remove_duplicate=False)]
    assert "lm_head.weight" in names and "model.embed_tokens.weight" in names
    assert count_model(model).total == tied.total


def test_layer_params_by_hand():
    cfg = ModelConfig(vocab_size=100, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                      intermediate_size=96)
    hd = 16
    attn = 64 * 4 * hd + 64 * 2 * hd * 2 + 4 * hd * 64  # q, k+v, o
    assert layer_params(cfg) == attn + 3 * 64 * 96 + 2 * 64
    assert ModelConfig(hidden_size=512).resolved_intermediate_size == 1408  # 8/3 * 512 rounded up to 64


def test_generator_formula_by_hand_o200k_d2048():
    cfg = ModelConfig(vocab_size=O200K, hidden_size=2048, num_attention_heads=16, generator_knots=16,
                      generator_rank=64, generator_seed_dim=128, generator_modes=8, generator_k=3)
    k, b, d, M, kappa, r, D = 3, 59, 128, 8, 16, 64, 2048
    by_hand = k * b * d + M * (d * d + 2 * d) + M * d * kappa * r + M * r * D
    assert by_hand == 22_656 + 133_120 + 1_048_576 + 1_048_576 == 2_252_928
    assert generator_params(cfg) == by_hand
    assert count_config(cfg).input == by_hand


def test_generator_formula_equals_module_parameter_count():
    kw = dict(k=3, seed_dim=16, modes=3, knots=5, rank=7)
    g = LeviathanGenerator(1000, 24, **kw)
    cfg = ModelConfig(vocab_size=1000, hidden_size=24, num_attention_heads=4, generator_k=3, generator_seed_dim=16,
                      generator_modes=3, generator_knots=5, generator_rank=7)
    assert generator_params(cfg) == sum(p.numel() for p in g.parameters())


def test_paper_1_2b_preset_and_the_0_2_percent_claim():
    cfg = preset("paper-1.2b")
    counts = count_config(cfg)
    assert cfg.embedding == "leviathan" and cfg.generator_knots == 16
    assert 1.20e9 <= counts.total <= 1.24e9  # 1,221,460,096
    share = counts.input / counts.total
    assert 0.0015 < share < 0.0022  # about 0.18%: "a parameter increase as low as 0.2%"
    dense_tied = count_config(preset("paper-1.2b", embedding="dense_tied"))
    assert counts.total - dense_tied.total == generator_params(cfg)  # iso-body: only the generator is extra


@pytest.mark.parametrize("width,heads", [(128, 4), (256, 4), (512, 8), (768, 12)])
def test_isoparametric_depth_is_the_closest_depth(width, heads):
    dense = ModelConfig(vocab_size=O200K, hidden_size=width, num_hidden_layers=6, num_attention_heads=heads,
                        embedding="dense_untied")
    sol = isoparametric_depth(dense)
    target = count_config(dense).total
    assert sol.target_total == target
    assert sol.config.embedding == "leviathan" and sol.config.hidden_size == width
    assert sol.total == count_config(sol.config).total
    assert abs(sol.total - target) / target < 0.01
    assert sol.relative_gap == pytest.approx((sol.total - target) / target)
    assert sol.config.num_hidden_layers > dense.num_hidden_layers  # the table's budget became depth
    n = sol.config.num_hidden_layers
    for other in (n - 1, n + 1, n - 2, n + 2):
        total = count_config(replace(sol.config, num_hidden_layers=other)).total
        assert abs(total - target) >= abs(sol.total - target), other


def test_isoparametric_depth_respects_max_layers():
    dense = ModelConfig(vocab_size=O200K, hidden_size=128, num_hidden_layers=6, num_attention_heads=4,
                        embedding="dense_untied")
    assert isoparametric_depth(dense, max_layers=10).config.num_hidden_layers == 10


def test_flops_generator_touches_three_knots_not_kappa():
    f = flops_per_token(ModelConfig())  # paper defaults: d_s 128, M 8, kappa 32, r 64, degree 2
    assert f["generator_literal_per_position"] > 3 * f["generator_per_distinct_id"]
    assert f["total"] == f["body"] + f["head"] + f["input"]
    assert "generator_per_distinct_id" not in flops_per_token(ModelConfig(embedding="dense_tied"))


# ---------------------------------------------------------------------------------------------
# the CLI verb


def test_params_cli_prints_the_table(capsys):
    assert main(["params", "--preset", "paper-109m", "--isoparametric"]) == 0
    out = capsys.readouterr().out
    for word in ("dense_tied", "dense_untied", "leviathan", "leviathan iso", "input", "body", "head", "total",
                 "tied"):
        assert word in out, word
    dense_tied_total = count_config(preset("paper-109m", embedding="dense_tied")).total
    assert f"{dense_tied_total:,}" in out
    assert "base b=59" in out


def test_params_cli_overrides_and_json(capsys):
    assert main(["params", "model.hidden_size=64", "vocab_size=1000", "num_attention_heads=4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["dense_tied", "dense_untied", "leviathan"]
    for row in rows:
        cfg = ModelConfig(vocab_size=1000, hidden_size=64, num_attention_heads=4, embedding=row["name"])
        assert row["total"] == count_config(cfg).total


def test_params_cli_misspelled_key_exits_2_with_suggestion(capsys):
    assert main(["params", "model.hiden_size=64"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert "did you mean" in err and "hidden_size" in err


def test_params_cli_misspelled_preset_exits_2(capsys):
    assert main(["params", "--preset", "paper-109"]) == 2
    err = capsys.readouterr().err
    assert "did you mean" in err and "paper-109m" in err
