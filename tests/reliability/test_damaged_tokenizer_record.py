"""A saved tokenizer's record (leviathan_tokenizer.json) that is there but damaged is refused, not passed over
(issue 30 round 23):

- U523: the record replaced by a JSON list holding it (``[record]``) loaded without a word as an unrecorded
  tokenizer named by its path, the record's checks skipped.
- U527: the same, with tokenizer.json swapped for another BPE's: the swapped tokenizer loaded without a word, while
  the intact record refuses the swap (its sha256).
The same reader passed over a folder or a named pipe standing in the record's place.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from leviathan.data.tokenizer import load_tokenizer, train_bpe
from leviathan.errors import UserError

pytestmark = pytest.mark.reliability


@pytest.fixture
def saved(data, tmp_path):
    """A BPE of 280 ids trained on the tiny corpus and saved with ``Tokenizer.save``."""
    text = "".join(p.read_text() for p in sorted((data.parent / "corpus").iterdir())[:5])
    folder = tmp_path / "t4"
    train_bpe([text], 280).save(folder)
    assert load_tokenizer(folder).vocab_size <= 280
    return folder


def test_a_record_wrapped_in_a_list_is_refused(saved):
    record = saved / "leviathan_tokenizer.json"
    record.write_text(json.dumps([json.loads(record.read_text())]))
    with pytest.raises(UserError, match=r"leviathan_tokenizer.json is a JSON array, not a tokenizer record .*damaged "
                                        r"or edited by hand; re-create it"):
        load_tokenizer(saved)


def test_a_swapped_tokenizer_json_under_a_list_record_is_refused(saved, data):
    record = saved / "leviathan_tokenizer.json"
    record.write_text(json.dumps([json.loads(record.read_text())]))
    shutil.copy(data / "tokenizer.json", saved / "tokenizer.json")
    with pytest.raises(UserError, match="is a JSON array, not a tokenizer record"):
        load_tokenizer(saved)


@pytest.mark.parametrize("stand_in", ["folder", "pipe"])
def test_a_folder_or_pipe_in_the_records_place_is_refused(saved, stand_in):
    record = saved / "leviathan_tokenizer.json"
    record.unlink()
    if stand_in == "folder":
        record.mkdir()
    else:
        os.mkfifo(record)
    words = "is a folder, not a file" if stand_in == "folder" else "is a named pipe"
    with pytest.raises(UserError, match=words + ".*re-create it"):
        load_tokenizer(saved)
