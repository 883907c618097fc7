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


def _refused(capsys, *argv) -> str:
    """The one error line of an in-process ``leviathan`` call that must end in exit 2."""
    from leviathan.cli import main

    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("error: ")][-1]


@pytest.mark.parametrize("source", ["garbage.jsonl", "empty.txt"])
def test_a_validation_source_does_not_hide_a_source_without_text(capsys, sources, data, tmp_path, source):
    """Round 31 (Z41, Z42): with a ready tokenizer and a --val-source, a source of lines none of which is JSON, or an
    empty file, made a data folder of 0 training tokens (exit 0; train and eval refused it later): the no-text rule
    counted the validation source's documents. The source's own documents are counted; nothing is written."""
    (sources / "empty.txt").write_bytes(b"")
    val = write_corpus(tmp_path / "val", num_docs=1)
    line = _refused(capsys, "prepare", sources / source, "--val-source", val, "--tokenizer", data / "tokenizer.json",
                    "--out", tmp_path / "out")
    assert line.startswith(f"error: source {sources / source} holds no text"), line
    assert not (tmp_path / "out").exists()


def test_a_line_cut_short_beside_one_document_is_named(capsys, sources, tmp_path):
    """Round 31 (Z37): two JSON lines, the second cut mid-object, were "a single document ... cut the text into
    several documents (... JSON lines)", which it was; the line skipped is named now, and its fix."""
    trunc = sources / "trunc.jsonl"
    trunc.write_text('{"text": "hello world this is text"}\n{"text": "x"')
    line = _refused(capsys, "prepare", trunc, "--tokenizer", "bpe:300", "--out", tmp_path / "out")
    assert f"is a single document (and 1 line(s) skipped as not valid JSON, the first {trunc} line 2: " in line, line
    assert "fix or delete the line(s) that are not JSON" in line and not (tmp_path / "out").exists()


@pytest.mark.parametrize("name, data_bytes, said", [
    ("u16.jsonl", '{"text": "hello there"}\n{"text": "more words"}\n'.encode("utf-16"),
     "looks like UTF-16 text (a little-endian byte order mark); convert it to UTF-8 (iconv -f utf-16"),
    ("u16be.jsonl", b"\xfe\xff" + '{"text": "hello"}\n'.encode("utf-16-be"), "UTF-16 text (a big-endian byte order"),
    ("bom.jsonl", b'\xff\xfe{"text": "abc"}\n', "a UTF-16 byte order mark (bytes 0xff 0xfe) before text that is not "
                                                 "UTF-16; remove those first two bytes"),
    ("bom.txt", b"\xff\xfeplain words here\n", "a UTF-16 byte order mark (bytes 0xff 0xfe) before text"),
    ("u32.jsonl", '{"text": "hello world"}\n'.encode("utf-32"),  # round 32, AB3: named UTF-16, with its iconv
     "looks like UTF-32 text (a little-endian byte order mark); convert it to UTF-8 (iconv -f utf-32 -t utf-8"),
    ("u32be.txt", b"\x00\x00\xfe\xff" + "plain words\n".encode("utf-32-be"), "UTF-32 text (a big-endian byte"),
], ids=["utf16-jsonl", "utf16be-jsonl", "bom-before-utf8-jsonl", "bom-before-utf8-txt", "utf32-jsonl", "utf32be-txt"])
def test_utf16_and_a_stray_byte_order_mark_are_named_as_such(capsys, sources, tmp_path, name, data_bytes, said):
    """Round 31 (Z35, Z36): a .jsonl saved as UTF-16 (Windows Notepad), or a UTF-16 byte order mark before UTF-8
    lines, was "not valid JSON ... Expecting value; write one JSON object per line", where the same text as .txt was
    named UTF-16. JSON lines are looked at like text files (``binary.binary_kind`` on the first line)."""
    path = sources / name
    path.write_bytes(data_bytes)
    line = _refused(capsys, "prepare", path, "--tokenizer", "bpe:300", "--out", tmp_path / "out")
    assert line.startswith(f"error: {path} is not text: it looks like ") and said in line, line
    assert "not valid JSON" not in line and not (tmp_path / "out").exists()


_TWO_LINES = '{"text": "hello world and more words here"}\n{"text": "more"}\n'


@pytest.mark.parametrize("name, data_bytes, said", [
    ("u32le_nobom.jsonl", _TWO_LINES.encode("utf-32-le"), "looks like UTF-32LE text (no byte order mark); convert it "
                                                          "to UTF-8 (iconv -f utf-32le -t utf-8 FILE > NEW)"),
    ("u32be_nobom.txt", ("hello world " * 50).encode("utf-32-be"), "UTF-32BE text (no byte order mark); convert it to "
                                                                   "UTF-8 (iconv -f utf-32be"),
    ("u16le_nobom.txt", ("hello world " * 50).encode("utf-16-le"), "UTF-16LE text (no byte order mark); convert it to "
                                                                   "UTF-8 (iconv -f utf-16le"),
    ("u16be_nobom.jsonl", _TWO_LINES.encode("utf-16-be"), "UTF-16BE text (no byte order mark); convert it to UTF-8 "
                                                          "(iconv -f utf-16be"),
], ids=["AD19-utf32le-jsonl", "AD20-utf32be-txt", "utf16le-txt", "utf16be-jsonl"])
def test_utf32_and_utf16_without_a_byte_order_mark_are_named(capsys, sources, tmp_path, name, data_bytes, said):
    """Round 33 (AD19, AD20): UTF-32 without a byte order mark was "binary data (NUL bytes; or UTF-16 text) ... convert
    UTF-16 with iconv", whose `iconv -f utf-16` gives text full of NULs. ``binary._unmarked_kind`` tells the encoding
    by where its NUL bytes fall, and the fix names it (iconv reads utf-16 / utf-32 as big-endian without a mark)."""
    path = sources / name
    path.write_bytes(data_bytes)
    line = _refused(capsys, "prepare", path, "--tokenizer", "bpe:300", "--out", tmp_path / "out")
    assert line.startswith(f"error: {path} is not text: it looks like ") and said in line, line
    assert "corpus" not in line and not (tmp_path / "out").exists()


