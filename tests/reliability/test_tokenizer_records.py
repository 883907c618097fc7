"""A trained tokenizer's name and its saved record (issue 30 round 22):

- S244: ``train_bpe([text], 300, name='o200k_base')`` was accepted, and ``prepare`` then wrote a data folder whose
  meta.json claimed o200k_base with no tokenizer.json. A built-in's name is reserved.
- S250: a leviathan_tokenizer.json of format 2 was read as format 1. A format this version does not know is refused.
"""

from __future__ import annotations

import json
import shutil

import pytest

from leviathan.data.tokenizer import HFTokenizer, load_tokenizer, train_bpe
from leviathan.errors import UserError

pytestmark = pytest.mark.reliability


def _text(data) -> str:
    return "".join(p.read_text() for p in sorted((data.parent / "corpus").iterdir())[:5])


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", " O200K_BASE"])
def test_a_builtins_name_is_refused_for_a_trained_bpe(data, tmp_path, name):
    from leviathan.data.prepare import prepare

    with pytest.raises(UserError, match=r"train_bpe: name .* is reserved for the built-in tokenizer .* \(the reserved "
                                        r"names: o200k_base, cl100k_base\).*pass another name \(such as 'bpe:300'\)"):
        train_bpe([_text(data)], 300, name=name)
    tok = train_bpe([_text(data)], 300, name="mine")
    with pytest.raises(UserError, match="HFTokenizer: name .* is reserved"):
        HFTokenizer(tok._hf, name)
    prepare(str(data.parent / "corpus"), tmp_path / "pj", tokenizer=tok, val_fraction=0.2, progress=False,
            log=lambda message: None)
    meta = json.loads((tmp_path / "pj" / "meta.json").read_text())
    assert meta["tokenizer"] == "mine" and meta["tokenizer_file"] == "tokenizer.json"


@pytest.mark.parametrize("said", [2, "1", None, 1.5, True])
def test_a_record_of_a_format_this_version_does_not_know_is_refused(data, tmp_path, said):
    folder = tmp_path / "tk"
    train_bpe([_text(data)], 300).save(folder)
    record = json.loads((folder / "leviathan_tokenizer.json").read_text())
    assert load_tokenizer(folder).vocab_size == record["vocab_size"]
    (folder / "leviathan_tokenizer.json").write_text(json.dumps({**record, "format": said}))
    with pytest.raises(UserError, match=r"leviathan_tokenizer.json: format .* is not one this version of leviathan "
                                        r"reads \(it knows 1\).*save the tokenizer again"):
        load_tokenizer(folder)


def test_a_data_folders_record_is_held_to_the_same_formats(data, tmp_path):
    copy = shutil.copytree(data, tmp_path / "d")
    record = json.loads((copy / "leviathan_tokenizer.json").read_text())
    (copy / "leviathan_tokenizer.json").write_text(json.dumps({**record, "format": 2}))
    with pytest.raises(UserError, match="format 2 is not one this version of leviathan reads"):
        load_tokenizer(copy)
