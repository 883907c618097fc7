"""Text holding a lone surrogate (valid JSON, not valid Unicode) is one line naming where (issue 30 round 29).

W745: ``prepare`` of a .jsonl whose text holds the escape ``\\ud800`` alone (JSON takes it; it decodes to a str no
UTF-8 can hold) ended in a raw UnicodeEncodeError at prepare.py's content hash. The JSON lines reader now names the
file, the line and the escape (``sources.utf8_size``, also what the parquet and Hugging Face readers size their text
with), and ``train_bpe`` names one in the texts it is given (the tokenizers library's raw UnicodeEncodeError). Bytes
read as text (.txt) cannot hold one: ``decode_utf8`` replaces what is not UTF-8. A surrogate pair is a character, and
is taken.
"""

from __future__ import annotations

import pytest

from leviathan.data.prepare import prepare
from leviathan.data.tokenizer import train_bpe
from leviathan.errors import UserError

pytestmark = pytest.mark.reliability


def _jsonl(path, text):
    path.write_text("".join('{"text": "%s %d"}\n' % (text, i) for i in range(30)), encoding="utf-8")
    return path


@pytest.mark.parametrize("tokenizer", ["bpe:300", "o200k_base"])
def test_a_lone_surrogate_escape_is_named_with_its_file_and_line(tmp_path, tokenizer):
    source = _jsonl(tmp_path / "src.jsonl", "abc \\ud800 def")
    with pytest.raises(UserError, match=r"src\.jsonl line 1: the text holds \\ud800 at character 4, a lone surrogate "
                                        r".*not valid Unicode text; write the whole character .*or remove it") as e:
        prepare(str(source), tmp_path / "data", tokenizer)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "data").exists()


def test_a_surrogate_pair_is_a_character_and_is_taken(tmp_path):
    source = _jsonl(tmp_path / "src.jsonl", "abc \\ud83d\\ude00 \\u00e9 def")
    assert prepare(str(source), tmp_path / "data", "o200k_base")["splits"]["train"]["documents"] > 0


def test_train_bpe_names_a_lone_surrogate():
    with pytest.raises(UserError, match=r"^train_bpe: a text holds \\udc80 at character 2, a lone surrogate"):
        train_bpe(["ab\udc80cd"] * 10, 300)
