"""A refusal that names the wrong cause (issue 30 round 23, T1, T109): the line must say what stands in the way.

T1: ``bench --json afile/x.json``, where ``afile`` is a regular file, said "the folder 'afile' does not exist; create
it first (mkdir -p afile)", advice that fails. T109: ``analyze efficiency --model RUN`` whose metrics.jsonl is a
named pipe said "no metrics file at 'RUN/metrics.jsonl'", while ``ls`` lists it and ``train`` names it as a pipe
(``io.metrics_file`` now as branch fix23d wrote it for U379's kind, the same lines, so the two merge cleanly).
"""

from __future__ import annotations

import os
import shutil

import pytest

from reliability_support import cli_error

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize("below", ["x.json", "sub/x.json"])
def test_bench_json_under_a_file_names_the_file(tmp_path, below):
    """T1: the file in the way is named, not a missing folder to make; nothing is timed or written."""
    (tmp_path / "afile").write_text("hi\n")
    line = cli_error(["bench", "--quick", "--config", "tiny", "--only", "generator", "--cache-dir", tmp_path / "bc",
                      "--json", f"afile/{below}"], cwd=tmp_path)
    assert line == (f"error: --json 'afile/{below}' cannot be written: 'afile' is a file, not a folder; choose another "
                    f"--json path, or move that file away"), line
    assert (tmp_path / "afile").read_text() == "hi\n" and not (tmp_path / "bc").exists()


def test_bench_json_in_a_missing_folder_still_says_to_make_it(tmp_path):
    line = cli_error(["bench", "--quick", "--config", "tiny", "--only", "generator", "--cache-dir", tmp_path / "bc",
                      "--json", "nod/x.json"], cwd=tmp_path)
    assert "the folder 'nod' does not exist; create it first (mkdir -p nod)" in line, line


@pytest.mark.parametrize("kind", ["pipe", "folder"])
def test_a_metrics_file_that_is_no_file_is_named_as_what_it_is(finished_run, tmp_path, kind):
    """T109: the pipe (or a folder in its place) is named, with the fix; the reader does not wait on the pipe."""
    run = tmp_path / "qi"
    shutil.copytree(finished_run, run)
    (run / "metrics.jsonl").unlink()
    if kind == "pipe":
        os.mkfifo(run / "metrics.jsonl")
    else:
        (run / "metrics.jsonl").mkdir()
    line = cli_error(["analyze", "efficiency", "--model", "qi", "--reference", finished_run], cwd=tmp_path)
    what = "is a named pipe (FIFO), not a regular file" if kind == "pipe" else "is a folder, not a file"
    assert line.startswith(f"error: 'qi/metrics.jsonl' {what}"), line
    assert line.endswith("; pass a run directory or its metrics.jsonl") and "no metrics file" not in line, line


def test_a_missing_metrics_file_is_still_called_missing(finished_run, tmp_path):
    run = tmp_path / "qm"
    shutil.copytree(finished_run, run)
    (run / "metrics.jsonl").unlink()
    line = cli_error(["analyze", "efficiency", "--model", "qm", "--reference", finished_run], cwd=tmp_path)
    assert line == "error: no metrics file at 'qm/metrics.jsonl'; pass a run directory or its metrics.jsonl", line
