"""``dead_writers.leftovers``: which temporary folders beside an output a killed writer left (its pid is gone), which
a live writer holds (left out), and which carry no pid (returned with None for the caller to name). Shared by prepare,
the export writers, save_pretrained and the staged verbs (issue 30 round 24, W537, W539)."""

from __future__ import annotations

import os
import subprocess
import sys

from leviathan.dead_writers import alive, leftovers


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_writers_folder_is_returned_a_live_ones_is_not(tmp_path):
    dead = _dead_pid()
    for name in (f".out.tmp-{dead}-abc", f".out.tmp-{os.getpid()}-def", ".out.tmp-old", f".other.tmp-{dead}-x", "out"):
        (tmp_path / name).mkdir()
    assert leftovers(tmp_path, ".out.tmp-") == [(tmp_path / f".out.tmp-{dead}-abc", dead),
                                                  (tmp_path / ".out.tmp-old", None)]


def test_a_pid_alone_after_the_prefix_counts(tmp_path):
    dead = _dead_pid()
    (tmp_path / f".sweep.stage-{dead}").mkdir()
    assert leftovers(tmp_path, ".sweep.stage-") == [(tmp_path / f".sweep.stage-{dead}", dead)]


def test_a_folder_that_cannot_be_listed_has_none(tmp_path):
    assert leftovers(tmp_path / "missing", ".x.tmp-") == []
    assert alive(os.getpid()) and not alive(_dead_pid())
