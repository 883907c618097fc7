"""scripts/collect_results.py's own documented flow, rerun: grids collected into DEST, `leviathan report DEST/<grid>...
--ablation --out DEST`, then the same collect and `--rewrite DEST` again (issue 30 round 23, T103, T105).

The second collect was refused ("--dest is the output of `leviathan report --ablation` ... choose another --dest",
a fix that splits the layout the script's docstring gives), and --rewrite left every file of the folder as it is,
each "the output of `leviathan report --ablation`, which reads it again". An ablation report's folder is now one a
results folder may be (``REPORTS``), as a grid's report's folder is.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, swept_grid, tree_hashes  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run evaluated sweep, grid 'tiny')
from test_row_identity import _collect_results, grid_file  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def second(data, tmp_path_factory) -> Path:
    """A sweep of grid 'tiny2': the runs of ``swept`` under another grid name."""
    root = tmp_path_factory.mktemp("second-grid")
    grid = grid_file(root, data)
    grid.write_text(yaml.safe_dump({**yaml.safe_load(grid.read_text()), "name": "tiny2"}))
    return swept_grid(grid, root)


@pytest.fixture
def ablated(swept, second, tmp_path) -> Path:
    """DEST with both grids collected and their ablation report written into it, as the script's docstring shows."""
    dest = tmp_path / "qd"
    assert _collect_results(swept, second, "--dest", dest).returncode == 0
    done = cli(["report", dest / "tiny", dest / "tiny2", "--ablation", "--out", dest])
    assert done.returncode == 0, done.stderr
    return dest


def test_collecting_again_into_the_folder_of_its_ablation_report_is_taken(swept, second, ablated):
    """T103: the rerun was refused as "not a results folder"; it now merges (no new row: the rows are the same)."""
    before = tree_hashes(ablated)
    done = _collect_results(swept, second, "--dest", ablated)
    assert done.returncode == 0, done.stderr
    assert f"{second} -> {ablated / 'tiny2'} (2 rows)" in done.stdout, done.stdout
    assert tree_hashes(ablated) == before


def test_rewrite_of_the_ablation_layout_reads_its_files_as_results_files(ablated):
    """T105: 5 of 5 files "left as they are: its folder is the output of `leviathan report --ablation`"."""
    done = _collect_results("--rewrite", ablated)
    assert done.returncode == 0, done.stderr
    assert "report --ablation" not in done.stderr and "left" not in done.stderr, done.stderr
    assert "hold no machine path" in done.stderr, done.stderr
