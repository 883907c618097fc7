"""A folder of another kind given where a sweep's folder, or a results folder above a grid's, belongs is refused in
one line naming what it is and what to pass (issue 30 round 24).

- V80: `collect_results.py SWEEP --dest DEST/g`, the collected folder of grid g itself, wrote a second grid folder
  DEST/g/g, exit 0 (another grid's collected folder stays a --dest: ``results/o200k/o200k-lr``).
- V81: `collect_results.py corpus --dest D`, a folder of the user's texts, was "no results.jsonl yet, skipped", exit 0,
  as if it were a sweep not finished yet.
- V105: `analyze embeddings --sweep` of a collected folder, or of a sweep without its runs/, said "no run folder ...,
  skipped" for every row, then "0 record(s) written", exit 0.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, copied_sweep, one_error, tree_hashes  # noqa: E402
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def swept(one_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(one_run_sweep, tmp_path_factory, "folder-kinds")


@pytest.fixture(scope="module")
def collected(swept, tmp_path_factory) -> Path:
    """DEST/g, collected from ``swept``."""
    dest = tmp_path_factory.mktemp("collected") / "res"
    done = _collect_results(swept, "--dest", dest)
    assert done.returncode == 0, done.stderr
    return dest / "g"


def test_the_collected_folder_of_the_grid_itself_is_no_dest(swept, collected):
    before = tree_hashes(collected)
    done = _collect_results(swept, "--dest", collected)
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert f"--dest {str(collected)!r} is the collected folder of grid 'g' itself" in line, line
    assert f"--dest {str(collected.parent)!r}" in line, line
    assert tree_hashes(collected) == before and not (collected / "g").exists()


def test_the_collected_folder_of_another_grid_stays_a_dest(swept, collected, tmp_path):
    """The layout results/o200k/o200k-lr: a grid's folder inside another grid's collected folder."""
    other = Path(shutil.copytree(collected, tmp_path / "o200k"))
    grid = (other / "grid.json").read_text().replace('"name": "g"', '"name": "o200k"', 1)
    (other / "grid.json").write_text(grid)
    done = _collect_results(swept, "--dest", other)
    assert done.returncode == 0, done.stderr
    assert (other / "g" / "results.jsonl").is_file()


def test_a_folder_of_texts_is_no_sweep_folder(swept, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("some text of the user's\n")
    for sweeps in ([corpus], [corpus, swept]):
        done = _collect_results(*sweeps, "--dest", tmp_path / "cS")
        assert done.returncode == 2, done.stderr
        line = one_error(done.stderr)
        assert f"sweep folder {str(corpus)!r} is not a sweep's folder" in line and "--out folder of a sweep" in line
        assert not (tmp_path / "cS").exists()


def test_a_sweep_not_finished_yet_keeps_its_note(swept, tmp_path):
    started, empty = tmp_path / "started", tmp_path / "empty"  # an empty folder: an --out made before the sweep
    started.mkdir()
    empty.mkdir()
    shutil.copy(swept / "grid.json", started / "grid.json")
    for folder in (started, empty):
        done = _collect_results(folder, "--dest", tmp_path / "cH")
        assert done.returncode == 0, done.stderr
        assert f"{folder}: no results.jsonl yet, skipped" in done.stderr, done.stderr


def test_records_of_a_folder_without_runs_are_refused_naming_the_sweep_to_pass(swept, collected, tmp_path):
    bare = Path(shutil.copytree(swept, tmp_path / "bare", ignore=shutil.ignore_patterns("runs")))
    for folder, kind in ((collected, "a results folder scripts/collect_results.py wrote"),
                         (bare, "a folder without the runs/ folder")):
        line = cli_error(["analyze", "embeddings", "--sweep", folder])
        assert f"sweep folder {str(folder)!r} is {kind}" in line, line
        assert "pass the sweep folder the runs were trained in" in line and f"--dest {str(folder)!r}" in line, line
        assert not (folder / "embeddings").exists()
