"""The low-level helpers refuse what their own writers and readers refuse, instead of taking it without a word (issue
30 round 27, S267, S280, S287, S288): ``io.check_writable``, which says whether ``atomic_write_bytes(path)`` would
succeed, answered yes for a named pipe the writer refuses (and for a folder the writer's rename fails on);
``ownership.write_marker`` recorded ``files=['f\\x00']`` and ``files=['.']``, names no file can have, and
``read_marker`` took them back; ``locking.folder_lock(path, '')`` took an empty verb that every holder line shows
("cannot  into ...")."""

from __future__ import annotations

import json
import os

import pytest

from leviathan import io, locking, ownership
from leviathan.errors import ArgumentValueError, StorageError, UserError

pytestmark = [pytest.mark.reliability]


def test_check_writable_answers_as_the_writer_for_a_pipe_and_a_folder(tmp_path):
    pipe, folder = tmp_path / "fifo", tmp_path / "folder"
    os.mkfifo(pipe)
    folder.mkdir()
    for writer in (io.check_writable, lambda path: io.atomic_write_bytes(path, b"x")):
        with pytest.raises(ArgumentValueError, match=r"'.*fifo' is a named pipe \(FIFO\), not a regular file"):
            writer(pipe)
    with pytest.raises(StorageError, match="a folder is in the way"):
        io.atomic_write_bytes(folder, b"x")
    with pytest.raises(IsADirectoryError):  # check_writable raises the OSError the writer meets, unworded
        io.check_writable(folder)
    io.check_writable(tmp_path / "new.json")  # a free place is still writable
    link = tmp_path / "link"
    link.symlink_to(folder)
    io.check_writable(link)  # the rename replaces a link to a folder, as the writer does
    assert pipe.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "folder", "link"]


@pytest.mark.parametrize("name, said", [("f\0", "holds a NUL byte"), (".", "names the folder itself"),
                                        ("./", "names the folder itself"),
                                        ("a" * 256, "longer than the 255 bytes"),
                                        ("\ud800", "is not text a file name can hold")])
def test_write_marker_refuses_a_name_no_file_can_have_and_read_marker_too(tmp_path, name, said):
    with pytest.raises(UserError, match=r"write_marker: files: .* " + said):
        ownership.write_marker(tmp_path, "export", files=[name])
    assert list(tmp_path.iterdir()) == []
    if "\ud800" not in name:  # a marker JSON cannot hold it as UTF-8 text
        (tmp_path / ownership.MARKER).write_text(json.dumps({"format": ownership.FORMAT, "verb": "export",
                                                             "files": [name]}))
        with pytest.raises(UserError, match="field 'files' is not a list of relative file names"):
            ownership.read_marker(tmp_path)


def test_write_marker_still_takes_the_names_verbs_write(tmp_path):
    ownership.write_marker(tmp_path, "report --ablation", files=["README.md", "gap_*.png", "sub/x.json"])
    assert ownership.read_marker(tmp_path).files == ("README.md", "gap_*.png", "sub/x.json")


def test_folder_lock_refuses_an_empty_verb(tmp_path):
    for verb in ("", None):
        with pytest.raises(UserError, match=r"folder_lock: verb: expected the name of the verb taking the lock"):
            with locking.folder_lock(tmp_path / "l", verb):
                pass
    assert list(tmp_path.iterdir()) == []
    with locking.folder_lock(tmp_path / "l", "test"):
        pass
