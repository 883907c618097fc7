"""scripts/collect_results.py: a sweep folder's rows merge into the committed results folder, never replace it."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "collect_results.py"


@pytest.fixture(scope="module")
def collect():
    spec = importlib.util.spec_from_file_location("collect_results", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sweep(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "grid.json").write_text(json.dumps({"name": "g", "runs": []}))
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _names(path: Path) -> list[str]:
    return [json.loads(line)["name"] for line in path.read_text().splitlines()]


def test_rows_of_a_second_sweep_folder_are_added_after_the_committed_ones(collect, tmp_path):
    # a round whose pairs ran from two worktrees: the second collect must not drop the first one's rows
    first = _sweep(tmp_path / "a", [{"name": "r0", "loss": 1.0}, {"name": "r1", "loss": 2.0}])
    second = _sweep(tmp_path / "b", [{"name": "r2", "loss": 3.0}, {"name": "r0", "loss": 1.0}])
    dest = tmp_path / "results"
    assert collect.main([str(first), "--dest", str(dest)]) == 0
    assert collect.main([str(second), "--dest", str(dest)]) == 0
    assert _names(dest / "g" / "results.jsonl") == ["r0", "r1", "r2"]
    before = (dest / "g" / "results.jsonl").read_bytes()
    assert collect.main([str(second), "--dest", str(dest)]) == 0  # collecting again changes nothing
    assert (dest / "g" / "results.jsonl").read_bytes() == before


def test_a_run_with_two_different_rows_stops_before_writing(collect, tmp_path):
    first = _sweep(tmp_path / "a", [{"name": "r0", "loss": 1.0}])
    second = _sweep(tmp_path / "b", [{"name": "r0", "loss": 1.5}, {"name": "r1", "loss": 2.0}])
    dest = tmp_path / "results"
    collect.main([str(first), "--dest", str(dest)])
    before = (dest / "g" / "results.jsonl").read_bytes()
    with pytest.raises(SystemExit, match="run 'r0' has a row in the results folder and a different one"):
        collect.main([str(second), "--dest", str(dest)])
    assert (dest / "g" / "results.jsonl").read_bytes() == before
