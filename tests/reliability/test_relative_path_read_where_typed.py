"""A relative path is read where the user typed it, also by a script that works in another folder (issue 30 round 25,
X35: `same_numbers.py --grid g3.yaml` ran each commit's sweep inside its worktree, where the relative path named
nothing: "grid file 'g3.yaml' does not exist", while the file was there; --data-dir was made absolute in round 24)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_error, one_run_grid, script  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="a comparison of commits needs the git checkout")
def test_same_numbers_reads_a_relative_grid_where_it_was_typed(data, tmp_path):
    one_run_grid(data, tmp_path)  # tmp_path/g.yaml; --run nope: the grid is read, nothing is trained
    done = script("same_numbers.py", ["--grid", "g.yaml", "--run", "nope", "--data-dir", data, "--steps", "1",
                                      "HEAD", "HEAD"], cwd=tmp_path, timeout=300)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "does not exist" not in line and "nope" in line, done.stderr
