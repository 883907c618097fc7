"""Rows that measured one thing are told apart from rows that did not, whether read from a file or handed over in
Python (issue 30 round 17).

- E180, E181: two rows of one run, the same measurement but trained at 917 and 5000 tokens/s or on another CPU, were
  counted once with a note that said nothing of the speed or hardware dropped (``identity.resolve_duplicates``).
- E322, E323, E324: ``paired_comparisons`` took rows edited in Python unchecked: a NaN loss became "no pairs" beside
  the same pair's bpb, a seed of True and a second row of one arm dropped rows without a word
  (``results.check_typed_rows``).
- G318 (round 18): a row whose ``evaluation`` was deleted was reported beside rows that record theirs, no word
  (``identity.unrecorded_evaluation_note``); G213, G469: a NaN paired difference was left out of the interval, and
  a coverage of 2.0 or NaN was taken by ``paired_comparisons`` (``paired._diffs_problem``, ``paired.check_ci``).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402
from test_row_identity import _collect_results  # noqa: E402

from reliability_support import cli, one_error  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


OTHER_CPU = "a CPU no machine reports"  # a real name (it was "AMD EPYC") can be the machine the test runs on


def _with_faster_copy(swept: Path, folder: Path) -> Path:
    sweep = Path(shutil.copytree(swept, folder))
    rows = [json.loads(line) for line in (sweep / "results.jsonl").read_text().splitlines()]
    again = dict(rows[1], tokens_per_s=5000.0, hardware=dict(rows[1]["hardware"], cpu=OTHER_CPU))
    with open(sweep / "results.jsonl", "a") as f:
        f.write(json.dumps(again) + "\n")
    return sweep


@pytest.mark.parametrize("argv", [["analyze", "throughput", "SW"], ["report", "SW", "--out", "REP", "--bootstrap", "5"]],
                         ids=["E180-throughput", "E181-report"])
def test_a_run_measured_twice_at_other_speeds_says_which_speed_is_shown(swept, tmp_path, argv):
    sweep = _with_faster_copy(swept, tmp_path / "sw")
    done = cli([{"SW": sweep, "REP": tmp_path / "rep"}.get(a, a) for a in argv])
    assert done.returncode == 0, done.stderr
    assert "the same measurement each time; counted once (the first), but measured at another speed or on other " \
           "hardware (tokens_per_s: " in done.stderr, done.stderr
    assert "hardware.cpu: " in done.stderr and f"'{OTHER_CPU}' (line 3)" in done.stderr, done.stderr


def _nan_loss(rows):
    rows[1].eval["val"] = dataclasses.replace(rows[1].eval["val"], loss=float("nan"))


def _no_config(rows):  # an arm given twice under two names, with nothing else to tell them apart
    for row in rows:
        row.config = None
    rows[1].variant = rows[0].variant


@pytest.mark.parametrize("edit, said", [
    (_nan_loss, "rows[1] ('a-dense_untied-s0') holds NaN or infinity"),
    (lambda rows: setattr(rows[1], "seed", True), "rows[1] ('a-dense_untied-s0') has seed True, not a whole number"),
    (lambda rows: setattr(rows[1], "variant", "dense_tied"), "rows[1] ('a-dense_untied-s0') has variant 'dense_tied' "
                                                             "but its config says model.embedding: 'dense_untied'"),
    # the edited row's own name names its true variant, which round 27's S571 rule refuses first
    (_no_config, "rows[1] ('a-dense_untied-s0') has name 'a-dense_untied-s0', which names variant 'dense_untied', but "
                 "its variant is 'dense_tied'"),
], ids=["E322-nan", "E323-seed", "E324-variant", "E324-two-names"])
def test_paired_comparisons_refuses_rows_the_file_reader_would_refuse(swept, edit, said):
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.method.paired import paired_comparisons, paired_of

    rows = read_results(swept)
    assert len(paired_comparisons(rows)) == 1  # the rows as read pair
    edit(rows)
    with pytest.raises(ValueError, match=r"^paired_comparisons: " + __import__("re").escape(said)):
        paired_comparisons(rows)
    with pytest.raises(ValueError, match="paired_of: "):
        paired_of(rows, ("a", "dense_untied"), ("a", "dense_tied"), "iso_body")


def test_an_ablation_of_two_folders_of_one_grid_swept_otherwise_is_refused(swept, tmp_path):
    """D235: ``report --ablation sw1 swB`` (swB: the same grid swept with --seeds 1 optim.lr=0.001) wrote two identical
    rows 'tiny/a' of different runs, exit 0, where the plain report refuses the pair. Two folders of one grid are
    read as its shards (``shards.check_shard_settings``): other settings are refused before --out is made."""
    done = cli(["sweep", "--grid", swept.parent / "grid.yaml", "--out", tmp_path / "swB", "--seeds", "1", "optim.lr=0.001"])
    assert done.returncode == 0, done.stderr
    done = cli(["report", "--ablation", swept, tmp_path / "swB", "--out", tmp_path / "rab"])
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: report --ablation reads two folders of one grid as its shards, and these "
                                  "shards of grid 'tiny' were started with different settings (base overrides [] "
                                  f"only in {swept}, ['optim.lr=0.001'] only in {tmp_path / 'swB'}; seeds: [0]"), \
        done.stderr
    assert not (tmp_path / "rab").exists()


def test_a_row_that_records_no_evaluation_beside_rows_that_do_is_named(swept, tmp_path):
    """G318: the sweep's second row with its ``evaluation`` field deleted was reported beside the first (which records
    eval max_tokens etc.), exit 0, report.md without a note, where the same row recording other settings is refused.
    report (a real process) and collect_results now name it; rows that all record none (old rows) stay quiet."""
    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    path = sweep / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    name = rows[1].pop("evaluation") and rows[1]["name"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    said = f"1 row(s) of {sweep} record no evaluation settings ({name}) while the others do ({rows[0]['name']})"
    done = cli(["report", sweep, "--out", tmp_path / "rep", "--bootstrap", "5"])
    assert done.returncode == 0 and f"warning: {said}" in done.stderr, done.stderr
    assert said in (tmp_path / "rep" / "report.md").read_text()
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 0 and f"warning: {said}" in done.stderr, done.stderr
    rows[0].pop("evaluation")  # every row without one: rows written before rows recorded it, nothing to compare
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = cli(["report", sweep, "--out", tmp_path / "rep2", "--bootstrap", "5"])
    assert done.returncode == 0 and "record no evaluation settings" not in done.stderr, done.stderr


def test_paired_statistics_refuse_a_nan_difference_and_a_coverage_outside_0_1(swept):
    """G213: ``t_interval([1.0, nan, 2.0])`` left the NaN out, n=2, no word; G469: ``paired_comparisons(rows,
    ci=2.0)`` (or nan) was taken, no interval drawn with one seed (and [nan, nan] with several). None is still a pair
    without a difference."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.method.paired import paired_comparisons, paired_of, t_interval

    for diffs in ([1.0, float("nan"), 2.0], [1.0, float("inf")]):
        with pytest.raises(UserError, match=r"t_interval: diffs: diffs\[1\] is (nan|inf), not a finite difference"):
            t_interval(diffs)
    assert t_interval([1.0, None, 2.0]).n == 2
    rows = read_results(swept)
    for ci in (2.0, float("nan"), 0):
        with pytest.raises(UserError, match="paired_comparisons: ci: "):
            paired_comparisons(rows, ci=ci)
        with pytest.raises(UserError, match="paired_comparisons: ci: "):
            paired_comparisons([], ci=ci)  # no rows: still the argument's rule
        with pytest.raises(UserError, match="paired_of: ci: "):
            paired_of(rows, ("a", "dense_untied"), ("a", "dense_tied"), "iso_body", ci=ci)
    assert len(paired_comparisons(rows, ci=0.9)) == 1

