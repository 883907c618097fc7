"""Paired differences across seeds (experiments.method.paired): intervals, pairs, verdicts and the report section."""

import dataclasses
import json
import math

import pytest

from leviathan.config import to_dict
from leviathan.experiments.method.paired import gap_curve, paired_comparisons, t_interval
from leviathan.experiments.report import write_report
from leviathan.experiments.machinery.results import ResultRow, append_result
from leviathan.run_config import OptimConfig, RunConfig

T_975_2 = 4.302652729911275  # Student t quantile 0.975 with 2 degrees of freedom


def test_t_interval_matches_the_textbook_formula():
    s = t_interval([1.0, 2.0, 3.0])
    assert s.n == 3 and s.mean == pytest.approx(2.0) and s.sd == pytest.approx(1.0)
    half = T_975_2 / math.sqrt(3)
    assert s.ci == pytest.approx([2.0 - half, 2.0 + half])
    assert s.verdict == "not resolved"


@pytest.mark.parametrize("diffs, verdict", [([-1.0, -1.1, -0.9], "better"), ([0.5, 0.6, 0.4], "worse"),
                                            ([-0.2, 0.1, -0.05], "not resolved"), ([-0.3], "one seed"),
                                            ([], "no pairs"), ([None, None, -0.1], "one seed")])
def test_t_interval_verdicts(diffs, verdict):
    s = t_interval(diffs)
    assert s.verdict == verdict
    if verdict in ("one seed", "no pairs"):
        assert s.ci is None


def _row(variant, seed, loss, *, size="m", regimes=("iso_body",), curve_losses=None, bpb_scale=0.35, params=1000):
    tokens = [100, 200, 300, 400]
    curve = None if curve_losses is None else {"tokens": tokens, "val_loss": curve_losses}
    return ResultRow.from_dict({
        "name": f"{size}-{variant}-s{seed}", "regime": regimes[0], "regimes": list(regimes), "variant": variant,
        "size": size, "seed": seed, "params": {"total": params},
        "eval": {"val": {"loss": loss, "ppl": math.exp(loss), "bpb": bpb_scale * loss},
                 "ptb": {"loss": loss + 1.0, "ppl": math.exp(loss + 1.0)}},
        "curve": curve})


def _sweep_rows():
    """Three seeds of dense_tied, leviathan (0.2 +- 0.01 nats better) and dense_untied (0.15 better)."""
    rows = []
    for seed, noise in zip((0, 1, 2), (0.0, 0.3, -0.2)):
        base = 6.0 + noise  # seed-to-seed noise the pairing cancels
        dense_curve = [8.0 + noise, 7.0 + noise, 6.5 + noise, base]
        rows.append(_row("dense_tied", seed, base, curve_losses=dense_curve))
        lev = base - 0.2 + 0.01 * (seed - 1)
        rows.append(_row("leviathan", seed, lev, curve_losses=[v - 0.2 + 0.01 * (seed - 1) for v in dense_curve]))
        rows.append(_row("dense_untied", seed, base - 0.15, curve_losses=[v - 0.15 for v in dense_curve]))
    return rows


def test_paired_comparisons_pair_by_seed_and_add_the_untied_control():
    out = {(c.model, c.baseline): c for c in paired_comparisons(_sweep_rows(), plateau=7.4)}
    assert set(out) == {("dense_untied", "dense_tied"), ("leviathan", "dense_tied"), ("leviathan", "dense_untied")}
    lev = out[("leviathan", "dense_tied")]
    assert lev.seeds == [0, 1, 2] and lev.model_runs == ["m-leviathan-s0", "m-leviathan-s1", "m-leviathan-s2"]
    loss = lev.eval["val"].loss
    assert loss.diffs == pytest.approx([-0.21, -0.2, -0.19])
    assert loss.mean == pytest.approx(-0.2) and loss.verdict == "better"  # the seed noise (0.5) cancels
    assert loss.ci[1] < 0
    assert lev.eval["val"].ppl_change.mean == pytest.approx(math.expm1(-0.2))
    assert lev.eval["val"].bpb.mean == pytest.approx(0.35 * -0.2)
    assert lev.eval["ptb"].bpb.verdict == "no pairs"  # ptb has no bpb in these rows
    control = out[("leviathan", "dense_untied")].eval["val"].loss
    assert control.mean == pytest.approx(-0.05) and control.verdict == "better"


