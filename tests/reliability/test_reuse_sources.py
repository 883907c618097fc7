"""``sweep --reuse``: a source whose rows are not reused says why, and a folder of grid folders names the one to pass
(issue 30 round 20, ``experiments.machinery.reuse``).

K84: ``--reuse`` of a sweep whose row of the same run trained another budget (or corpus) reused nothing and said
nothing ("0 already ..., 2 to go"), exit 0. K222: ``--reuse DEST``, the --dest root of scripts/collect_results.py
(its rows in DEST/GRID/results.jsonl), was "no rows there yet; nothing reused from it" and every run trained again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, copied_sweep, tree_hashes  # noqa: E402
from test_row_identity import _collect_results, grid_file  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def swept(two_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(two_run_sweep, tmp_path_factory, "reuse-sources")


def test_a_row_of_another_budget_is_not_reused_and_the_sweep_says_why(swept, data, tmp_path):
    grid = grid_file(tmp_path, data)
    done = cli(["sweep", "--grid", grid, "--out", tmp_path / "again", "--reuse", swept, "--only", "a-dense_tied-s0",
                "max_steps=1"])
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert (f"--reuse {swept}: a-dense_tied-s0 not reused: its row a-dense_tied-s0 differs (max_steps: 2 in the row, "
            f"1 now); it trains here") in said, said


def test_the_root_of_collected_results_names_its_grid_folder(swept, data, tmp_path):
    done = _collect_results(swept, "--dest", tmp_path / "res")
    assert done.returncode == 0, done.stderr
    before = tree_hashes(tmp_path / "res")
    line = cli_error(["sweep", "--grid", grid_file(tmp_path, data), "--out", tmp_path / "again", "--reuse",
                      tmp_path / "res"])
    assert "holds no results.jsonl itself, but its subfolders do" in line, line
    assert f"pass --reuse {tmp_path / 'res' / 'tiny'}" in line, line
    assert not (tmp_path / "again").exists() and tree_hashes(tmp_path / "res") == before
