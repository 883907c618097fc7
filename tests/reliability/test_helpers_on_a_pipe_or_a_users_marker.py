"""The file helpers a user can import neither wait for ever on a named pipe nor replace a user's file under the
marker's name (issue 30 round 27: S261 ``io.sha256_file`` of a pipe blocked in ``open``; S262 of a folder was the raw
IsADirectoryError; S315 ``removal.remove_tree`` of a pipe blocked inside ``shutil.rmtree``; S290
``ownership.write_marker`` replaced a user's own leviathan_output.json; S239 ``io.atomic_write_together``'s
remove= unlinked a named pipe; R66, R68 ``report`` replaced a pipe at its files; R67 ``export
--overwrite`` waited on a pipe, through sha256_file). Pipes are made here with ``os.mkfifo``; the
calls that blocked run in a child process under a timeout, so a regression fails instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from leviathan.errors import UserError
from leviathan.io import sha256_file
from leviathan.ownership import MARKER, write_marker

pytestmark = pytest.mark.reliability


def _in_child(code: str, tmp_path) -> subprocess.CompletedProcess:
    """``code`` run by a fresh interpreter in ``tmp_path``; a call that blocks fails the test after 60 s."""
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)


def test_sha256_of_a_named_pipe_is_one_line_not_a_wait(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    done = _in_child("from leviathan.io import sha256_file\ntry:\n    sha256_file('fifo')\n"
                     "except Exception as e:\n    print(type(e).__name__, e)\n", tmp_path)
    assert "UserError" in done.stdout and "named pipe" in done.stdout, done.stdout + done.stderr


def test_sha256_of_a_folder_names_it(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(UserError, match="is a folder, not a file"):
        sha256_file(tmp_path / "d")


def test_sha256_of_a_path_with_a_nul_is_one_line(tmp_path):
    """Round 31, AA368: a NUL in the path was Python's raw "ValueError: embedded null byte"."""
    (tmp_path / "b0.txt").write_text("x")
    with pytest.raises(UserError, match=r"sha256_file: path: .*NUL byte.*pass the path of a regular file"):
        sha256_file(str(tmp_path / "b0.txt") + "\x00")


@pytest.mark.parametrize("reader", ["sha256_file", "read_jsonl", "read_file", "read_metrics"])
def test_readers_of_a_name_too_long_or_a_path_under_a_file_say_it_is_not_there(tmp_path, reader):
    """Round 32, AC322, AC325: ``sha256_file`` of a 300-byte name and of 'afile/x' were the raw OSError and
    NotADirectoryError; ``read_jsonl`` and ``json_text.read_file`` gave the output advice "choose a shorter name" and
    "remove or rename that file"; ``read_metrics`` of the long name was the raw OSError of ``Path.is_dir``."""
    from leviathan import io, json_text

    call = {"read_file": json_text.read_file}.get(reader) or getattr(io, reader)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UserError, match=r"its name 'aaaa.*300 bytes, more than the \d+ the file system allows"):
        call(str(tmp_path / ("a" * 300)))
    if reader != "read_metrics":  # its own words: "no metrics file at ..."
        with pytest.raises(UserError, match=r"does not exist: '.*afile' above it is a file, not a folder"):
            call(str(tmp_path / "afile" / "x"))


def test_remove_tree_of_a_named_pipe_leaves_it_and_says_so(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    done = _in_child("from leviathan.removal import remove_tree\nprint(remove_tree('fifo'))\n", tmp_path)
    assert "named pipe" in done.stdout and "not a folder" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "fifo").exists()


def test_write_marker_refuses_a_users_file_under_the_markers_name(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / MARKER).write_text("my notes")
    with pytest.raises(UserError, match="if it is a file of yours, move it out"):
        write_marker(folder, "export")
    assert (folder / MARKER).read_text() == "my notes"


def test_write_marker_still_rewrites_its_own_marker(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    write_marker(folder, "export")
    write_marker(folder, "export", ["a.txt"])  # its own verb's marker
    assert '"a.txt"' in (folder / MARKER).read_text()
    write_marker(folder, "train", replace=True)  # another verb's: only when told (round 28, U540)
    assert '"train"' in (folder / MARKER).read_text()


def test_write_together_does_not_remove_a_named_pipe(tmp_path):
    from leviathan.errors import ArgumentValueError
    from leviathan.io import atomic_write_together

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ArgumentValueError, match="named pipe"):
        atomic_write_together({tmp_path / "t": "a"}, remove=[tmp_path / "fifo"])
    assert (tmp_path / "fifo").exists() and not (tmp_path / "t").exists()


def test_write_together_takes_a_generator_as_remove(tmp_path):
    from leviathan.io import atomic_write_together

    (tmp_path / "old").write_text("x")
    atomic_write_together({tmp_path / "t": "a"}, remove=(p for p in [tmp_path / "old"]))
    assert not (tmp_path / "old").exists() and (tmp_path / "t").read_text() == "a"


def test_replacing_together_leaves_a_named_pipe_in_the_way(tmp_path):
    """R66, R68: ``report --out`` over its own earlier folder replaced a user's pipe at report.md / analysis.json / a
    figure with a file (the staged swap, through ``replace_together``, shared with save_pretrained)."""
    from leviathan.replace_together import replace_together

    (tmp_path / "new").write_text("n")
    (tmp_path / "kept").write_text("k")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UserError, match="named pipe"):
        replace_together([(tmp_path / "new", tmp_path / "kept"), (tmp_path / "new", tmp_path / "fifo")],
                         aside=lambda target: tmp_path / f"{target.name}.aside")
    assert (tmp_path / "kept").read_text() == "k" and (tmp_path / "new").exists()
    assert not (tmp_path / "fifo").is_file() and (tmp_path / "fifo").exists()


def test_marking_a_folder_needs_no_numpy(tmp_path):
    """R20: gpu_check.sh's claim step (``ownership.write_marker``) runs on a bare python3; round 26's marker check
    imported numpy through ``value_rules.check_switches``. A child whose numpy import fails still marks a folder."""
    code = ("import sys\nsys.modules['numpy'] = None\nfrom leviathan.ownership import write_marker\n"
            "write_marker('m', 'gpu_check', files=[])\nprint('marked')\n")
    (tmp_path / "m").mkdir()
    done = _in_child(code, tmp_path)
    assert "marked" in done.stdout, done.stdout + done.stderr


def test_sha256_file_under_a_dangling_link_names_the_link(tmp_path):
    """Round 33, AE136: a path under a link to nothing was said to lie under a file ("'t/dangle' above it is a file,
    not a folder"); the dead link is named first again since main's 6b37c7ad (not reproduced on fix34b; pinned, as
    errors.missing promises)."""
    os.symlink(tmp_path / "nowhere", tmp_path / "dangle")
    with pytest.raises(UserError, match=r"cannot be read: '.*dangle' on its way is a symbolic link to '.*nowhere', "
                                        r"which does not exist \(repair or remove the link\)"):
        sha256_file(tmp_path / "dangle" / "x")
