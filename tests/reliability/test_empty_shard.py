"""A shard past the runs of its selection has nothing to do, and says so in one line, exit 0 (issue 30 round 21,
N285, N286): ``sweep --shard 3/3`` of a 2-run grid was refused as "no run of grid 'g' matches the selection ... give
--only a name or a pattern", naming neither the cause (more shards than runs) nor the way out, and failed the extra
task of a job array. The decision (``shards.empty_shard``): such a task writes nothing and exits 0."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, one_run_grid  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.fixture
def two_run_grid(data, tmp_path) -> Path:
    path = one_run_grid(data, tmp_path)
    grid = yaml.safe_load(path.read_text())
    grid["experiments"]["iso_body"]["variants"] = ["dense_tied", "leviathan"]
    path.write_text(yaml.safe_dump(grid))
    return path


@pytest.mark.parametrize("shown", [[], ["--list"], ["--commands"]], ids=["N286-sweep", "N285-list", "commands"])
def test_a_shard_past_the_runs_says_it_has_none_and_exits_0(two_run_grid, tmp_path, shown):
    done = cli(["sweep", "--grid", two_run_grid, "--out", tmp_path / "s", "--shard", "3/3", *shown])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "shard 3/3 of grid 'g' has no runs: the selection has 2 runs for 3 shards, so shard 3 is empty; nothing to do, "
        "nothing written (exit 0, as a job array's extra task wants); --shard I/2 gives every task a run"), done.stdout
    assert not (tmp_path / "s").exists()


def test_a_selection_of_no_run_is_still_refused_with_a_shard(two_run_grid, tmp_path):
    """An --only that matches nothing is the user's mistake, shard or not: the line of round 15 (A103) stays."""
    line = cli_error(["sweep", "--grid", two_run_grid, "--out", tmp_path / "s", "--shard", "3/3", "--only", "zz*"])
    assert "no run of grid 'g' matches the selection (--only 'zz*')" in line, line


def test_run_sweep_of_an_empty_shard_returns_no_rows(two_run_grid, tmp_path):
    """The Python API follows the command: the line through ``log``, no rows, nothing written."""
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import SweepOptions, run_sweep

    said = []
    assert run_sweep(load_grid(two_run_grid), tmp_path / "s", SweepOptions(shard=(3, 3)), log=said.append) == []
    assert said and said[0].startswith("shard 3/3 of grid 'g' has no runs"), said
    assert not (tmp_path / "s").exists()
