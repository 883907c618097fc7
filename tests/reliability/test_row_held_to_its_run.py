"""A results row is held to what wrote it: its final numbers to its run's metrics.jsonl, its ``created`` to the time
stamp the sweep writes (issue 30 round 24).

- V14: a row whose final_val_loss, final_val_ppl and curve were edited consistently (its run's metrics.jsonl, which
  the row names, still says otherwise) was collected as is, and `leviathan report` of the sweep tabled the edited
  loss; the sweep holds its own summary (sweep_train.json) to that file (round 14, A233). The report of several
  folders merged as shards holds each folder's rows to its own runs the same way.
- V88: a row's ``created`` of "not a date" was copied as is, while every other field of a row is checked.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, copied_sweep, one_error  # noqa: E402
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def swept(one_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(one_run_sweep, tmp_path_factory, "row-held")


def _edit_first_row(sweep: Path, **fields) -> dict:
    results = sweep / "results.jsonl"
    lines = results.read_text().splitlines()
    row = {**json.loads(lines[0]), **fields}
    results.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    return row


def test_a_row_edited_apart_from_its_metrics_is_refused_by_collect_and_report(swept, tmp_path):
    sweep = Path(shutil.copytree(swept, tmp_path / "s10"))
    row = json.loads((sweep / "results.jsonl").read_text().splitlines()[0])
    curve = {**row["curve"], "val_loss": [*row["curve"]["val_loss"][:-1], 4.0]}
    _edit_first_row(sweep, final_val_loss=4.0, final_val_ppl=math.exp(4.0), curve=curve)
    done = _collect_results(sweep, "--dest", tmp_path / "cs10")
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert f"the row of run {row['name']!r}: final_val_loss 4.0 is not the run's own last validation" in line, line
    assert str(sweep / "runs" / row["name"] / "metrics.jsonl") in line and "nothing was written" in line, line
    assert not (tmp_path / "cs10").exists()
    line = cli_error(["report", sweep, "--out", tmp_path / "rep10"])
    assert "final_val_loss 4.0 is not the run's own last validation" in line, line
    assert not (tmp_path / "rep10").exists()
    line = cli_error(["report", swept, sweep, "--out", tmp_path / "rep11"])  # merged as shards: each folder's own
    assert f"{str(sweep / 'results.jsonl')!r}: the row of run {row['name']!r}: final_val_loss 4.0" in line, line


def test_a_row_without_its_run_folder_is_not_compared(swept, tmp_path):
    """A collected folder holds no runs/: the rule proves nothing there."""
    done = _collect_results(swept, "--dest", tmp_path / "c")
    assert done.returncode == 0, done.stderr
    assert cli(["report", tmp_path / "c" / "g", "--out", tmp_path / "rep"]).returncode == 0


def test_a_row_whose_created_is_no_time_stamp_is_skipped_with_its_field_named(swept, tmp_path):
    sweep = Path(shutil.copytree(swept, tmp_path / "s19"))
    _edit_first_row(sweep, created="not a date")
    done = _collect_results(sweep, "--dest", tmp_path / "cs19")
    assert "has created 'not a date', not a time stamp" in done.stderr, done.stderr
    results = tmp_path / "cs19" / "g" / "results.jsonl"
    assert not results.exists() or "not a date" not in results.read_text()


def test_the_created_rule():
    from leviathan.experiments.machinery.results import row_problem

    assert row_problem({"name": "r", "created": "2026-12-06T04:28:12+00:00"}) is None
    for value in ("not a date", "2026-12-06T04:28:12", 5):  # no zone: the sweep writes UTC with its zone
        assert row_problem({"name": "r", "created": value}) is not None, value
