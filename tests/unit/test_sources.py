"""Document sources: files, folders, globs, JSON lines (plain and zstd), parquet, HF datasets, stdlib."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest

from leviathan.data.sources import (
    HFDataset,
    open_source,
    parse_hf_spec,
    stdlib_files,
)
from leviathan.errors import UserError


def _write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "corpus"
    _write(root / "b.txt", "second document")
    _write(root / "a.md", "# first\n")
    _write(root / "sub" / "c.py", "print('third')\n")
    _write(root / "sub" / "empty.txt", "   \n")
    _write(root / "image.png", b"\x89PNG....")
    _write(root / ".hidden" / "x.txt", "hidden")
    _write(root / "__pycache__" / "y.txt", "cache")
    return root


def test_folder_is_recursive_sorted_and_skips_unknown_files(folder):
    src = open_source(folder)
    assert list(src) == ["# first\n", "second document", "print('third')\n"]
    assert src.stats.documents == 3 and src.stats.skipped_empty == 1 and src.stats.skipped_files == 1
    assert list(src) == list(src)  # re-iterable


def test_single_file_glob_and_list(folder):
    assert list(open_source(folder / "b.txt")) == ["second document"]
    assert list(open_source(str(folder / "**" / "*.py"))) == ["print('third')\n"]
    both = open_source([folder / "b.txt", folder / "a.md"])
    assert list(both) == ["second document", "# first\n"] and both.stats.documents == 2
    assert list(open_source(folder, max_documents=2)) == ["# first\n", "second document"]


def test_fingerprint_tracks_file_changes(folder):
    before = open_source(folder).stat_fingerprint()
    assert open_source(folder).stat_fingerprint() == before
    _write(folder / "b.txt", "second document, edited")
    assert open_source(folder).stat_fingerprint() != before


def test_missing_and_empty_inputs_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        open_source(tmp_path / "nope.txt")
    with pytest.raises(UserError, match="matches no files"):
        open_source(str(tmp_path / "*.txt"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no readable files"):
        open_source(tmp_path / "empty")


def test_invalid_utf8_is_counted_or_strict(tmp_path):
    path = _write(tmp_path / "bad.txt", b"hello\xff world \xfe!")
    src = open_source(path)
    assert list(src) == ["hello\ufffd world \ufffd!"]
    assert src.stats.decode_errors == 2 and src.stats.files_with_decode_errors == [str(path)]
    with pytest.raises(UserError, match=r"bad\.txt: invalid UTF-8 at byte offset 5"):
        list(open_source(path, strict=True))


def _jsonl(records) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_jsonl_plain_and_zstd(tmp_path):
    import zstandard

    records = [{"text": "doc one", "meta": 1}, {"text": "doc two"}, {"text": None}, {"text": "doc três"}]
    plain = _write(tmp_path / "a.jsonl", _jsonl(records))
    packed = _write(tmp_path / "a.jsonl.zst", zstandard.ZstdCompressor().compress(_jsonl(records)))
    for path in (plain, packed):
        src = open_source(path)
        assert list(src) == ["doc one", "doc two", "doc três"]
        assert src.stats.skipped_records == 1
    other = _write(tmp_path / "o.jsonl", _jsonl([{"body": "x"}]))
    assert list(open_source(other, text_field="body")) == ["x"]
    with pytest.raises(UserError, match=r"line 1: no 'text' field \(found: body\)"):
        list(open_source(other))


def test_jsonl_bad_lines(tmp_path):
    import zstandard

    path = _write(tmp_path / "b.jsonl", b'{"text": "ok"}\n{broken\n{"text": "fine"}\n')
    src = open_source(path)
    assert list(src) == ["ok", "fine"] and src.stats.skipped_records == 1
    with pytest.raises(UserError, match="line 2: not valid JSON"):
        list(open_source(path, strict=True))
    raw = b'{"text": "ok"}\n{"text": "b\xffd"}\n'
    packed = _write(tmp_path / "c.jsonl.zst", zstandard.ZstdCompressor().compress(raw))
    with pytest.raises(UserError, match="line 2: invalid UTF-8 at decompressed byte offset 26"):
        list(open_source(packed, strict=True))
    with pytest.raises(UserError, match="not a valid zstd stream"):
        list(open_source(_write(tmp_path / "d.jsonl.zst", b"not zstd at all")))


def test_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": ["p one", None, "p two"], "content": ["c1", "c2", "c3"]}), path)
    assert list(open_source(path)) == ["p one", "p two"]
    assert list(open_source(path, text_field="content")) == ["c1", "c2", "c3"]
    with pytest.raises(UserError, match="no column 'body'"):
        list(open_source(path, text_field="body"))


def test_folder_mixes_text_jsonl_and_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    _write(tmp_path / "d" / "1.txt", "from text")
    _write(tmp_path / "d" / "2.jsonl", _jsonl([{"text": "from jsonl"}]))
    pq.write_table(pa.table({"text": ["from parquet"]}), tmp_path / "d" / "3.parquet")
    assert list(open_source(tmp_path / "d")) == ["from text", "from jsonl", "from parquet"]


def test_hf_datasets_streaming_with_a_local_builder(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    path = _write(tmp_path / "hf.jsonl", _jsonl([{"text": f"row {i}"} for i in range(5)] + [{"text": ""}]))
    src = HFDataset("json", data_files=str(path), split="train")
    assert list(src) == [f"row {i}" for i in range(5)] and src.stats.skipped_empty == 1
    assert src.description.startswith("hf:json@train")
    with pytest.raises(UserError, match="could not open Hugging Face dataset"):
        list(HFDataset("json", data_files=str(tmp_path / "missing.jsonl")))
    with pytest.raises(UserError, match="no 'body' field"):
        list(HFDataset("json", data_files=str(path), text_field="body"))


def test_a_local_file_that_stops_parsing_mid_way_is_not_called_a_network_failure(tmp_path, monkeypatch):
    """A row of a local data file that does not parse, met while streaming, was told to "check network access"."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    path = _write(tmp_path / "hf.jsonl", _jsonl([{"text": f"row {i}"} for i in range(50)]) + b'{"text": broken\n')
    with pytest.raises(UserError, match=r"^reading hf:json@train .* failed after \d+ rows \(.*\); fix the row the error "
                                        r"names in the data files") as e:
        list(HFDataset("json", data_files=str(path), split="train"))
    assert "network" not in str(e.value) and "\n" not in str(e.value)


def test_hf_spec_parsing():
    assert parse_hf_spec("hf:wikitext:wikitext-2-raw-v1@validation") == ("wikitext", "wikitext-2-raw-v1", "validation")
    assert parse_hf_spec("hf:roneneldan/TinyStories") == ("roneneldan/TinyStories", None, "train")
    with pytest.raises(UserError, match="hf:NAME"):
        parse_hf_spec("hf:@train")
    assert open_source("hf:some/name@test").description == "hf:some/name@test"


def test_stdlib_corpus():
    files = stdlib_files()
    root = Path(sysconfig.get_paths()["stdlib"])
    rel = [f.relative_to(root).as_posix() for f in files]
    assert len(files) > 100 and rel == sorted(rel)
    assert not any(part in ("test", "tests", "idle_test", "site-packages") for r in rel for part in r.split("/"))
    docs = list(open_source("stdlib", max_documents=3))
    assert len(docs) == 3 and all(isinstance(d, str) and d for d in docs)
