"""An atomic write never replaces a device, a named pipe or a socket standing at its path (issue 30 round 26).

The rename that makes ``io.atomic_write_*`` atomic replaced whatever stood at the path: ``atomic_write_text(
'/dev/null', 'x')`` put an ordinary file in place of the machine's /dev/null (Q350), and a user's named pipe (Q351)
and a character device (Q418 through ``fig_loss_curves``, Q419, Q420) were replaced the same way, without a word.
Now each is refused in one line before any file is opened. The tests use a named pipe made here (never a device of
the machine: a regression would replace it).
"""

from __future__ import annotations

import os
import stat

import pytest

from leviathan import io
from leviathan.errors import ArgumentValueError, UserError

pytestmark = pytest.mark.reliability

WRITES = {
    "atomic_write_text": lambda path: io.atomic_write_text(path, "x"),
    "atomic_write_bytes": lambda path: io.atomic_write_bytes(path, b"x"),
    "atomic_write_json": lambda path: io.atomic_write_json(path, {"a": 1}),
    "atomic_write_together": lambda path: io.atomic_write_together({path: "x", path.parent / "other.txt": "y"}),
}


@pytest.fixture
def pipe(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this system")
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("api", sorted(WRITES))
def test_a_named_pipe_at_the_path_is_refused_and_stays_a_pipe(pipe, api):
    with pytest.raises(ArgumentValueError) as error:
        WRITES[api](pipe)
    line = str(error.value)
    assert line.startswith(f"{api}: '{pipe}' is a named pipe (FIFO), not a regular file; nothing was written"), line
    assert "\n" not in line and isinstance(error.value, UserError)
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)  # the pipe itself, not a file put in its place
    assert sorted(p.name for p in pipe.parent.iterdir()) == ["pipe"]  # no temporary file and no other file left


def test_a_figure_saved_onto_a_named_pipe_leaves_the_pipe(pipe):
    from leviathan.experiments.plots import pyplot, save_figure

    fig = pyplot().figure()
    with pytest.raises(ArgumentValueError, match="is a named pipe"):
        save_figure(fig, pipe)
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)


def test_a_regular_file_and_a_new_path_are_still_written(tmp_path):
    (tmp_path / "old.txt").write_text("before")
    io.atomic_write_text(tmp_path / "old.txt", "after")
    io.atomic_write_text(tmp_path / "new.txt", "new")
    assert (tmp_path / "old.txt").read_text() == "after" and (tmp_path / "new.txt").read_text() == "new"


def test_file_kind_of_a_pipe_says_none_at_once(pipe):
    """Q394, Q409: ``file_kinds.file_kind('/dev/zero')`` read the whole device before keeping its first MiB (memory
    grew until the kernel killed the process) and a pipe without a writer blocked for ever; one rule (only a regular
    file is read) mends both. Only the pipe is tried, in a child process under a timeout, so a regression fails
    instead of hanging the suite (an endless device would take the machine's memory with it)."""
    import subprocess
    import sys

    code = "import sys; from leviathan.file_kinds import file_kind; print(file_kind(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", code, str(pipe)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["None"], done.stderr


def test_append_result_onto_a_pipe_is_refused_at_once(pipe):
    """Q425: ``append_result(FIFO, row)`` blocked for ever opening the pipe (Q417: a device was the raw errno 22
    naming no path). In a child process under a timeout, so a regression fails instead of hanging the suite."""
    import subprocess
    import sys

    code = ("import sys\nfrom leviathan.errors import UserError\n"
            "from leviathan.experiments.machinery.results import append_result\n"
            "row = dict(name='a-dense_tied-s0', experiment='iso_body', variant='dense_tied', size='a', seed=0,\n"
            "           params_total=1, final_val_loss=5.0)\n"
            "try:\n    append_result(sys.argv[1], row)\nexcept UserError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code, str(pipe)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"'{pipe}' is a named pipe (FIFO), not a regular file; nothing was written" in done.stdout, done.stdout
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
