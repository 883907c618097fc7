"""A writer of a file set that loses a race with another process names that cause (issue 30 round 29, W459).

Two processes calling ``io.atomic_write_together`` on the same two files: the pair stayed whole and agreed, but one
writer stopped with "'DIR/a' cannot be created: 'DIR' takes no new files or folders (No such file or directory);
choose another location", blaming a folder that takes files. The cause was the other writer, which had moved the
earlier file aside between this writer's look and its own move (nothing serializes two writers: stopping the loser
is right). ``replace_together`` now names that cause and the fix (one writer at a time, or try again), puts back what
it moved, and leaves no temporary file. The race is made certain here by moving the earlier file away at the moment
the writer looks for its aside place, as the other process does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leviathan import io
from leviathan.errors import StorageError

pytestmark = [pytest.mark.reliability]


def test_a_file_moved_away_by_another_writer_is_named_as_the_cause(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    io.atomic_write_together({a: "first", b: "first"})
    own_aside = io._aside_of

    def other_writer_moves_it(path: Path) -> Path:
        if path == a and a.exists():
            os.replace(a, tmp_path / ".a.other-writer")  # the other process's aside
        return own_aside(path)

    monkeypatch.setattr(io, "_aside_of", other_writer_moves_it)
    with pytest.raises(StorageError, match=rf"^'{a}' was moved away by another process while this one replaced it "
                                           r"\(two writers of the same files at once\); nothing of this write was "
                                           r"kept, the files are as the other writer left them; write them from one "
                                           r"process at a time \(under locking\.folder_lock of their folder\), or try "
                                           r"again$"):
        io.atomic_write_together({a: "second", b: "second"})
    assert b.read_text() == "first" and not a.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".a.other-writer", "b"]  # no temporary or aside file left
