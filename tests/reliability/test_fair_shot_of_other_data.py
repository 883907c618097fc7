"""``report --fair-shot FOLDER`` refuses a committed round of other data than the round reported (issue 30 round 20,
K147): a committed round of another grid, corpus and vocabulary was taken and its rules applied to the reported
grid's arms ("beats it by > margin: no"), exit 0. ``report.fair_shot.check_same_data``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_a_committed_round_of_other_data_is_refused_before_anything_is_written(swept, tmp_path):
    committed = Path(shutil.copytree(swept, tmp_path / "committed"))
    rows = [json.loads(line) for line in (committed / "results.jsonl").read_text().splitlines()]
    for row in rows:  # the same grid swept on another corpus: its rows record that corpus's fingerprint
        row["data"]["fingerprint"] = "330f7fc07eb0f53b3eb6a21dff617436998ef23ae9dd6ebe0175c64ae59806df"
    (committed / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = cli(["report", swept, "--fair-shot", committed, "--out", tmp_path / "r", "--bootstrap", "5"])
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_error(done.stderr)
    assert f"--fair-shot '{committed}' holds rows of other data than the round being reported" in line, line
    assert "data fingerprint: " in line and "330f7fc07eb0..." in line, line
    assert not (tmp_path / "r").exists()
