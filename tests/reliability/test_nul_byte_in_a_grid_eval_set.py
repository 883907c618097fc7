"""A NUL byte in a grid's eval set path is named as such, by --list as by the run (issue 30 round 29: V2, V5).

V2: an eval set ``tx: {text: "corpus/b0.txt\\0"}`` was "text: 'corpus/b0.txt\\x00' does not exist" (the file
exists; an optional set was skipped as missing), where data.path's line (round 28, T4) and data.dir's (V1) name the
NUL. ``grid_file._check_set_names`` refuses a NUL in text: and split: when the grid is read, so --list refuses it too.
V5: a grid named "g\\0" was reported listed by --list, exit 0; --list reads the grid as the run does and refuses the
name (pinned here: not reproduced at 73031cd).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, one_run_grid  # noqa: E402


def _grid(data: Path, folder: Path, **changes) -> Path:
    grid = one_run_grid(data, folder)
    raw = yaml.safe_load(grid.read_text())
    raw.update(changes)
    grid.write_text(yaml.safe_dump(raw))
    return grid


@pytest.mark.parametrize("sets, said", [
    ({"tx": {"text": "{text}\0"}}, "eval set 'tx': text: '{text}\\x00' holds a NUL byte"),
    ({"tx": {"text": "{text}\0", "optional": True}}, "eval set 'tx': text: '{text}\\x00' holds a NUL byte"),
    ({"val": {"split": "va\0l"}}, "eval set 'val': split: 'va\\x00l' holds a NUL byte"),
], ids=["text", "optional-text", "split"])
@pytest.mark.parametrize("mode", [["--list"], ["--max-runs", "1"]])
def test_a_nul_in_an_eval_set_is_named(data, tmp_path, sets, said, mode):
    text = tmp_path / "b0.txt"
    text.write_text("The cat sat on the mat. " * 20)
    sets = {k: {f: str(v).replace("{text}", str(text)) if isinstance(v, str) else v for f, v in s.items()}
            for k, s in sets.items()}
    grid = _grid(data, tmp_path, eval={"sets": sets})
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "sw", *mode])
    assert said.replace("{text}", str(text)) in line and "does not exist" not in line, line
    assert not (tmp_path / "sw").exists()


def test_list_refuses_a_grid_name_holding_a_nul(data, tmp_path):
    grid = _grid(data, tmp_path, name="g\0")
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "sw", "--list"])
    assert "the grid's name: 'g\\x00' is not a plain name" in line, line
