"""A run given twice to a comparison is refused, naming the run (issue 30 round 29, W310).

``paired_comparisons(rows + rows)`` paired every run as once, without a word: ``results.check_typed_rows`` kept a
repeated run once by ``read_results``' rule, but dropped the note that says so for every caller with no notes to
say it in. ``read_results`` and ``analyze`` (the report's path) count a repeat once and say so; the functions that
cannot say it now refuse it, naming the run and its places.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from leviathan.errors import ArgumentValueError
from leviathan.experiments.machinery.results import read_results
from leviathan.experiments.method.paired import paired_comparisons
from leviathan.experiments.report.analysis import analyze, comparison_table

pytestmark = [pytest.mark.reliability]


def test_paired_comparisons_refuses_a_run_given_twice(two_run_sweep):
    rows = read_results(two_run_sweep)
    assert [c.model_runs for c in paired_comparisons(rows)] == [[rows[1].name]]
    with pytest.raises(ArgumentValueError, match=rf"^paired_comparisons: run '{rows[0].name}' appears 2 times in the "
                                                 r"rows given \(rows\[0\], rows\[2\]\), the same measurement each "
                                                 r"time; pass each run once, as read_results returns them"):
        paired_comparisons(rows + rows)
    with pytest.raises(ArgumentValueError, match=rf"^comparison_table: run '{rows[1].name}' appears 2 times"):
        comparison_table(rows + rows[1:], "iso_body", "dense_tied")


def test_analyze_still_counts_a_repeat_once_and_says_so(two_run_sweep):
    rows = read_results(two_run_sweep)
    analysis = analyze(rows + rows, num_bootstrap=0)
    assert analysis.num_runs == 2 and len(analysis.notes) == 2
    assert "the same measurement each time; counted once (the first)" in analysis.notes[0]
