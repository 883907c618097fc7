"""A sweep folder's grid.json that does not say what its rows are is named, alike by ``leviathan report`` and by
``scripts/collect_results.py`` (issue 30 round 17; ``experiments.machinery.grid_coverage``).

Before, a grid.json whose runs were edited to ``[]`` passed every row without a word (D310), one whose seeds named
a seed none of its runs has was taken as it was (E52), and collect_results copied into the repository what the
report of the same folder noted (E52, E56) or a grid.json without its unigram plateau (E332), exit 0.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, copied_sweep, tree_hashes  # noqa: E402
from test_row_identity import _collect_results, grid_file  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def swept(two_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(two_run_sweep, tmp_path_factory, "grid-notes")


def _edited(swept: Path, folder: Path, change) -> Path:
    copy = Path(shutil.copytree(swept, folder))
    grid = json.loads((copy / "grid.json").read_text())
    change(grid)
    (copy / "grid.json").write_text(json.dumps(grid, indent=1))
    return copy


@pytest.mark.parametrize("change, said", [
    (lambda g: g.update(runs=[]), "2 row(s) of SRC are of runs grid.json does not list (a-dense_tied-s0, "
                                  "a-dense_untied-s0)"),
    (lambda g: g.update(runs=g["runs"][:1]), "1 row(s) of SRC are of runs grid.json does not list "
                                             "(a-dense_untied-s0)"),
    (lambda g: g.update(seeds=[0, 1]), "SRC's grid.json lists seeds [0, 1], but none of its runs has seed 1"),
], ids=["D310-no-runs", "E56-one-run", "E52-seeds"])
def test_report_and_collect_note_a_grid_json_that_does_not_list_the_rows(swept, tmp_path, change, said):
    """D310, E52, E56: report (a real process) and collect_results note the grid.json the same way; before, D310
    and E52 passed both without a word and E56 was noted by report only."""
    sweep = _edited(swept, tmp_path / "sw", change)
    said = said.replace("SRC", str(sweep))
    done = cli(["report", sweep, "--out", tmp_path / "rep", "--bootstrap", "5"])
    assert done.returncode == 0 and f"note: {said}" in done.stderr, done.stderr
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 0 and f"note: {said}" in done.stderr, done.stderr


def test_the_sweeps_own_grid_json_gives_no_note(swept, tmp_path):
    done = _collect_results(swept, "--dest", tmp_path / "res")
    assert done.returncode == 0 and "note:" not in done.stderr, done.stderr


def test_collect_says_when_it_stores_a_grid_json_without_the_plateau(swept, tmp_path):
    """E332: grid.json's data_dir edited to a folder that is not the sweep's data: the copy was stored without
    unigram_entropy, exit 0, no word (report notes the plateau it cannot show)."""
    sweep = _edited(swept, tmp_path / "sw", lambda g: g.update(data_dir=str(tmp_path / "data2")))
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "res" / "tiny" / "grid.json").read_text())["unigram_entropy"] is None
    assert "is stored without the unigram plateau: grid.json's data folder" in done.stderr, done.stderr


def test_a_grid_json_whose_data_seed_is_not_the_rows_is_refused_and_a_data_seed_without_effect_too(swept, tmp_path):
    """D313: grid.json's data_seed edited to 7 (the rows: 0) was reported without a word. A grid's data_seed is
    every run's once ``keys.data_seed`` names where it goes, and a grid file with data_seed but no keys.data_seed
    (a setting read, recorded in grid.json and used by no run) is now refused where it is read; so a row whose
    data_seed is not grid.json's is refused by report and collect_results (``grid_agreement``), as B20's run-level
    data_seed is."""
    sweep = _edited(swept, tmp_path / "sw", lambda g: g.update(data_seed=7))
    said = f"{sweep}/grid.json does not describe the rows of {sweep} (2 difference(s): a-dense_tied-s0: data_seed: 0 " \
           f"in the row, 7 in grid.json's data_seed"
    done = cli(["report", sweep, "--out", tmp_path / "rep", "--bootstrap", "5"])
    assert done.returncode == 2 and done.stderr.startswith(f"error: {said}"), done.stderr
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 2 and done.stderr.startswith(f"error: {said}"), done.stderr
    grid = swept.parent / "grid.yaml"
    (tmp_path / "g.yaml").write_text(grid.read_text() + "data_seed: 7\n")
    done = cli(["sweep", "--grid", tmp_path / "g.yaml", "--out", tmp_path / "sw7", "--list"])
    assert done.returncode == 2 and "error: grid 'tiny': data_seed: 7 has no effect" in done.stderr, done.stderr


def test_a_collected_results_folder_is_not_a_sweeps_out(swept, data, tmp_path):
    """Round 19 (H170, H171): `sweep --out RESULTS/<grid>`, a folder collect_results wrote (no marker; its grid.json
    with the unigram entropy collect adds), was taken as an earlier sweep of its own: run folders, a sweep marker and a
    new row went among the committed rows, exit 0, and collect_results then refused the folder as a sweep's output.
    It is refused before anything is written, pointing to --reuse, which continues a sweep from such rows."""
    done = _collect_results(swept, "--dest", tmp_path / "res")
    assert done.returncode == 0, done.stderr
    collected = tmp_path / "res" / "tiny"
    before = tree_hashes(collected)
    grid = grid_file(tmp_path, data)
    line = cli_error(["sweep", "--grid", grid, "--out", collected])
    assert "is a results folder scripts/collect_results.py wrote" in line and f"--reuse {str(collected)!r}" in line
    assert tree_hashes(collected) == before and sorted(p.name for p in collected.iterdir()) == ["grid.json",
                                                                                                "results.jsonl"]
    done = cli(["sweep", "--grid", grid, "--out", tmp_path / "again", "--reuse", collected])
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "again" / "results.jsonl").read_text() == (collected / "results.jsonl").read_text()
    done = _collect_results(tmp_path / "again", "--dest", tmp_path / "res")  # the continued sweep collected back:
    assert done.returncode == 0, done.stderr  # its rows are the committed ones, as written (no "reused" note)
    assert tree_hashes(collected)["results.jsonl"] == before["results.jsonl"]  # grid.json: this grid file's path
