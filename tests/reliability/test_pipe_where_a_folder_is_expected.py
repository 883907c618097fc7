"""A named pipe where a folder is expected, or above a path to make, is called a named pipe, not "a file" (issue 30
round 29: V8, V27).

``bench --cache-dir fifo1/x`` said "'fifo1' is a file, not a folder" and ``lm-eval --data-root fifo1`` the same,
while their siblings (round 28, T48) said "is a named pipe (FIFO), not a folder". Every such line now takes
``errors.not_a_folder_there`` (``file_above``'s blocker in bench, result_json, export and gpu_check; --data-root,
$LEVIATHAN_DATA, a run folder's place, a checkpoint, a step folder).

Round 30 (X25, X26, X100, X105): the storage line of mkdir's ENOTDIR / EEXIST (``errors.storage_error_message``)
still called a pipe on the way "a file is in the way" or "(a file where a folder belongs?)" in export, prepare,
sweep, report, lm-eval, analyze, demo --run-dir and collect_results.py, and export's, collect_results.py's, --reuse's,
--dest's and a '/'-ending path's own checks "is a file". All of them now take ``not_a_folder_there``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, one_error, one_run_grid, script  # noqa: E402

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


# every verb (and script) that makes a folder, given a pipe where that folder or one above it goes (round 30)
VERBS = {
    "export fifo1/x": lambda run, data, sweep, grid: ["export", run, "fifo1/x"],
    "export --plain-llama": lambda run, data, sweep, grid: ["export", run, "fifo1/x", "--plain-llama"],
    "export fifo1": lambda run, data, sweep, grid: ["export", run, "fifo1"],
    "prepare --out fifo1/x": lambda run, data, sweep, grid: ["prepare", data.parent / "corpus", "--tokenizer",
                                                             "bpe:300", "--out", "fifo1/x"],
    "prepare --out fifo1/": lambda run, data, sweep, grid: ["prepare", data.parent / "corpus", "--tokenizer",
                                                            "bpe:300", "--out", "fifo1/"],
    "sweep --out fifo1/x": lambda run, data, sweep, grid: ["sweep", "--grid", grid, "--out", "fifo1/x"],
    "sweep --out fifo1": lambda run, data, sweep, grid: ["sweep", "--grid", grid, "--out", "fifo1"],
    "sweep --reuse fifo1": lambda run, data, sweep, grid: ["sweep", "--grid", grid, "--out", "s9", "--reuse",
                                                           "fifo1"],
    "report --out fifo1/x": lambda run, data, sweep, grid: ["report", sweep, "--out", "fifo1/x"],
    "report --out fifo1": lambda run, data, sweep, grid: ["report", sweep, "--out", "fifo1"],
    "demo --run-dir fifo1": lambda run, data, sweep, grid: ["demo", "--steps", "2", "--data-dir", data, "--run-dir",
                                                            "fifo1"],
    "demo --run-dir fifo1/x": lambda run, data, sweep, grid: ["demo", "--steps", "2", "--data-dir", data,
                                                              "--run-dir", "fifo1/x"],
    "lm-eval --out fifo1": lambda run, data, sweep, grid: ["lm-eval", run, "--tasks", "arc_easy", "--limit", "2",
                                                           "--out", "fifo1"],
    "analyze embeddings --dest fifo1": lambda run, data, sweep, grid: ["analyze", "embeddings", "--sweep", sweep,
                                                                       "--dest", "fifo1"],
    "analyze embeddings --dest fifo1/x": lambda run, data, sweep, grid: ["analyze", "embeddings", "--sweep", sweep,
                                                                         "--dest", "fifo1/x"],
}
SCRIPTS = {
    "collect_results sweep fifo1": lambda sweep: ["--dest", "res1", "fifo1"],
    "collect_results --dest fifo1/x": lambda sweep: ["--dest", "fifo1/x", sweep],
    "collect_results --dest fifo1": lambda sweep: ["--dest", "fifo1", sweep],
    "collect_results --rewrite fifo1": lambda sweep: ["--rewrite", "fifo1"],
}


@pytest.fixture(scope="module")
def grid(data, tmp_path_factory) -> Path:
    return one_run_grid(data, tmp_path_factory.mktemp("pipe-grid"))


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_verb_names_a_pipe_where_its_folder_goes(fifo, data, finished_run, one_run_sweep, grid, verb):
    """X25 (export), X26 (prepare, sweep, report --out), X100 (demo --run-dir) and their siblings: one line, exit 2,
    the pipe named as one, nothing made beside it."""
    line = cli_error(VERBS[verb](finished_run, data, one_run_sweep, grid), cwd=fifo.parent)
    assert "is a named pipe (FIFO)" in line and "a file" not in line and "is a file" not in line, line
    assert [p.name for p in fifo.parent.iterdir()] == ["fifo1"]


@pytest.mark.parametrize("case", list(SCRIPTS))
def test_collect_results_names_a_pipe_where_a_folder_goes(fifo, one_run_sweep, case):
    """X105: ``collect_results.py --dest res1 fifo1`` said "sweep folder 'fifo1' is a file"; its --dest and
    --rewrite the same kind."""
    proc = script("collect_results.py", SCRIPTS[case](one_run_sweep), cwd=fifo.parent)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert "'fifo1' is a named pipe (FIFO), not a folder; " in line and "a file" not in line, line
    assert [p.name for p in fifo.parent.iterdir()] == ["fifo1"]
