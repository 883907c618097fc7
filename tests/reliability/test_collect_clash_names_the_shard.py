"""Two sweeps of one call to scripts/collect_results.py that clash are named as the two sweeps (issue 30 round 20,
K49, K50, K51): the line blamed 'the rows in DEST/<grid>', a folder that did not exist, and told to collect into
another --dest, which fails the same way; now it names the sweep of this call whose rows it holds and says to
collect the other on its own."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _shards(swept: Path, tmp_path: Path) -> tuple[Path, Path]:
    """shA: the first run's row; shB: the second run's row, started with ``optim.lr=0.05``."""
    rows = (swept / "results.jsonl").read_text().splitlines(keepends=True)
    a, b = (Path(shutil.copytree(swept, tmp_path / name)) for name in ("shA", "shB"))
    (a / "results.jsonl").write_text(rows[0])
    row = json.loads(rows[1])
    row["config"]["optim"]["lr"] = 0.05
    (b / "results.jsonl").write_text(json.dumps(row) + "\n")
    grid = json.loads((b / "grid.json").read_text())
    grid["base_overrides"] = [*grid["base_overrides"], "optim.lr=0.05"]
    (b / "grid.json").write_text(json.dumps(grid))
    return a, b


def test_a_clash_between_two_sweeps_of_one_call_names_the_first_sweep_not_the_absent_dest(swept, tmp_path):
    a, b = _shards(swept, tmp_path)
    done = _collect_results(a, b, "--dest", tmp_path / "res")
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_error(done.stderr)
    assert f"{b} was started with other settings than the rows in {a} (base overrides [] only in {a}, " \
           f"['optim.lr=0.05'] only in {b})" in line, line
    assert f"collect {b} on its own into another --dest (not beside {a}), or resweep it with the settings of " \
           f"{a}/grid.json" in line, line
    assert str(tmp_path / "res") not in line and not (tmp_path / "res").exists()
