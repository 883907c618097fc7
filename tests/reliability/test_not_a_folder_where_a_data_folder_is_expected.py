"""A named pipe (or another non-folder) given where a prepared data folder is expected is named for what it is, with
a fix that works (issue 30 round 28, T48).

``train data.path=fifo1`` and ``eval --data fifo1`` said "is not a prepared data folder (no meta.json); prepare it
with `leviathan prepare SOURCE --out fifo1`", which prepare then refused ("--out fifo1 is a file"); ``read_meta``
(same_numbers.py --data-dir) called the pipe "not a regular file that can be read whole" and gave the same failing
fix; ``demo --data-dir fifo1`` answered with prepare's "--out fifo1 is a file", an option demo does not have. One
rule now, ``errors.not_a_folder`` ("is a named pipe (FIFO), not a folder"), asked by ``meta.not_prepared`` (train,
eval, sweep), ``read_meta``, ``prepare``'s --out check and demo's --data-dir check.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides, write_corpus  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

pytestmark = [pytest.mark.reliability]

PIPE = "is a named pipe (FIFO), not a folder"


def test_read_meta_names_a_pipe_and_a_file(tmp_path):
    from leviathan.data.meta import read_meta

    os.mkfifo(tmp_path / "fifo1")
    (tmp_path / "ufile").write_text("text")
    with pytest.raises(UserError, match=re.escape(f"data dir {tmp_path}/fifo1 {PIPE}; pass a folder `leviathan "
                                                  f"prepare` wrote, or a new folder for `leviathan prepare SOURCE "
                                                  f"--out NEW_DIR` to make one")):
        read_meta(tmp_path / "fifo1")
    with pytest.raises(UserError, match=re.escape(f"data dir {tmp_path}/ufile is a file, not a folder; ")):
        read_meta(tmp_path / "ufile")


def test_train_prepare_and_demo_name_the_pipe(tmp_path, data):
    os.mkfifo(tmp_path / "fifo1")
    overrides = [o for o in run_overrides(data, max_steps=1) if not o.startswith("data.path=")]
    line = cli_error(["train", "--run-dir", "r", *overrides, "data.path=fifo1"], cwd=tmp_path)
    assert line.startswith(f"error: data.path 'fifo1' {PIPE}; pass a folder `leviathan prepare` wrote"), line
    write_corpus(tmp_path / "corpus", num_docs=3)
    line = cli_error(["prepare", "corpus", "--out", "fifo1", "--tokenizer", "bpe:300"], cwd=tmp_path)
    assert line == f"error: --out fifo1 {PIPE}; choose a directory path (a new or empty folder)", line
    line = cli_error(["demo", "--data-dir", "fifo1", "--steps", "1", "--quiet", "--run-dir", "dff"], cwd=tmp_path)
    assert line.startswith(f"error: --data-dir 'fifo1' {PIPE}; give a folder `leviathan prepare` wrote"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "fifo1"]
