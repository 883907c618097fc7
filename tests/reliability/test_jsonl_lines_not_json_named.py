"""A .jsonl source whose every line is skipped as not JSON says so (issue 30 round 30, X48).

``prepare js/garbage.jsonl --tokenizer bpe:300`` (every line not JSON, or one line of 100,000 nested arrays) said
"cannot train a BPE on an empty corpus; give it some text", and with a ready tokenizer "holds no text (0 non-empty
documents); check the path, --text-field or the file extensions": a user was told to add text to a file full of it.
The line now names the lines skipped and the first of them (``SourceStats.unparsed_note``); nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, write_corpus  # noqa: E402

SKIPPED = "of its line(s) were skipped as not valid JSON (the first, "


@pytest.fixture
def sources(tmp_path) -> Path:
    js = tmp_path / "js"
    js.mkdir()
    (js / "garbage.jsonl").write_text("not json\n{bad\n")
    (js / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    return js


@pytest.mark.parametrize("source, tokenizer, said", [
    ("garbage.jsonl", "bpe:300", "2 " + SKIPPED + "{js}/garbage.jsonl line 1: Expecting value), so no document"),
    ("garbage.jsonl", "{tok}", "2 " + SKIPPED + "{js}/garbage.jsonl line 1: Expecting value), so no document"),
    ("deep.jsonl", "bpe:300", "1 " + SKIPPED + "{js}/deep.jsonl line 1: its arrays or objects are nested too deeply"),
], ids=["bpe", "tokenizer", "deep"])
def test_a_jsonl_of_lines_not_json_names_them(sources, data, source, tokenizer, said):
    tok = str(data / "tokenizer.json")
    line = cli_error(["prepare", sources / source, "--tokenizer", tokenizer.replace("{tok}", tok), "--out",
                      sources.parent / "out"])
    assert line.startswith(f"error: source {sources / source} holds no text: ") and said.replace(
        "{js}", str(sources)) in line, line
    assert "give it some text" not in line and "check the path" not in line, line
    assert not (sources.parent / "out").exists()


def test_a_validation_source_of_lines_not_json_names_them(sources, tmp_path):
    corpus = write_corpus(tmp_path / "corpus", num_docs=6)
    line = cli_error(["prepare", corpus, "--val-source", sources / "garbage.jsonl", "--tokenizer", "bpe:300", "--out",
                      tmp_path / "out"])
    assert line.startswith(f"error: validation source {sources / 'garbage.jsonl'} holds no text: 2 {SKIPPED}"), line
    assert not (tmp_path / "out").exists()


def test_the_api_names_them_too_and_a_source_with_some_text_still_prepares(sources, tmp_path):
    from leviathan.data.prepare import prepare
    from leviathan.errors import UserError

    with pytest.raises(UserError, match=r"holds no text: 2 of its line\(s\) were skipped as not valid JSON"):
        prepare(str(sources / "garbage.jsonl"), tmp_path / "o", "bpe:300", val_fraction=0, progress=False)
    mixed = sources / "mixed.jsonl"
    mixed.write_text("not json\n" + "".join(f'{{"text": "document {i} holds some words"}}\n' for i in range(8)))
    meta = prepare(str(mixed), tmp_path / "o", "bpe:300", val_fraction=0, progress=False)
    assert meta["source_stats"]["skipped_records"] == 1 and "unparsed_records" not in meta["source_stats"]
