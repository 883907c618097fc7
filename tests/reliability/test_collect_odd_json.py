"""scripts/collect_results.py given JSON it cannot hold or of the wrong shape (issue 30 round 23, T20, T94, T96,
T98, T99, T101, T111: tracebacks). A grid.json, results.jsonl line or leviathan_output.json nested 200,000 levels
deep ended in a RecursionError; a --dest's grid.json of the right name with a field of the wrong shape (runs 'x',
vocab_size inf, data_dir 5) in a TypeError from where the grids are compared. Every JSON text the script reads now
goes through ``json_text.loads`` (a damaged file is broken JSON), and a --dest's grid.json is read as a grid first."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import copied_sweep  # noqa: E402
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

DEEP = '{"name": "g", "x": ' + "[" * 200_000 + "]" * 200_000 + "}\n"


@pytest.fixture(scope="module")
def swept(one_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(one_run_sweep, tmp_path_factory, "collect-odd-json")


def _no_traceback(done) -> None:
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr, done.stderr
    if done.returncode == 2:
        assert len([line for line in done.stderr.splitlines() if line.startswith("error:")]) == 1, done.stderr


@pytest.mark.parametrize("damaged, status", [("grid.json", 2), ("leviathan_output.json", 0)])
def test_a_sweeps_file_nested_too_deep_is_one_line(swept, tmp_path, damaged, status):
    """The grid.json is refused; a marker that does not read is no other verb's, and the rows are collected."""
    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    (sweep / damaged).write_text(DEEP)
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    _no_traceback(done)
    assert done.returncode == status and (tmp_path / "res" / "g" / "results.jsonl").exists() == (status == 0)


@pytest.mark.parametrize("damaged", ["grid.json", "results.jsonl"])
def test_a_rewrite_of_a_folder_with_a_file_nested_too_deep_ends_without_a_traceback(swept, tmp_path, damaged):
    assert _collect_results(swept, "--dest", tmp_path / "res").returncode == 0
    target = tmp_path / "res" / "g" / damaged
    if damaged == "results.jsonl":
        with target.open("a") as f:
            f.write(DEEP)
    else:
        target.write_text(DEEP)
    _no_traceback(_collect_results("--rewrite", tmp_path / "res"))


@pytest.mark.parametrize("field, value", [("runs", "x"), ("vocab_size", 1e300), ("data_dir", 5)])
def test_a_dests_grid_json_of_the_wrong_shape_is_refused_before_anything_is_written(swept, tmp_path, field, value):
    dest = tmp_path / "res"
    assert _collect_results(swept, "--dest", dest).returncode == 0
    grid = dest / "g" / "grid.json"
    kept = json.loads(grid.read_text())
    kept[field] = value
    grid.write_text(json.dumps(kept))
    before = (dest / "g" / "results.jsonl").read_bytes()
    done = _collect_results(swept, "--dest", dest)
    _no_traceback(done)
    assert done.returncode == 2 and "is not a grid.json this script wrote" in done.stderr, done.stderr
    assert (dest / "g" / "results.jsonl").read_bytes() == before
