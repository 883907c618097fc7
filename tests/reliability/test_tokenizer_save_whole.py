"""``Tokenizer.save`` writes its folder whole or not at all, and ``load_tokenizer`` takes only what it wrote (issue 30
round 20). On a full disk (M158) or one out of inodes (M160) the folder it made was left holding tokenizer.json alone,
which ``load_tokenizer`` then took without its record; the line said "the disk is full" of a disk with megabytes free
(M159). A tokenizer.json edited after the save (half its merges cut: other ids, M89) and a record whose ``kind`` was
edited (M90) were loaded without a word. The tmpfs cases need the right to mount (root); skipped elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leviathan.data.tokenizer import load_tokenizer, train_bpe
from leviathan.errors import StorageError, UserError

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def tokenizer():
    return train_bpe([f"hello world the quick brown fox jumps over the lazy dog {i} " * 40 for i in range(8)], 300)


def test_a_tokenizer_save_onto_a_full_disk_leaves_no_folder(tokenizer, tmpfs):
    """M158: room for tokenizer.json but not for its record."""
    disk = tmpfs("size=300k")
    (disk / "fill").write_bytes(b"\0" * (300 * 1024 - len(tokenizer.to_json()) - 6000))
    with pytest.raises(StorageError, match="no space left on device"):
        tokenizer.save(disk / "tk")
    assert sorted(p.name for p in disk.iterdir()) == ["fill"]


def test_a_tokenizer_save_onto_a_disk_out_of_inodes_leaves_no_folder_and_names_inodes(tokenizer, tmpfs):
    """M160, M159: two inodes left (the folder and one file); the line names inodes, not only a full disk."""
    disk = tmpfs("size=20m,nr_inodes=6")
    for name in ("f1", "f2", "f3"):
        (disk / name).write_text("")
    with pytest.raises(StorageError) as caught:
        tokenizer.save(disk / "tk")
    assert "(the disk is full, or out of inodes: `df -h`, `df -i`)" in str(caught.value), str(caught.value)
    assert sorted(p.name for p in disk.iterdir()) == ["f1", "f2", "f3"]


def test_a_tokenizer_json_edited_after_the_save_is_refused(tokenizer, tmp_path):
    """M89."""
    tokenizer.save(tmp_path / "tk")
    path = tmp_path / "tk" / "tokenizer.json"
    spec = json.loads(path.read_text())
    spec["model"]["merges"] = spec["model"]["merges"][: len(spec["model"]["merges"]) // 2]
    path.write_text(json.dumps(spec))
    with pytest.raises(UserError, match="tokenizer.json is not the file Tokenizer.save wrote .*Tokenizer.save it"):
        load_tokenizer(str(tmp_path / "tk"))


def test_a_tokenizer_record_with_its_kind_edited_is_refused(tokenizer, tmp_path):
    """M90; an unedited save loads as it was saved."""
    tokenizer.save(tmp_path / "tk")
    assert load_tokenizer(str(tmp_path / "tk")).encode("hello world") == tokenizer.encode("hello world")
    record = tmp_path / "tk" / "leviathan_tokenizer.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "kind": "tiktoken"}))
    with pytest.raises(UserError, match="says kind 'tiktoken' but the folder holds a 'tokenizers' tokenizer"):
        load_tokenizer(str(tmp_path / "tk"))
