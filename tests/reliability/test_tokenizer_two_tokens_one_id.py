"""A tokenizer.json whose vocab gives one id to two tokens is refused where it is loaded, naming the id and both
tokens (issue 30 round 29, W421): the tokenizers library loads it without a word, a 300-id tokenizer whose id then
decodes to one of two texts, and only a prepared folder's companion digests would notice.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from leviathan.data.tokenizer import load_tokenizer
from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_two_tokens_of_one_id_are_refused(data, tmp_path):
    spec = json.loads((data / "tokenizer.json").read_text())
    vocab = spec["model"]["vocab"]
    first, second = sorted(vocab, key=vocab.get)[-2:]
    vocab[second] = vocab[first]
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec))
    with pytest.raises(UserError, match=rf"tokenizer\.json: id {vocab[first]} is given to two tokens, .*so decoding "
                                        rf"it could give either.*pass an undamaged tokenizer\.json"):
        load_tokenizer(tmp_path / "tokenizer.json")
    shutil.copy(data / "tokenizer.json", tmp_path / "tokenizer.json")  # as prepare wrote it: loads
    assert load_tokenizer(tmp_path / "tokenizer.json").vocab_size == 300


def _added_on_a_vocab_id(data, folder):
    """Y691's file: the prepared tokenizer.json with the added token <|pad|> on id 5, a vocab token's id."""
    spec = json.loads((data / "tokenizer.json").read_text())
    spec["added_tokens"].append(dict(spec["added_tokens"][0], id=5, content="<|pad|>"))
    folder.mkdir(exist_ok=True)
    (folder / "tokenizer.json").write_text(json.dumps(spec))
    return folder / "tokenizer.json", spec["model"]["vocab"]


def test_an_added_token_on_a_vocab_tokens_id_is_refused(data, tmp_path):
    """Y691 (issue 30 round 30): the tokenizers library moved <|pad|> to id 300 without a word, a 301-id tokenizer
    whose id 5 still decoded to the vocab's token."""
    path, vocab = _added_on_a_vocab_id(data, tmp_path / "tk691")
    holder = next(token for token, number in vocab.items() if number == 5)
    with pytest.raises(UserError, match=rf"tokenizer\.json: added token '<\|pad\|>' is given id 5, the id of the "
                                        rf"vocab's {re.escape(repr(holder))}, so the tokenizers library moved it to id "
                                        rf"300 .*pass an undamaged tokenizer\.json"):
        load_tokenizer(path)


def test_an_added_token_at_a_new_id_still_loads(data, tmp_path):
    spec = json.loads((data / "tokenizer.json").read_text())
    spec["added_tokens"].append(dict(spec["added_tokens"][0], id=300, content="<|pad|>"))
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec))
    tok = load_tokenizer(tmp_path / "tokenizer.json")
    assert tok.vocab_size == 301 and tok.decode([300]) == "<|pad|>"


EMPTY = {"bpe": {"type": "BPE", "vocab": {}, "merges": []}, "unigram": {"type": "Unigram", "vocab": [], "unk_id": None},
         "wordlevel": {"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}}


@pytest.mark.parametrize("model", list(EMPTY), ids=["Y472-bpe", "Y695-unigram", "wordlevel"])
def test_a_tokenizer_of_no_tokens_is_refused(tmp_path, model):
    """Y472, Y695 (issue 30 round 30): an empty vocab loaded as a tokenizer of 1 id (its end-of-text added)."""
    (tmp_path / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": EMPTY[model]}))
    with pytest.raises(UserError, match=r"tokenizer\.json: its model's vocab holds no tokens, so it could encode no "
                                        r"text .*; pass an undamaged tokenizer\.json"):
        load_tokenizer(tmp_path / "tokenizer.json")


@pytest.mark.parametrize("damage", ["Y700-empty-vocab", "Y698-added-token-on-a-vocab-id"])
def test_prepare_refuses_such_a_tokenizer_and_writes_nothing(data, tmp_path, damage):
    """Y698, Y700 (issue 30 round 30): prepare wrote a 301-id data folder, or one of 3 tokens (the document
    separators) from 39,000 bytes of text with meta.json saying vocab_size 1, exit normal."""
    from leviathan.data.prepare import prepare

    if damage.startswith("Y700"):
        path = tmp_path / "tokenizer.json"
        path.write_text(json.dumps({"version": "1.0", "model": EMPTY["bpe"]}))
    else:
        path, _ = _added_on_a_vocab_id(data, tmp_path / "tk")
    corpus = data.parent / "corpus"  # the session's corpus, which prepare took with the intact tokenizer.json
    with pytest.raises(UserError, match=r"tokenizer\.json: .*pass an undamaged tokenizer\.json"):
        prepare(str(corpus), tmp_path / "out", tokenizer=str(path), progress=False, log=lambda message: None)
    assert not (tmp_path / "out").exists()
