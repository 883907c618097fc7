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


@pytest.mark.parametrize("typed", [["eval_interval=3", "log_interval=2"], ["checkpoint_interval=3", "eval_tokens=1024"],
                                   ["keep_last=1"], ["max_steps=1"]])
def test_an_override_equal_to_the_grids_own_base_value_is_not_recorded(data, tmp_path, typed):
    """Round 26, P86, P87: the grid's base is flattened into the same list as the typed overrides, so a typed
    `eval_interval=3` over a base `eval_interval: 3` was a second copy of a text grid.json held already; it was never
    tested and was appended, whatever the key (only the copies beyond grid.json's count are new)."""
    import yaml

    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.idle_overrides import recorded_overrides
    from leviathan.experiments.machinery.sweep import build_run_config, grid_snapshot

    path = one_run_grid(data, tmp_path)
    raw = yaml.safe_load(path.read_text())
    raw["base"].update(eval_interval=3, log_interval=2, checkpoint_interval=3, eval_tokens=1024, keep_last=1)
    path.write_text(yaml.safe_dump(raw))
    grid = load_grid(path)
    (tmp_path / "grid.json").write_text(json.dumps(grid_snapshot(grid)))
    notes = []
    assert recorded_overrides(load_grid(path, overrides=typed), tmp_path, build_run_config, notes.append) \
        == grid.base_overrides
    assert len(notes) == 1 and all(o in notes[0] for o in typed), notes
    changed = load_grid(path, overrides=typed + ["eval_interval=5"])  # a real change is still recorded
    assert recorded_overrides(changed, tmp_path, build_run_config, notes.append) \
        == grid.base_overrides + ["eval_interval=5"]


def test_a_second_copy_of_an_override_is_named_when_two_folders_differ_by_it():
    """Round 26, P86: a folder whose grid.json held a second `eval_interval=3` was refused by report and
    collect_results.py as "base overrides [] only in A, [] only in B": the lists were compared as sets."""
    from leviathan.experiments.machinery.shards import _difference

    line = _difference("base overrides", ["eval_interval=3", "max_steps=1", "eval_interval=3"],
                       ["eval_interval=3", "max_steps=1"], "s1b", "s1")
    assert line == "base overrides ['eval_interval=3'] only in s1b, [] only in s1"
