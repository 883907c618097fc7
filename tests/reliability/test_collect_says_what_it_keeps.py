"""scripts/collect_results.py keeps, and says, what it merges: nothing it held is dropped or left stale without a word
(issue 30 round 24).

- V15: two sweeps of one grid with other --seeds collected into one --dest: the grid.json of the second replaced the
  first's, and the report of the folder then called the first's rows "runs the grid no longer has". The records
  are merged (seeds and runs of both) with a note.
- V117: a row given twice in the sweep's results.jsonl was dropped without a word, and "(2 rows)" printed for 1.
- V118: a repeat differing only in its speed was refused as "a row in the results folder and a different one in the
  sweep folder", where both were in the sweep's file; `leviathan report` counts the first with a note, as collect now
  does.
- V126: rows collected into DEST/<grid> beside its report (written in place, as the script documents) left the
  report looking current.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_run_grid, swept_grid  # noqa: E402
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def sweeps(data, tmp_path_factory) -> tuple[Path, Path]:
    """Two sweep folders of grid g: seed 0, and seed 1 (``--seeds 1``)."""
    from leviathan.cli import main

    root = tmp_path_factory.mktemp("collect-keeps")
    grid = one_run_grid(data, root)
    assert main(["sweep", "--grid", str(grid), "--seeds", "1", "--out", str(root / "s2")]) == 0
    return swept_grid(grid, root), root / "s2"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_two_sweeps_of_other_seeds_keep_both_grid_records(sweeps, tmp_path):
    s1, s2 = sweeps
    done = _collect_results(s1, s2, "--dest", tmp_path / "cm")
    assert done.returncode == 0, done.stderr
    grid = json.loads((tmp_path / "cm" / "g" / "grid.json").read_text())
    assert grid["seeds"] == [0, 1] and {run["name"] for run in grid["runs"]} == {"a-dense_tied-s0", "a-dense_tied-s1"}
    assert "lists the runs of" in done.stderr and "seeds [0, 1]" in done.stderr, done.stderr
    report = cli(["report", tmp_path / "cm" / "g", "--out", tmp_path / "rep"])
    assert report.returncode == 0, report.stderr
    assert "no longer has" not in report.stderr, report.stderr
    again = _collect_results(s2, "--dest", tmp_path / "cm")  # the record already holds both: no note
    assert again.returncode == 0 and "lists the runs of" not in again.stderr, again.stderr


def test_a_row_given_twice_is_said_and_counted_once(sweeps, tmp_path):
    sweep = Path(shutil.copytree(sweeps[0], tmp_path / "sdup"))
    results = sweep / "results.jsonl"
    first = results.read_text().splitlines()[0]
    with results.open("a") as f:
        f.write(first + "\n")
    done = _collect_results(sweep, "--dest", tmp_path / "c")
    assert done.returncode == 0, done.stderr
    assert "(1 rows)" in done.stdout, done.stdout
    assert "appears 2 times in" in done.stderr and "counted once (the first)" in done.stderr, done.stderr
    assert len(_rows(tmp_path / "c" / "g" / "results.jsonl")) == 1


def test_a_repeat_at_another_speed_is_counted_once_as_the_report_does(sweeps, tmp_path):
    sweep = Path(shutil.copytree(sweeps[0], tmp_path / "sdup2"))
    results = sweep / "results.jsonl"
    row = _rows(results)[0]
    with results.open("a") as f:
        f.write(json.dumps({**row, "wall_time_s": 99.0, "tokens_per_s": 5.0}) + "\n")
    done = _collect_results(sweep, "--dest", tmp_path / "c2")
    assert done.returncode == 0, done.stderr
    assert "in the results folder" not in done.stderr, done.stderr
    assert "appears 2 times in" in done.stderr and "tokens_per_s" in done.stderr, done.stderr
    copied = _rows(tmp_path / "c2" / "g" / "results.jsonl")
    assert len(copied) == 1 and copied[0]["tokens_per_s"] == row["tokens_per_s"]


def test_rows_collected_beside_a_report_say_it_is_stale(sweeps, tmp_path):
    s1, s2 = sweeps
    out = tmp_path / "cR" / "g"
    assert _collect_results(s1, "--dest", tmp_path / "cR").returncode == 0
    assert cli(["report", out, "--out", out]).returncode == 0
    done = _collect_results(s2, "--dest", tmp_path / "cR")
    assert done.returncode == 0, done.stderr
    assert f"note: {str(out / 'report.md')!r} was written from the rows {out} held before" in done.stderr, done.stderr
    assert f"`leviathan report {out} --out {out}`" in done.stderr, done.stderr
    again = _collect_results(s2, "--dest", tmp_path / "cR")  # nothing new: the report is not called stale
    assert again.returncode == 0 and "report.md" not in again.stderr, again.stderr
