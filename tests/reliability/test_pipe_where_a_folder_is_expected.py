"""A named pipe where a folder is expected, or above a path to make, is called a named pipe, not "a file" (issue 30
round 29: V8, V27).

``bench --cache-dir fifo1/x`` said "'fifo1' is a file, not a folder" and ``lm-eval --data-root fifo1`` the same,
while their siblings (round 28, T48) said "is a named pipe (FIFO), not a folder". Every such line now takes
``errors.not_a_folder_there`` (``file_above``'s blocker in bench, result_json, export and gpu_check; --data-root,
$LEVIATHAN_DATA, a run folder's place, a checkpoint, a step folder).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error  # noqa: E402

PIPE = "is a named pipe (FIFO), not a folder"


@pytest.fixture
def fifo(tmp_path) -> Path:
    os.mkfifo(tmp_path / "fifo1")
    return tmp_path / "fifo1"


@pytest.mark.parametrize("argv, said", [
    (["bench", "--quick", "--only", "train", "--config", "tiny", "--cache-dir", "fifo1/x"],
     f"error: --cache-dir 'fifo1/x' cannot be made: 'fifo1' {PIPE}; choose another --cache-dir"),
    (["bench", "--quick", "--only", "generator", "--json", "fifo1/x.json"],
     f"error: --json 'fifo1/x.json' cannot be written: 'fifo1' {PIPE}; choose another --json path"),
    (["train", "--config", "tiny", "data.path={data}", "--run-dir", "fifo1/r"], f"' {PIPE}; choose another --run-dir"),
    (["eval", "fifo1"], f"error: checkpoint 'fifo1' {PIPE}; pass a run folder"),
], ids=["cache-dir", "json", "run-dir", "checkpoint"])
def test_a_pipe_on_the_way_is_named_as_one(fifo, data, argv, said):
    line = cli_error([a.replace("{data}", str(data)) for a in argv], cwd=fifo.parent)
    assert said in line and "is a file" not in line, line
    assert [p.name for p in fifo.parent.iterdir()] == ["fifo1"]


def test_lm_eval_data_root_a_pipe_is_named_as_one(fifo, finished_run):
    proc = cli(["lm-eval", finished_run, "--tasks", "arc_easy", "--limit", "2", "--data-root", "fifo1"],
               cwd=fifo.parent)
    assert proc.returncode == 2 and f"argument --data-root: 'fifo1' {PIPE}; pass the data folder" in proc.stderr, \
        proc.stderr


def test_leviathan_data_a_pipe_is_named_as_one(fifo, monkeypatch):
    from leviathan.errors import UserError
    from leviathan.eval.tasks import task_data_root

    monkeypatch.setenv("LEVIATHAN_DATA", str(fifo))
    with pytest.raises(UserError, match=r"\(named by \$LEVIATHAN_DATA\) is a named pipe \(FIFO\), not a folder"):
        task_data_root()
