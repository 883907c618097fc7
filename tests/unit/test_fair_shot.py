"""The fair-shot round's rules (results/o200k-fair/PLAN.md) on rows written as literals: reproduction, pick,
combination, control, primary."""

from __future__ import annotations

import math

import pytest

from leviathan.experiments.method.fair_shot import fair_shot, reproduction
from leviathan.experiments.report.fair_shot import render_fair_shot
from leviathan.experiments.machinery.results import ResultRow

REF = "d64L6"
GENS = ["d64L6-center", "d64L6-ilr03", "d64L6-ilr3", "d64L6-norm"]
TABLES = ["d64L6-ilr3", "d64L6-norm"]


def row(size, variant, seed, loss, curve=None, commit="abc1234"):
    tokens = [100, 200, 300]
    return ResultRow.from_dict({
        "name": f"{size}-{variant}-s{seed}", "regime": "iso_body", "regimes": ["iso_body"], "variant": variant,
        "size": size, "seed": seed, "params": {"total": 1000},
        "eval": {"val": {"loss": loss, "ppl": math.exp(loss), "bpb": 0.3 * loss}},
        "curve": {"tokens": tokens, "val_loss": curve or [loss + 2, loss + 1, loss]},
        "code": {"commit": commit}})


def committed_round():
    rows = []
    for s, noise in zip((0, 1, 2), (0.0, 0.02, -0.01)):
        rows += [row(REF, "dense_untied", s, 4.90 + noise, commit="old"), row(REF, "dense_tied", s, 4.96 + noise,
                 commit="old"), row(REF, "leviathan", s, 5.05 + noise, commit="old")]
    return rows


def screening(losses: dict[str, float], tables: dict[str, float], r0=4.90):
    rows = [row(REF, "dense_untied", 0, r0)]
    rows += [row(a, "leviathan", 0, v) for a, v in losses.items()]
    rows += [row(a, "dense_untied", 0, v) for a, v in tables.items()]
    return rows


def test_reproduction_is_bitwise_or_it_is_not():
    committed = row(REF, "dense_untied", 0, 4.9191, curve=[8.2197521, 7.3, 4.9191], commit="old")
    same = row(REF, "dense_untied", 0, 4.9191, curve=[8.2197521, 7.3, 4.9191], commit="new")
    off = row(REF, "dense_untied", 0, 4.9191, curve=[8.2197519, 7.3, 4.9191], commit="new")
    assert reproduction(same, committed).bitwise
    rep = reproduction(off, committed)
    assert not rep.bitwise and rep.equal_points == 2 and rep.points == 3
    assert rep.max_abs_diff == pytest.approx(2e-7, rel=1e-3)


def test_committed_reference_rows_are_used_only_when_reproduced():
    ok = fair_shot(screening({g: 5.0 for g in GENS}, {t: 4.95 for t in TABLES}), committed_round(), REF, GENS, TABLES)
    assert ok.reference_rows == "committed" and ok.screening[0].arm == REF and ok.screening[0].loss == 5.05
    not_ok = fair_shot(screening({g: 5.0 for g in GENS}, {t: 4.95 for t in TABLES}, r0=4.8999), committed_round(),
                       REF, GENS, TABLES)
    assert not_ok.reference_rows == "rerun" and not_ok.pick is None  # the reference generator must be rerun first
    assert "d64L6" in not_ok.pick_reason


def test_pick_needs_the_margin_and_every_planned_arm():
    partial = fair_shot(screening({"d64L6-center": 4.90}, {}), committed_round(), REF, GENS, TABLES)
    assert partial.pick is None and "screening incomplete" in partial.pick_reason and partial.primary is None
    close = fair_shot(screening({g: 5.04 for g in GENS}, {t: 4.95 for t in TABLES}), committed_round(), REF, GENS,
                      TABLES)
    assert close.pick == REF and "no option beats" in close.pick_reason  # 0.01 better is inside the margin
    assert close.control == REF  # no untied arm beats the plain table
    assert close.primary is not None and close.primary.eval["val"].loss.verdict == "worse"


