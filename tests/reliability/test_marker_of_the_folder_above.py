"""Issue 30 round 29, W603 and W607: ``ownership.write_marker('t/o/..', 'train')`` marked t, the folder above (a
folder of the user's files), as train's output without a word, and ``train(cfg, 't/x/..')`` then wrote its run among
those files, trusting the marker. A folder spelt with a last '..' is refused before anything is written."""

from __future__ import annotations

import pytest

from leviathan.errors import UserError
from leviathan.ownership import MARKER, read_marker, write_marker

pytestmark = pytest.mark.reliability


def test_a_marker_is_not_written_into_the_folder_above(tmp_path):
    users = tmp_path / "t"
    (users / "o").mkdir(parents=True)
    (users / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match=r"ends in '\.\.', which names the folder above"):
        write_marker(f"{users}/o/..", "train")
    assert not (users / MARKER).exists() and read_marker(users) is None
    assert sorted(p.name for p in users.iterdir()) == ["notes.txt", "o"]


def test_a_folder_of_its_own_is_still_marked(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_marker(f"{out}/.", "train")
    assert read_marker(out).verb == "train"
