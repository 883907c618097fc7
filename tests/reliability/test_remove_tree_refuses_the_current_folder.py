"""``removal.remove_tree`` deletes only a folder named by its own name, never the current folder or one above it
(issue 30 round 28, U557: ``remove_tree('.')`` emptied the tryer's whole scratch folder, its log included, and then
answered "'.': invalid argument", which read as if nothing was deleted; U556: ``remove_tree('')`` answered None,
"gone"). Every verb passes the folder it moved aside or made, so these are refused, nothing deleted.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize("given, said", [
    (".", "names no folder by its own name"),
    ("", "names no folder by its own name"),
    ("sub/..", "names no folder by its own name"),
    ("HERE", "holds the current working folder"),
    ("ABOVE", "holds the current working folder"),
])
def test_the_current_folder_and_its_spellings_are_refused_and_kept(tmp_path, monkeypatch, given, said):
    from leviathan.errors import UserError
    from leviathan.removal import remove_tree

    here = tmp_path / "top" / "here"
    (here / "sub").mkdir(parents=True)
    (here / "mine.txt").write_text("the user's own file")
    monkeypatch.chdir(here)
    given = {"HERE": str(here), "ABOVE": str(tmp_path / "top")}.get(given, given)
    with pytest.raises(ValueError, match=f"^remove_tree: .*{said}.*nothing was deleted") as caught:
        remove_tree(given)
    assert isinstance(caught.value, UserError)
    assert (here / "mine.txt").read_text() == "the user's own file" and (here / "sub").is_dir()


def test_a_folder_named_by_its_own_name_is_still_deleted(tmp_path, monkeypatch):
    from leviathan.removal import remove_tree

    (tmp_path / "old" / "deep").mkdir(parents=True)
    (tmp_path / "old" / "deep" / "f").write_text("x")
    monkeypatch.chdir(tmp_path)
    assert remove_tree("old/") is None and not (tmp_path / "old").exists()
    (tmp_path / "old2").mkdir()
    assert remove_tree(tmp_path / "old2") is None and not (tmp_path / "old2").exists()