def test_gap_curve_is_pointwise_and_marks_the_plateau():
    rows = _sweep_rows()
    pairs = [(rows[3 * s + 1], rows[3 * s]) for s in range(3)]
    c = gap_curve(pairs, plateau=7.4)
    assert c.tokens == [100, 200, 300, 400]
    assert c.mean == pytest.approx([-0.2] * 4)
    # past the plateau: the slowest seed's baseline (noise +0.3) is below 7.4 - 0.5 = 6.9 first at 300 tokens
    assert c.past_plateau_tokens == 300
    assert gap_curve(pairs).past_plateau_tokens is None


def test_one_seed_is_a_direction_not_a_result():
    rows = [_row("dense_tied", 0, 6.0), _row("leviathan", 0, 5.0)]
    (c,) = paired_comparisons(rows)
    assert c.eval["val"].loss.verdict == "one seed" and c.eval["val"].loss.ci is None
    assert c.curve.tokens == []


def test_unpaired_seeds_are_left_out():
    rows = [_row("dense_tied", 0, 6.0), _row("leviathan", 0, 5.9), _row("leviathan", 1, 5.0)]
    (c,) = paired_comparisons(rows)
    assert c.seeds == [0]


def test_report_has_the_paired_section_and_figure(tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()
    for r in _sweep_rows():
        append_result(out / "results.jsonl", r)
    (out / "grid.json").write_text(json.dumps({"name": "t", "unigram_entropy": 7.4}))
    report = write_report(out, tmp_path / "report", num_bootstrap=0)
    text = report.read_text()
    assert "## Paired differences across seeds" in text and "7.400 nats" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("| iso_body | m | leviathan - dense_tied | 3 |"))
    assert "better" in line and "-0.2000" in line and "| 300 |" in line
    assert (tmp_path / "report" / "paired_gap.png").stat().st_size > 0
    a = json.loads((tmp_path / "report" / "analysis.json").read_text())
    assert a["unigram_entropy"] == 7.4 and len(a["paired"]) == 3


def test_row_curve_falls_back_to_the_curve_the_row_keeps(tmp_path):
    from leviathan.experiments.method.efficiency import row_curve

    row = _row("leviathan", 0, 5.0, curve_losses=[9.0, 8.0, 7.0, 6.0])
    row.metrics = str(tmp_path / "gone" / "metrics.jsonl")
    c = row_curve(row)
    assert c.tokens.tolist() == [100, 200, 300, 400] and c.loss.tolist() == [9.0, 8.0, 7.0, 6.0]
    with pytest.raises(Exception, match="no metrics file"):
        row_curve(_row("leviathan", 0, 5.0))


def test_demo_prints_the_committed_grid_interval(tmp_path):
    from leviathan.commands.demo import committed_grid
    from leviathan.experiments.machinery.results import dumps

    path = tmp_path / "analysis.json"
    assert committed_grid(path) == []  # no grid committed yet: the demo falls back to the ablation
    path.write_text(dumps({"paired": paired_comparisons(_sweep_rows(), plateau=7.4)}))
    lines = committed_grid(path)
    assert len(lines) == 2  # vs dense_tied, and the dense_untied control
    assert "leviathan - dense_tied validation loss -0.200 nats [95% interval -0.225, -0.175]" in lines[0]
    assert "3 seed(s)" in lines[0] and lines[0].endswith(": better")
    assert "leviathan - dense_untied validation loss -0.050" in lines[1]