def test_combination_rule_and_two_lr_multipliers():
    fs = fair_shot(screening({"d64L6-center": 4.95, "d64L6-norm": 4.97, "d64L6-ilr03": 5.06, "d64L6-ilr3": 5.05},
                             {t: 4.95 for t in TABLES}), committed_round(), REF, GENS, TABLES)
    assert fs.pick == "d64L6-center" and fs.combination == ["d64L6-center", "d64L6-norm"]
    lr = fair_shot(screening({"d64L6-center": 5.02, "d64L6-norm": 5.06, "d64L6-ilr03": 4.98, "d64L6-ilr3": 4.99},
                             {t: 4.95 for t in TABLES}), committed_round(), REF, GENS, TABLES)
    assert lr.pick == "d64L6-ilr03" and lr.combination == ["d64L6-ilr03", "d64L6-center"]
    only_lr = fair_shot(screening({"d64L6-center": 5.04, "d64L6-norm": 5.06, "d64L6-ilr03": 4.98, "d64L6-ilr3": 4.99},
                                  {t: 4.95 for t in TABLES}), committed_round(), REF, GENS, TABLES)
    assert only_lr.combination is None and "two cannot combine" in only_lr.combination_reason


def test_control_switches_only_past_the_margin_and_the_primary_pairs_across_arms():
    rows = screening({"d64L6-center": 4.95, "d64L6-norm": 5.06, "d64L6-ilr03": 5.06, "d64L6-ilr3": 5.05},
                     {"d64L6-ilr3": 4.87, "d64L6-norm": 4.91})
    rows += [row("d64L6-center", "leviathan", s, v) for s, v in ((1, 4.96), (2, 4.94))]
    rows += [row("d64L6-ilr3", "dense_untied", s, v) for s, v in ((1, 4.90), (2, 4.86))]
    fs = fair_shot(rows, committed_round(), REF, GENS, TABLES)
    assert fs.control == "d64L6-ilr3"  # 0.03 better than the plain table
    p = fs.primary
    assert p.seeds == [0, 1, 2] and p.size == "d64L6-center" and p.baseline_size == "d64L6-ilr3"
    assert p.eval["val"].loss.diffs == pytest.approx([0.08, 0.06, 0.08])
    assert {c.baseline for c in fs.secondary} == {"dense_tied", "leviathan"}
    md = "\n".join(render_fair_shot(fs, "results/o200k"))
    assert "**Pick:** d64L6-center" in md and "**Control:** d64L6-ilr3" in md and "Reproduced" in md


def test_the_picks_presweep_grid_is_the_o200k_presweep_with_the_picks_option():
    """o200k-fair-lr.yaml claims the o200k round's pre-sweep exactly, applied to the pick: same base, data, seeds and
    evaluation; every size the pick's model (o200k-fair's d64L6-ilr03) with its multiplier and one peak lr."""
    import yaml

    from leviathan.configs import find_grid_file

    fair_lr, o200k_lr, fair = (yaml.safe_load(find_grid_file(g).read_text())
                               for g in ("o200k-fair-lr", "o200k-lr", "o200k-fair"))
    for key in ("base", "data", "seeds", "eval"):
        assert fair_lr[key] == o200k_lr[key], key
    pick = {k: v for k, v in fair["sizes"]["d64L6-ilr03"].items() if k != "run"}
    lrs = {}
    for name, size in fair_lr["sizes"].items():
        assert {k: v for k, v in size.items() if k != "run"} == pick, name
        assert size["run"]["optim.input_lr_mult"] == fair["sizes"]["d64L6-ilr03"]["run"]["optim.input_lr_mult"]
        lrs[name.removeprefix("d64L6-ilr03-")] = size["run"]["optim.lr"]
    assert lrs == {s: o200k_lr["sizes"][s]["run"]["optim.lr"] for s in o200k_lr["sizes"]}
