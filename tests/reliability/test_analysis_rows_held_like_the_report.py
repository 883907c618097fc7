"""Rows handed to ``analyze`` and the method functions in Python are held to the rules the report holds a results file
to (issue 30 round 23; ``results.check_typed_rows``, ``results.check_eval_set_held``).

- U415, U416: rows of a real sweep, one of them evaluated at eval.seq_len 16 and the other at 32, were compared by
  ``analyze`` and ``paired_comparisons`` without a word, where ``report`` refuses them ("evaluated differently");
  the other functions that compare eval numbers (``frequency_from_results``, ``scaling_from_results``,
  ``width_panel``, ``paired_of``, ``comparison_table``, ``lr_sweep.pick_learning_rates``) now refuse them too.
- U423, judged right by design: ``efficiency_from_results`` compares the validation curves recorded during training,
  which the eval section (sets, seq_len, max_tokens, buckets) does not decide; its entries are the same whatever
  the rows' evaluation says.
- U417: ``analyze(rows + rows)`` counted 8 runs for 4; a run given twice is counted once and the Analysis notes it,
  and two different rows of one run are refused naming both.
- U420: ``analyze(rows, eval_set='nope')`` returned comparisons of loss None; an eval set no row was evaluated on is
  refused, naming the sets the rows hold (``frequency_from_results`` returned [] for it and ``pick_learning_rates``
  called every arm diverged: refused now too).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _evaluated_at_16(swept: Path, folder: Path) -> list:
    """The sweep's rows read back from a copy whose second row records eval.seq_len 16 (as U415's repro edits it)."""
    from leviathan.experiments.machinery.results import read_results

    sweep = Path(shutil.copytree(swept, folder))
    lines = [json.loads(line) for line in (sweep / "results.jsonl").read_text().splitlines()]
    lines[1]["evaluation"]["options"]["seq_len"] = 16
    (sweep / "results.jsonl").write_text("".join(json.dumps(d) + "\n" for d in lines))
    rows = read_results(sweep)
    assert [r.evaluation.options.seq_len for r in rows][1] == 16 and rows[0].evaluation.options.seq_len != 16
    return rows


def _comparers():
    from leviathan.experiments.method.frequency import frequency_from_results
    from leviathan.experiments.method.lr_sweep import pick_learning_rates
    from leviathan.experiments.method.paired import paired_comparisons, paired_of
    from leviathan.experiments.method.scaling import scaling_from_results
    from leviathan.experiments.method.width import width_panel
    from leviathan.experiments.report.analysis import analyze, comparison_table

    return {
        "analyze": analyze, "paired_comparisons": paired_comparisons, "frequency_from_results": frequency_from_results,
        "scaling_from_results": lambda rows: scaling_from_results(rows, "dense_tied"), "width_panel": width_panel,
        "paired_of": lambda rows: paired_of(rows, ("a", "dense_untied"), ("a", "dense_tied"), "iso_body"),
        "comparison_table": lambda rows: comparison_table(rows, "iso_body", "dense_tied"),
        "pick_learning_rates": pick_learning_rates,
    }


@pytest.mark.parametrize("who", ["analyze", "paired_comparisons", "frequency_from_results", "scaling_from_results",
                                 "width_panel", "paired_of", "comparison_table", "pick_learning_rates"])
def test_rows_evaluated_differently_are_refused_naming_the_setting(swept, tmp_path, who):
    from leviathan.errors import UserError

    rows = _evaluated_at_16(swept, tmp_path / "sw")
    with pytest.raises(UserError, match=rf"^{who}: the rows of this call were evaluated differently \(eval\.seq_len: "
                                        rf"\d+ for a-dense_tied-s0, 16 for a-dense_untied-s0\); .*report them "
                                        rf"separately$") as caught:
        _comparers()[who](rows)
    assert isinstance(caught.value, ValueError)  # still the ValueError the functions' rows errors are


def test_sample_efficiency_does_not_depend_on_the_eval_section_by_design(swept, tmp_path):
    """U423: the curves compared are the training run's validation points, which the eval section does not decide."""
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.method.efficiency import efficiency_from_results

    mixed = efficiency_from_results(_evaluated_at_16(swept, tmp_path / "sw"))
    assert mixed and mixed[0].error is None
    assert [e.as_dict() for e in mixed] == [e.as_dict() for e in efficiency_from_results(read_results(swept))]


def test_a_run_given_twice_is_counted_once_with_a_note(swept):
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.report.analysis import analyze

    rows = read_results(swept)
    once, twice = analyze(rows, num_bootstrap=5), analyze(rows + rows, num_bootstrap=5)
    assert twice.num_runs == once.num_runs == 2
    assert [e.as_dict() for e in twice.comparisons["iso_body"]] == [e.as_dict() for e in once.comparisons["iso_body"]]
    assert once.notes is None
    assert twice.notes == [f"run {r.name!r} appears 2 times in the rows given (rows[{i}], rows[{i + 2}]), the same "
                           f"measurement each time; counted once (the first)" for i, r in enumerate(rows)]


def _other_loss(row):
    """``row`` with its validation loss 0.5 higher, a consistent row: its buckets are the same evaluation's, so they
    move with it (a row whose eval.val.loss disagrees with its buckets' is refused as edited, round 26, P14)."""
    val = row.eval["val"]
    loss = val.loss + 0.5
    buckets = {name: dataclasses.replace(
        b, loss=[x if x is None else x + 0.5 for x in b.loss],
        ppl=None if b.ppl is None else [x if x is None else math.exp(x + 0.5) for x in b.loss],
        overall_loss=None if b.overall_loss is None else b.overall_loss + 0.5) for name, b in row.buckets.items()}
    return dataclasses.replace(row, buckets=buckets, eval={**row.eval, "val": dataclasses.replace(
        val, loss=loss, ppl=math.exp(loss), bpb=None if val.bpb is None else val.bpb * loss / val.loss)})


@pytest.mark.parametrize("who", ["analyze", "paired_comparisons", "frequency_from_results", "width_panel"])
def test_two_different_rows_of_one_run_are_refused_naming_both(swept, who):
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import read_results

    rows = read_results(swept)
    with pytest.raises(UserError, match=rf"^{who}: run 'a-dense_untied-s0' has two different rows in the rows given "
                                        rf"\(rows\[1\] and rows\[2\]; they differ in eval, buckets\): .*call it again$"):
        _comparers()[who](rows + [_other_loss(rows[1])])


@pytest.mark.parametrize("who", ["analyze", "frequency_from_results", "width_panel", "comparison_table",
                                 "pick_learning_rates"])
def test_an_eval_set_no_row_was_evaluated_on_is_refused_naming_the_held_ones(swept, who):
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.method.frequency import frequency_from_results
    from leviathan.experiments.method.lr_sweep import pick_learning_rates
    from leviathan.experiments.method.width import width_panel
    from leviathan.experiments.report.analysis import analyze, comparison_table

    rows = read_results(swept)
    held = sorted(rows[0].eval)
    call = {"analyze": lambda: analyze(rows, eval_set="nope"),
            "frequency_from_results": lambda: frequency_from_results(rows, eval_set="nope"),
            "width_panel": lambda: width_panel(rows, eval_set="nope"),
            "comparison_table": lambda: comparison_table(rows, "iso_body", "dense_tied", "nope"),
            "pick_learning_rates": lambda: pick_learning_rates(rows, "nope")}[who]
    with pytest.raises(UserError, match=re.escape(f"{who}: eval_set: no row was evaluated on 'nope'; pass one the "
                                                  f"rows hold: {', '.join(held)}")):
        call()