def test_rows_of_one_size_and_seed_that_trained_other_budgets_are_not_paired(swept, tmp_path):
    """F89, F90: a results file whose two rows of size 'a', seed 0 trained 2 and 60 steps (a row of another sweep of
    the same grid name, or its grid field edited) was paired by ``analyze compare`` and ``report`` as "same tokens in
    the same order", 'reduction +71.7%', exit 0: the check existed only when grid.json lay beside the rows. Without
    grid.json the rows' own budgets are compared; the rows as swept still compare."""
    rows = [json.loads(line) for line in (swept / "results.jsonl").read_text().splitlines()]
    mixed = tmp_path / "mx"
    mixed.mkdir()
    (mixed / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert cli(["analyze", "compare", mixed / "results.jsonl"]).returncode == 0
    steps, tokens = rows[1]["steps"], rows[1]["tokens"]
    rows[1].update(steps=steps * 30, tokens=tokens * 30)
    rows[1]["config"]["max_steps"] = steps * 30
    (mixed / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for argv in (["analyze", "compare", mixed / "results.jsonl"], ["report", mixed, "--out", tmp_path / "rep"]):
        proc = cli(argv)
        line = one_error(proc.stderr)
        assert proc.returncode == 2 and "of size 'a', seed 0 trained different budgets" in line, line
        assert f"{steps * 30} steps, {tokens * 30:,} tokens" in line, line
    assert not (tmp_path / "rep").exists()


def test_rows_measuring_one_eval_text_differently_name_the_text_file_not_an_edit(swept, tmp_path):
    """P541: two shards of a grid whose eval set reads a text file, the file replaced between their runs: refused as
    "a row was edited: put back the row you trust", while no row was edited. The rows record the text's path only, so
    a difference only on such sets now names the file and that it changed."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.identity import check_one_data
    from leviathan.experiments.machinery.results import read_results

    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    text = tmp_path / "valtext.txt"
    rows = [json.loads(line) for line in (sweep / "results.jsonl").read_text().splitlines()]
    for k, row in enumerate(rows):
        row["evaluation"]["sets"]["extra"] = {"split": None, "text": str(text)}
        row["eval"]["extra"] = dict(row["eval"]["val"], bpb=row["eval"]["val"]["bpb"] * (1 + 0.03 * k))
    (sweep / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    read = read_results(sweep)
    assert len(read) == 2
    with pytest.raises(UserError) as caught:
        check_one_data(read, "these shards")
    said = str(caught.value)
    assert f"evaluated the text file '{text}' of their eval set(s) alike but measured it differently (eval.extra: bpb " \
           f"/ loss" in said and "the file most likely changed between the runs" in said, said
    assert "put back the row you trust" not in said
    rows[1]["eval"]["val"]["bpb"] *= 1.03  # a split of the data folder measured apart: an edit, as before
    (sweep / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(UserError, match="so a row was edited: put back the row you trust"):
        check_one_data(read_results(sweep), "these shards")
