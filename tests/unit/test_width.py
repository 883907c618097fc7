"""The width panel (experiments.method.width): points per body size, the per-seed slope of the gap against ln(body
parameters) with its t interval, and the report's section and figure, on literal rows."""

import json
import math

import pytest

from leviathan.experiments.report import write_report
from leviathan.experiments.machinery.results import ResultRow, append_result
from leviathan.experiments.method.width import gap_slope, width_panel

T_975_2 = 4.302652729911275  # Student t quantile 0.975 with 2 degrees of freedom
BODIES = {"d32": 1_000, "d64": 4_000, "d128": 16_000}  # each width 4x the body of the one before
SLOPES = {0: -0.05, 1: -0.06, 2: -0.04}  # each seed's gap slope per e-fold of body parameters
NOISE = {0: 0.0, 1: 0.3, 2: -0.2}  # seed-to-seed loss noise the pairing cancels


def _row(size, variant, seed, loss, *, curve=None, buckets=None):
    tokens = [100, 200, 300, 400, 500, 600]
    body = size.split("-")[0]  # "d64-center": an option arm of the d64 body
    return ResultRow.from_dict({
        "name": f"{size}-{variant}-s{seed}", "regime": "iso_body", "regimes": ["iso_body"], "variant": variant,
        "size": size, "seed": seed, "hidden_size": int(body[1:]), "num_hidden_layers": 6,
        "params": {"input": 10, "body": BODIES[body], "head": 10, "total": 20 + BODIES[body]},
        "eval": {"val": {"loss": loss, "ppl": math.exp(loss)}},
        "buckets": {} if buckets is None else {"val": {"loss": buckets}},
        "curve": None if curve is None else {"tokens": tokens, "val_loss": curve}})


def gap(size, seed):
    """The gap a seed has at a width: a seed's own offset plus its slope times ln(body)."""
    return 0.5 + 0.01 * seed + SLOPES[seed] * math.log(BODIES[size])


def width_rows(seeds=(0, 1, 2), sizes=("d32", "d64", "d128"), tied=True):
    rows = []
    for size in sizes:
        for seed in seeds:
            table = 6.0 - 0.1 * math.log(BODIES[size]) + NOISE[seed]
            curve = [table + 1.0 - 0.1 * i for i in range(6)]
            rows.append(_row(size, "dense_untied", seed, table, curve=curve, buckets=[table + 1, table]))
            d = gap(size, seed)
            # the gap over training shrinks by 0.01 nats per curve point (per 100 tokens)
            rows.append(_row(size, "leviathan", seed, table + d, curve=[v + d + 0.01 * (5 - i) for i, v in
                                                                        enumerate(curve)],
                             buckets=[table + 1 + 2 * d, table + d / 2]))
        if tied:
            rows.append(_row(size, "dense_tied", 0, 6.0 - 0.1 * math.log(BODIES[size]) + 0.05))
    return rows


def test_gap_slope_is_least_squares():
    assert gap_slope([0.0, 1.0, 2.0], [1.0, 3.0, 5.0]) == pytest.approx(2.0)
    assert gap_slope([0.0, 1.0, 2.0], [0.0, 1.0, 0.5]) == pytest.approx(0.25)