def test_paired_sample_efficiency_is_a_geometric_mean_over_seeds():
    from leviathan.experiments.method.paired import paired_efficiency

    def curve_row(variant, seed, losses):
        return _row(variant, seed, losses[-1], curve_losses=losses)

    # the model reaches the baseline's final loss (5.0 at 400 tokens) at 200 tokens (2x) and 100 tokens (4x)
    pairs = [(curve_row("leviathan", 0, [6.0, 5.0, 4.5, 4.0]), curve_row("dense_tied", 0, [8.0, 7.0, 6.0, 5.0])),
             (curve_row("leviathan", 1, [5.0, 4.5, 4.2, 4.0]), curve_row("dense_tied", 1, [8.0, 7.0, 6.0, 5.0])),
             (curve_row("leviathan", 2, [9.0, 8.0, 7.0, 6.0]), curve_row("dense_tied", 2, [8.0, 7.0, 6.0, 5.0]))]
    e = paired_efficiency(pairs)
    assert e.factors == [pytest.approx(2.0), pytest.approx(4.0), None]
    assert e.status == ["reached", "reached", "not reached"]
    assert paired_efficiency([(_row("leviathan", 0, 5.0), _row("dense_tied", 0, 6.0))]).status == ["no curve"]
    assert e.n == 3 and e.reached == 2
    assert e.geo_mean == pytest.approx(math.sqrt(8.0))
    assert e.ci[0] < math.sqrt(8.0) < e.ci[1]


def test_paired_buckets_pair_each_bucket_over_seeds():
    from leviathan.experiments.method.paired import paired_buckets
    from leviathan.experiments.machinery.results import BucketResult

    def bucket_row(variant, seed, losses):
        r = _row(variant, seed, 5.0)
        r.buckets = {"val": BucketResult(loss=losses)}
        return r

    pairs = [(bucket_row("leviathan", s, [9.0 - 0.3 - 0.01 * s, 5.0]), bucket_row("dense_tied", s, [9.0, 5.0 + 0.1 * s]))
             for s in range(3)]
    rare, frequent = paired_buckets(pairs)
    assert rare.mean == pytest.approx(-0.31) and rare.verdict == "better"
    assert rare.ppl_change == pytest.approx(math.expm1(-0.31)) and rare.ppl_change_ci[1] < 0
    assert frequent.diffs == pytest.approx([0.0, -0.1, -0.2]) and frequent.verdict == "not resolved"
    assert paired_buckets([(bucket_row("leviathan", 0, [1.0, 2.0]), _row("dense_tied", 0, 5.0))]) == []


def test_a_generator_shape_arm_borrows_the_baselines_of_its_backbone():
    rows = _sweep_rows()
    for seed, noise in zip((0, 1, 2), (0.0, 0.3, -0.2)):
        rows.append(_row("leviathan", seed, 6.0 + noise - 0.3, size="m-big"))
    other = _row("leviathan", 0, 1.0, size="wide")  # another backbone: never paired with m's baselines
    other.hidden_size = 999
    for r in rows:
        r.hidden_size = 64
    out = {(c.size, c.model, c.baseline): c for c in paired_comparisons(rows + [other])}
    big = out[("m-big", "leviathan", "dense_tied")]
    assert big.baseline_size == "m" and big.baseline_runs == ["m-dense_tied-s0", "m-dense_tied-s1", "m-dense_tied-s2"]
    assert big.eval["val"].loss.mean == pytest.approx(-0.3)
    assert out[("m-big", "leviathan", "dense_untied")].eval["val"].loss.mean == pytest.approx(-0.15)
    assert ("m-big", "dense_untied", "dense_tied") not in out  # the donor's own comparisons stay under the donor
    assert out[("m", "leviathan", "dense_tied")].baseline_size is None
    assert not any(size == "wide" for size, _, _ in out)
    # a size with an untied table of its own borrows only the tied one: its own pair is not labelled borrowed
    # (the o200k-fair report printed "d64L6-ilr03 (vs d64L6) leviathan - dense_untied" for ilr03's own table)
    rows += [_row("dense_untied", s, 6.1, size="m-big") for s in (0, 1, 2)]
    out = {(c.size, c.model, c.baseline): c for c in paired_comparisons(rows)}
    assert out[("m-big", "leviathan", "dense_untied")].baseline_size is None
    assert out[("m-big", "leviathan", "dense_tied")].baseline_size == "m"
    assert out[("m-big", "dense_untied", "dense_tied")].baseline_size == "m"


