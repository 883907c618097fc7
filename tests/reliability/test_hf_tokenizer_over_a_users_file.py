"""``write_hf_tokenizer`` called from Python writes over no file it did not write (issue 30 round 25, Y628: a user's own
tokenizer.json was replaced without a word, where ``Tokenizer.save`` refuses the same case), and refuses a
``model_max_length`` no model has (Y631). Its own earlier output is written again; the verbs use
``write_hf_tokenizer_owned`` in folders they made."""

from __future__ import annotations

import json

import pytest

from leviathan.data.tokenizer import load_tokenizer
from leviathan.errors import UserError
from leviathan.eval.hf_tokenizer import write_hf_tokenizer

pytestmark = [pytest.mark.reliability]


@pytest.fixture(scope="module")
def tokenizer(data):
    return load_tokenizer(data)  # the suite's prepared folder's BPE (tests/reliability/conftest.py)


@pytest.mark.parametrize("name", ["tokenizer.json", "tokenizer_config.json"])
def test_a_users_file_is_refused_and_kept(tokenizer, tmp_path, name):
    (tmp_path / name).write_text('{"mine": 1}')
    with pytest.raises(UserError, match=name):
        write_hf_tokenizer(tokenizer, tmp_path)
    assert (tmp_path / name).read_text() == '{"mine": 1}'


def test_its_own_earlier_output_is_written_again(tokenizer, tmp_path):
    write_hf_tokenizer(tokenizer, tmp_path, 64)
    write_hf_tokenizer(tokenizer, tmp_path, 128)
    assert json.loads((tmp_path / "tokenizer_config.json").read_text())["model_max_length"] == 128


@pytest.mark.parametrize("value", [-1, 0, 2.5, True])
def test_a_length_no_model_has_is_refused(tokenizer, tmp_path, value):
    with pytest.raises(UserError, match="model_max_length"):
        write_hf_tokenizer(tokenizer, tmp_path, value)
    assert not any(tmp_path.iterdir())