def test_eval_text_in_utf32_without_a_mark_is_named_without_a_corpus(sources):
    """Round 33 (AD29): ``eval --text`` of UTF-32LE without a mark said "binary data (NUL bytes; or UTF-16 text); pass
    UTF-8 text files (convert UTF-16 with iconv), or remove it from the corpus": UTF-16, and a corpus for eval's one
    file. Its reader (``EvalStream.from_text``) now names UTF-32LE and its iconv line."""
    from leviathan.errors import UserError
    from leviathan.eval.stream import EvalStream

    path = sources / "eval_u32le.jsonl"
    path.write_bytes(_TWO_LINES.encode("utf-32-le"))
    with pytest.raises(UserError) as refused:
        EvalStream.from_text(path, "cl100k_base")
    assert str(refused.value) == (f"{path} is not text: it looks like UTF-32LE text (no byte order mark); convert it "
                                  f"to UTF-8 (iconv -f utf-32le -t utf-8 FILE > NEW)")


_ZH = "这是一个测试文本，用于检查编码。" * 200
_RU = "Это тестовый текст для проверки кодировки. " * 100
_EMOJI = "word \U0001F600\U0001F600\U0001F600 " * 300


@pytest.mark.parametrize("name, data_bytes, said", [
    ("zh16le.txt", _ZH.encode("utf-16-le"), "UTF-16LE text (no byte order mark); convert it to UTF-8 (iconv -f utf-16le"),
    ("ru16le.txt", _RU.encode("utf-16-le"), "UTF-16LE text (no byte order mark); convert it to UTF-8 (iconv -f utf-16le"),
    ("ru16be.txt", _RU.encode("utf-16-be"), "UTF-16BE text (no byte order mark); convert it to UTF-8 (iconv -f utf-16be"),
    ("emoji32.txt", _EMOJI.encode("utf-32-le"), "UTF-32LE text (no byte order mark); convert it to UTF-8 (iconv -f "
                                                "utf-32le"),
], ids=["AH26-chinese-utf16le", "AH27-russian-utf16le", "russian-utf16be", "AH31-emoji-utf32le"])
def test_utf16_and_utf32_of_other_scripts_without_a_mark_are_named(sources, name, data_bytes, said):
    """Round 35 (AH26, AH27, AH31, AH33): UTF-16 or UTF-32 text of other scripts, whose NUL bytes fall in no one
    column, was "binary data (NUL bytes); pass UTF-8 text in its place" in prepare and eval --text. ``binary.
    _decoded_kind`` tells it by decoding (the reader eval --text uses; prepare asks the same ``binary_kind``)."""
    from leviathan.data.binary import binary_kind
    from leviathan.errors import UserError
    from leviathan.eval.stream import EvalStream

    path = sources / name
    path.write_bytes(data_bytes)
    with pytest.raises(UserError) as refused:
        EvalStream.from_text(path, "cl100k_base")
    assert str(refused.value).startswith(f"{path} is not text: it looks like ") and said in str(refused.value)
    assert binary_kind(bytes(range(1, 256)) * 3 + b"\x00") == "binary data (NUL bytes)"


def test_a_token_file_is_still_binary_data():
    """Round 35: the decoding rule must not call a prepared folder's token ids (uint16, which also decode as UTF-16)
    text: their letters scatter over scripts and blocks (``binary._one_script``)."""
    import numpy as np

    from leviathan.data.binary import binary_kind

    ids = (np.random.default_rng(0).zipf(1.3, 4096) % 4096).astype(np.uint16)
    assert binary_kind(ids.tobytes()) == "binary data (NUL bytes)"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-32-be"])
def test_settings_and_results_in_utf16_or_utf32_name_the_conversion(capsys, tmp_path, encoding):
    """Round 35 (AH34, AH35): a run config or grid in UTF-16 / UTF-32 was "not YAML settings; pass a YAML file of
    settings" with no conversion; (AH36-AH38) a results.jsonl in UTF-16 had each line "cut short or damaged", then "no
    result rows", and collect_results.py copied 0 rows into a new folder. ``config.load_yaml`` and
    ``jsonl.read_json_lines`` name the encoding and iconv's line (``binary.other_encoding``)."""
    from leviathan.config import load_yaml
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import read_results

    flag = "utf-" + encoding[4:6] + encoding[7:]
    config = tmp_path / "u.yaml"
    config.write_bytes("max_steps: 2\ndata:\n  path: d1\n".encode(encoding))
    with pytest.raises(UserError) as refused:
        load_yaml(config)
    assert f"is {flag.upper()} text (no byte order mark), and settings are read as UTF-8; convert it to UTF-8 " \
           f"(iconv -f {flag} -t utf-8" in str(refused.value), refused.value
    rows = tmp_path / "results.jsonl"
    rows.write_bytes(('{"name": "a", "final_val_loss": 3.0}\n' * 3).encode(encoding))
    with pytest.raises(UserError) as refused:
        read_results(rows)
    assert f"is {flag.upper()} text (no byte order mark), and JSON lines are read as UTF-8" in str(refused.value)
    assert "cut short" not in capsys.readouterr().err
