"""The paired-statistics and embeddings functions name an option that cannot mean what was asked (issue 30 round 20):
a start past the end of training (M233), a NaN plateau (M234), an eval set no row holds (M235), an arm given as
(variant, size) (M239) were each answered as if nothing was there, and a probe id outside the table (M238) was numpy's
IndexError. Each is one UserError ``API: OPTION: PROBLEM; FIX``; the values that mean something still answer.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability]


def _pair(swept):
    from leviathan.experiments.machinery.results import read_results

    rows = read_results(swept)
    return rows, [(rows[1], rows[0])]


def test_a_trend_start_past_training_and_a_nan_plateau_are_refused(swept):
    """M233: ``gap_trend(pairs, from_frac=1.5)`` was a trend of 0 points, "no pairs"; M234: ``gap_curve(pairs,
    plateau=nan)`` was "never past the plateau". 0 (the whole curve) and a finite plateau still answer."""
    from leviathan.experiments.method.paired import gap_curve, gap_trend, paired_comparisons

    rows, pairs = _pair(swept)
    for frac in (1.5, 1, -0.1, float("nan"), "2/3"):
        with pytest.raises(UserError, match=r"gap_trend: from_frac: .*; pass where the trend starts"):
            gap_trend(pairs, from_frac=frac)
    assert gap_trend(pairs, from_frac=0).slope.verdict == "no pairs"  # one shared point: no trend, as before
    for plateau in (float("nan"), float("inf"), "5"):
        with pytest.raises(UserError, match=r"gap_curve: plateau: .*; pass the unigram plateau's loss"):
            gap_curve(pairs, plateau=plateau)
        with pytest.raises(UserError, match=r"paired_comparisons: plateau: "):
            paired_comparisons(rows, plateau=plateau)
    assert gap_curve(pairs, plateau=5.0).tokens


def test_an_eval_set_no_row_holds_is_named(swept):
    """M235: ``paired_buckets(pairs, eval_set='nope')`` returned [] as for rows without buckets."""
    from leviathan.experiments.method.paired import paired_buckets

    _, pairs = _pair(swept)
    with pytest.raises(UserError, match=r"paired_buckets: eval_set: no row was evaluated on 'nope'; pass one the rows "
                                        r"hold: val"):
        paired_buckets(pairs, eval_set="nope")
    assert paired_buckets(pairs) == paired_buckets(pairs, eval_set="val")


def test_an_arm_no_row_holds_is_named_and_a_turned_tuple_said(swept):
    """M239: ``paired_of(rows, (variant, size), (variant, size), ...)`` was None, "no seed has both"."""
    from leviathan.experiments.method.paired import paired_of

    rows, _ = _pair(swept)
    (size, model), (_, base) = [(str(r.size), r.variant) for r in (rows[1], rows[0])]
    with pytest.raises(UserError, match=r"paired_of: model: no row is the arm .* \(given as \(variant, size\)\?\); "
                                        r"pass \(size, variant\)"):
        paired_of(rows, (model, size), (base, size), "iso_body")
    with pytest.raises(UserError, match=r"paired_of: baseline: no row is the arm \('a', 'nope'\); pass"):
        paired_of(rows, (size, model), (size, "nope"), "iso_body")
    assert paired_of(rows, (size, model), (size, base), "iso_body").seeds == [0]


def test_a_probe_outside_the_table_is_named():
    """M238: probe 400 of a 300-row table was numpy's IndexError; probe -1 was read from the table's end."""
    from leviathan.experiments.method.embeddings import nearest_neighbours

    table = np.random.default_rng(0).standard_normal((300, 8))
    for probes, shown in (([0, 400], "400"), ([-1, 3], "-1")):
        with pytest.raises(UserError, match=rf"nearest_neighbours: probes: holds ids outside the table's \[0, 300\): "
                                            rf"{shown}; pass token ids"):
            nearest_neighbours(table, np.array(probes), np.arange(300), k=3)
    with pytest.raises(UserError, match=r"nearest_neighbours: candidates: .*300"):
        nearest_neighbours(table, np.array([0]), np.arange(301), k=3)
    assert nearest_neighbours(table, np.array([0, 299]), np.arange(300), k=3).shape == (2, 3)
