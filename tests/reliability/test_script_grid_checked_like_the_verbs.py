"""same_numbers.py's --grid is checked as sweep checks it before any worktree is made (issue 30 round 29, V41).

``same_numbers.py --grid fifo1`` (a named pipe) passed 'fifo1' on to the worktrees' sweeps as a grid's name, and
the line named the wrong cause: "unknown grid 'fifo1'; available: ...", where ``sweep --grid fifo1`` says it is not
a file. ``grid_argument`` now names what stands there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error, script  # noqa: E402


def test_a_pipe_as_grid_is_named_before_any_worktree(data, tmp_path):
    os.mkfifo(tmp_path / "fifo1")
    done = script("same_numbers.py", ["--grid", "fifo1", "--run", "a", "--data-dir", data, "HEAD", "HEAD"],
                  cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert line.startswith("error: --grid 'fifo1' is a named pipe (FIFO)"), line
    assert "unknown grid" not in line and "grid YAML file or a grid's name" in line