def test_gap_trend_fits_the_last_third_per_seed():
    """Gaps that shrink by 0.1 nats per 100 tokens in every seed: slope +1000 nats per million tokens, fitted
    over the points from two thirds of training on (300 and 400 of 100..400)."""
    from leviathan.experiments.method.paired import gap_trend

    pairs = []
    for seed in range(3):
        base = [8.0, 7.0, 6.5, 6.0]
        gaps = [-0.6 + 0.1 * i + 0.01 * seed for i in range(4)]  # -0.6 .. -0.3, shrinking
        pairs.append((_row("leviathan", seed, base[-1] + gaps[-1], curve_losses=[b + g for b, g in zip(base, gaps)]),
                      _row("dense_tied", seed, base[-1], curve_losses=base)))
    trend = gap_trend(pairs)
    assert trend.from_tokens == 300 and trend.points == 2
    assert trend.slopes == pytest.approx([1000.0] * 3) and trend.end_gaps == pytest.approx([-0.3, -0.29, -0.28])
    assert trend.slope.mean == pytest.approx(1000.0) and trend.slope.n == 3
    assert gap_trend(pairs[:1], from_frac=0.0).points == 4
    assert gap_trend([]).from_tokens is None


def test_report_gives_the_trend_the_share_left_out_and_the_lr_pre_sweep(tmp_path):
    out, lr = tmp_path / "sweep", tmp_path / "lr"
    out.mkdir(), lr.mkdir()
    for r in _sweep_rows():
        if r.variant != "dense_untied":
            r.eval["wiki"] = type(r.eval["val"]).from_dict({"loss": 7.0, "ppl": math.exp(7.0), "tokens": 7, "targets_outside": 1,
                                                       "share_outside": 0.125})  # 1 of 8 targets (round 29, W290)
        append_result(out / "results.jsonl", r)
    for variant, losses in (("dense_tied", (6.0, 5.9, 6.2)), ("leviathan", (6.1, 5.995, 5.99))):
        for value, loss in zip((1e-3, 3e-3, 1e-2), losses):
            append_result(lr / "results.jsonl", ResultRow.from_dict(
                {"name": f"lr{value:g}-{variant}-s0", "variant": variant, "size": f"lr{value:g}", "seed": 0,
                 "eval": {"val": {"loss": loss}}, "config": _config(value, variant)}))
    text = write_report(out, tmp_path / "report", num_bootstrap=0, lr_sweep=lr).read_text()
    assert "Trend at the end of training" in text and "wiki 12.5%" in text
    assert "| dense_tied | 6.0000 | **5.9000** | 6.2000 | 0.003 |" in text
    # leviathan: 5.990 at 1e-2 is lowest, 5.995 at 3e-3 is within 0.01 -> the lower lr, 3e-3
    assert "| leviathan | 6.1000 | **5.9950** | 5.9900 | 0.003 |" in text
    a = json.loads((tmp_path / "report" / "analysis.json").read_text())
    assert a["lr_sweep"]["leviathan"]["lr"] == 0.003 and a["lr_sweep"]["leviathan"]["edge"] is None


def _config(lr, variant):
    """A resolved run config that agrees with its row (seed 0, the row's variant as model.embedding)."""
    config = to_dict(RunConfig(max_steps=1, seed=0, optim=OptimConfig(lr=lr)))
    config["model"]["embedding"] = variant
    return config
