"""A tokenizer.json whose vocab gives one id to two tokens is refused where it is loaded, naming the id and both
tokens (issue 30 round 29, W421): the tokenizers library loads it without a word, a 300-id tokenizer whose id then
decodes to one of two texts, and only a prepared folder's companion digests would notice.
"""

from __future__ import annotations

import json
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