def test_width_panel_points_and_the_primary_slope():
    panel = width_panel(width_rows())
    assert [p.body_params for p in panel.points] == [1_000, 4_000, 16_000]
    assert [p.hidden_size for p in panel.points] == [32, 64, 128]
    p32 = panel.points[0]
    assert p32.seeds == [0, 1, 2] and p32.generator_size == "d32" and p32.table_size == "d32"
    assert p32.per_seed == pytest.approx([gap("d32", s) for s in (0, 1, 2)])
    assert p32.gap.mean == pytest.approx(sum(gap("d32", s) for s in (0, 1, 2)) / 3)
    # the tied table ran seed 0 only: a direction, no interval
    assert p32.tied_gap.n == 1 and p32.tied_gap.verdict == "one seed"
    assert p32.tied_gap.diffs == pytest.approx([gap("d32", 0) - 0.05])
    # the late slope of the gap over training: -0.01 nats per 100 tokens = -100 nats per million tokens
    assert p32.trend.slope.mean == pytest.approx(-100) and p32.trend.points == 3
    # buckets, rarest first: 2 d_s on the rare bucket, d_s / 2 on the frequent one
    assert p32.buckets[0].mean == pytest.approx(2 * p32.gap.mean)
    assert p32.buckets[1].mean == pytest.approx(p32.gap.mean / 2)

    s = panel.slope
    assert s.seeds == [0, 1, 2] and s.seeds_left_out == [] and s.body_params == [1_000, 4_000, 16_000]
    assert s.per_seed == pytest.approx([SLOPES[0], SLOPES[1], SLOPES[2]])
    half = T_975_2 * 0.01 / math.sqrt(3)  # sd of (-0.05, -0.06, -0.04) is 0.01
    assert s.slope.mean == pytest.approx(-0.05) and s.slope.ci == pytest.approx([-0.05 - half, -0.05 + half])
    assert s.direction == "falls" and s.per_doubling == pytest.approx([math.log(2) * v for v in (-0.05, *s.slope.ci)])
    # the mean of the per-seed slopes is the slope through the per-width mean gaps (every seed complete)
    xs = [math.log(b) for b in s.body_params]
    assert gap_slope(xs, [p.gap.mean for p in panel.points]) == pytest.approx(s.slope.mean)
    assert "falls as the body grows" in panel.paper_direction


def test_a_seed_missing_at_one_width_is_left_out_of_the_slope_and_one_width_is_no_panel():
    rows = [r for r in width_rows() if not (r.size == "d128" and r.seed == 2 and r.variant == "leviathan")]
    panel = width_panel(rows)
    assert panel.points[2].seeds == [0, 1] and panel.slope.seeds == [0, 1] and panel.slope.seeds_left_out == [2]
    assert panel.slope.per_seed == pytest.approx([SLOPES[0], SLOPES[1]])
    assert width_panel(width_rows(sizes=("d64",))) is None
    assert width_panel([r for r in width_rows() if r.variant != "dense_untied"]) is None
    # only iso-body rows pair (the same backbone for every variant): a scaling ladder's untied runs do not
    ladder = [ResultRow.from_dict({**r.to_dict(), "regime": "scaling", "regimes": ["scaling"]})
              if r.variant == "dense_untied" else r for r in width_rows()]
    assert width_panel(ladder) is None
    # a rising gap is the other verdict; a flat-ish one is not resolved
    flipped = [ResultRow.from_dict({**r.to_dict(), "eval": {"val": {"loss": 2 * 6.0 - r.loss()}}}) if
               r.variant == "leviathan" else r for r in width_rows()]
    assert width_panel(flipped).slope.direction in ("rises", "not resolved")


def test_two_generator_arms_at_one_body_are_left_out_unless_one_is_named():
    rows = width_rows() + [_row("d64-center", "leviathan", s, 5.0) for s in (0, 1, 2)]
    panel = width_panel(rows)
    assert [p.body_params for p in panel.points] == [1_000, 16_000]
    assert panel.notes == ["body 4,000 left out: leviathan rows of 2 sizes (d64, d64-center)"]
    named = width_panel(rows, generator_sizes=["d32", "d64-center", "d128"])
    assert [p.generator_size for p in named.points] == ["d32", "d64-center", "d128"] and named.notes == []
    assert named.points[1].table_size == "d64"  # the untied table of the same body, whatever its size's name


def test_report_shows_the_width_panel_when_rows_have_several_widths(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    for r in width_rows():
        append_result(sweep / "results.jsonl", r)
    md = write_report(sweep, tmp_path / "out", num_bootstrap=20).read_text()
    assert "## Width: the generator's gap to the untied table against the body's size" in md
    assert "![width gap](width_gap.png)" in md and (tmp_path / "out" / "width_gap.png").is_file()
    assert "slope per e-fold of body parameters -0.0500" in md and "**falls**" in md
    analysis = json.loads((tmp_path / "out" / "analysis.json").read_text())
    assert analysis["width"]["slope"]["per_seed"] == pytest.approx([-0.05, -0.06, -0.04])
    # one width: no section, no figure, no key
    one = tmp_path / "one"
    one.mkdir()
    for r in width_rows(sizes=("d64",)):
        append_result(one / "results.jsonl", r)
    md = write_report(one, tmp_path / "out", num_bootstrap=20).read_text()
    assert "## Width" not in md and not (tmp_path / "out" / "width_gap.png").exists()
    assert "width" not in json.loads((tmp_path / "out" / "analysis.json").read_text())
