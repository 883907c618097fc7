"""A BPE that stops short of the ids asked is named by the size it reached, with a note (issue 30 round 27, S537).

``train_bpe(['abc'] * 3, 300)`` returned a tokenizer named 'bpe:300' whose vocabulary is 259 ids, without a word; a
prepared folder's meta.json recorded that name beside vocab_size 259, and a model's vocab_size comes from the data.
Now the default name is the size reached (``bpe:259``) and a warning says so (the API), or a ``note:`` line
(``prepare``); meta.json's tokenizer and vocab_size agree. The folder's settings keep the request (``bpe:300``), so
the same command finds the folder up to date.
"""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.reliability]


def test_train_bpe_short_of_the_size_asked_is_named_by_the_size_reached():
    from leviathan.data.tokenizer import train_bpe

    with pytest.warns(UserWarning, match=r"the BPE reached 259 of the 300 ids asked \(no pair of its text is left to "
                                         r"merge\): it is named bpe:259 .*give more text"):
        tok = train_bpe(["abc"] * 3, 300, min_frequency=0)
    assert (tok.name, tok.vocab_size) == ("bpe:259", 259)
    assert train_bpe(["abc"] * 3, 300, name="mine").name == "mine"  # a name given is kept


def test_prepare_records_the_size_reached_and_says_so(tmp_path):
    from leviathan.data.prepare import prepare

    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "a.txt").write_text("the cat sat on the mat. " * 50)
    said = []
    meta = prepare(str(tmp_path / "small"), tmp_path / "d", "bpe:400", val_fraction=0, progress=False,
                   log=said.append)
    reached = meta["vocab_size"]
    assert reached < 400 and meta["tokenizer"] == f"bpe:{reached}", meta
    assert json.loads((tmp_path / "d" / "leviathan_tokenizer.json").read_text())["name"] == f"bpe:{reached}"
    assert [s for s in said if s.startswith(f"note: the BPE reached {reached} of the 400 ids asked")], said
    again = []
    prepare(str(tmp_path / "small"), tmp_path / "d", "bpe:400", val_fraction=0, progress=False, log=again.append)
    assert any("is up to date" in s for s in again), again
