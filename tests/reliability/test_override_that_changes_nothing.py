"""An override equal in value to what the grid gives is no change to a swept folder's record (issue 30 round 25, X66:
`sweep --grid g.yaml --out s1 optim.lr=3e-3`, the grid's own lr spelt another way, on a finished s1 trained nothing
yet appended the override to s1/grid.json's base_overrides without a word; from then on s1 and its own collected copy
were refused as "started with different settings")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_run_grid, script, swept_grid  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_an_equal_override_on_a_finished_sweep_is_named_and_not_recorded(data, tmp_path, capsys):
    from leviathan.cli import main

    grid = one_run_grid(data, tmp_path)
    sweep = swept_grid(grid, tmp_path)
    assert script("collect_results.py", [sweep, "--dest", tmp_path / "cA"]).returncode == 0
    before = json.loads((sweep / "grid.json").read_text())["base_overrides"]
    capsys.readouterr()
    assert main(["sweep", "--grid", str(grid), "--out", str(sweep), "optim.lr=0.0003"]) == 0  # the default lr, 3e-4
    said = capsys.readouterr()
    assert "0 to go" in said.out and "note: optim.lr=0.0003 changes no run's settings" in said.out + said.err
    assert json.loads((sweep / "grid.json").read_text())["base_overrides"] == before
    done = script("collect_results.py", [sweep, "--dest", tmp_path / "cA"])  # its own collected copy still merges
    assert done.returncode == 0, done.stderr
