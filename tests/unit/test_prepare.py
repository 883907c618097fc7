"""prepare(): token files, meta.json, split by document, frequencies, atomicity, CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from leviathan.cli import main as cli_main
from leviathan.data.loader import TokenDataset
from leviathan.data.prepare import prepare, prepare_eval_text
from leviathan.data.tokenizer import load_tokenizer
from leviathan.errors import UserError

WORDS = ("river stone lantern harbor quiet signal orchard copper meadow window thunder velvet "
         "compass ember glacier hollow").split()


def _doc(i: int) -> str:
    rng = np.random.default_rng(i)
    lines = [" ".join(rng.choice(WORDS, size=rng.integers(4, 12))).capitalize() + "." for _ in range(rng.integers(2, 8))]
    return f"Document {i}.\n" + "\n".join(lines) + "\n"


def _corpus(root: Path, n: int, start: int = 0) -> tuple[Path, list[str]]:
    root.mkdir(parents=True, exist_ok=True)
    docs = [_doc(i) for i in range(start, start + n)]
    for i, d in enumerate(docs):
        (root / f"doc{i:03d}.txt").write_text(d)
    return root, docs


def _docs_of(data_dir: Path, split: str) -> list[str]:
    """Decode a split file back into its documents (eot-separated, eot after each)."""
    ds = TokenDataset(data_dir, split)
    tok = ds.tokenizer()
    ids = np.asarray(ds.tokens, dtype=np.int64)
    if ids.size == 0:
        return []
    assert ids[-1] == ds.eot_id
    cuts = np.nonzero(ids == ds.eot_id)[0]
    return [tok.decode(part) for part in np.split(ids, cuts + 1)[:-1] for part in [part[:-1]]]


def _quiet(**kw):
    return dict(progress=False, log=lambda msg: None, **kw)


def test_data_dir_matches_the_contract(tmp_path):
    src, docs = _corpus(tmp_path / "c", 40)
    meta = prepare(src, tmp_path / "d", "cl100k_base", val_fraction=0.25, **_quiet())
    d = tmp_path / "d"
    assert sorted(p.name for p in d.iterdir()) == ["leviathan_output.json", "leviathan_tokenizer.json", "meta.json",
                                                   "train.bin", "train_freq.npy", "val.bin"]
    assert json.loads((d / "meta.json").read_text()) == meta
    assert meta["format"] == 1 and meta["tokenizer"] == "cl100k_base" and meta["vocab_size"] == 100277
    assert meta["dtype"] == "uint32" and meta["eot_id"] == 100257 and meta["created"] and len(meta["fingerprint"]) == 64
    train, val = meta["splits"]["train"], meta["splits"]["val"]
    assert train["file"] == "train.bin" and val["file"] == "val.bin"
    assert train["documents"] + val["documents"] == 40 and val["documents"] >= 3
    assert (d / "train.bin").stat().st_size == 4 * train["tokens"]
    # split by whole documents, order kept, nothing lost
    got_train, got_val = _docs_of(d, "train"), _docs_of(d, "val")
    assert sorted(got_train + got_val) == sorted(docs)
    assert got_train == [x for x in docs if x in set(got_train)]
    assert train["bytes"] == sum(len(x.encode()) for x in got_train)
    assert val["bytes"] == sum(len(x.encode()) for x in got_val)
    freq = np.load(d / "train_freq.npy")
    assert freq.dtype == np.int64 and freq.shape == (100277,)
    assert np.array_equal(freq, np.bincount(TokenDataset(d, "train").tokens, minlength=100277))


def test_split_is_deterministic_and_independent_of_batching(tmp_path):
    src, _ = _corpus(tmp_path / "c", 30)
    a = prepare(src, tmp_path / "a", "cl100k_base", val_fraction=0.3, num_workers=1, **_quiet())
    b = prepare(src, tmp_path / "b", "cl100k_base", val_fraction=0.3, num_workers=2, batch_chars=500,
                piece_chars=40, **_quiet())
    for f in ("train.bin", "val.bin", "train_freq.npy"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    assert a["fingerprint"] == b["fingerprint"]
    c = prepare(src, tmp_path / "c2", "cl100k_base", val_fraction=0.3, seed=1, **_quiet())
    assert _docs_of(tmp_path / "c2", "val") != _docs_of(tmp_path / "a", "val")
    assert c["fingerprint"] != a["fingerprint"]


def test_long_documents_are_cut_for_threads_without_changing_ids(tmp_path):
    text = "".join(_doc(i) for i in range(60))
    (tmp_path / "one.txt").write_text(text)
    prepare(tmp_path / "one.txt", tmp_path / "d", "o200k_base", val_fraction=0.0, piece_chars=100, **_quiet())
    ids = TokenDataset(tmp_path / "d", "train").tokens
    tok = load_tokenizer("o200k_base")
    assert ids.tolist() == tok.encode(text) + [tok.eot_id]


def test_explicit_val_source(tmp_path):
    src, docs = _corpus(tmp_path / "tr", 5)
    val, vdocs = _corpus(tmp_path / "va", 2, start=100)
    meta = prepare(src, tmp_path / "d", "cl100k_base", val_source=val, **_quiet())  # with val_fraction: refused
    assert _docs_of(tmp_path / "d", "train") == docs and _docs_of(tmp_path / "d", "val") == vdocs
    assert meta["val_assignment"]["method"] == "val_source" and meta["val_source"]
    (tmp_path / "blank.txt").write_text("\n")
    with pytest.raises(UserError, match="validation source .* holds no text"):
        prepare(src, tmp_path / "e", "cl100k_base", val_source=tmp_path / "blank.txt", **_quiet())


def test_tiny_corpus_falls_back_to_the_smallest_hash_document(tmp_path):
    src, docs = _corpus(tmp_path / "c", 3)
    meta = prepare(src, tmp_path / "d", "cl100k_base", val_fraction=0.001, **_quiet())
    assert meta["splits"]["val"]["documents"] == 1 and meta["val_assignment"]["fallback_smallest_hash"]
    got_train, got_val = _docs_of(tmp_path / "d", "train"), _docs_of(tmp_path / "d", "val")
    assert sorted(got_train + got_val) == sorted(docs)
    freq = np.load(tmp_path / "d" / "train_freq.npy")
    assert np.array_equal(freq, np.bincount(TokenDataset(tmp_path / "d", "train").tokens, minlength=freq.size))
    # same result whichever batch the document sat in
    prepare(src, tmp_path / "e", "cl100k_base", val_fraction=0.001, batch_chars=1, **_quiet())
    assert (tmp_path / "d" / "train.bin").read_bytes() == (tmp_path / "e" / "train.bin").read_bytes()


def test_a_corpus_whose_every_document_hashes_into_validation_is_refused(tmp_path):
    """Two documents at --val-fraction 0.5 can both hash into validation: prepare wrote a folder with 0 training
    tokens and exit 0 (found preparing a test fixture in the issue 33 session); now one error with the fix, and no
    data folder."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("the cat sat on the mat. " * 40 + "a dog ran. " * 30)
    (tmp_path / "c" / "b.txt").write_text("a second book of other words. " * 30)
    with pytest.raises(UserError, match="every one of the 2 documents .* hashed into validation.*--val-fraction"):
        prepare(tmp_path / "c", tmp_path / "d", "bpe:300", val_fraction=0.5, **_quiet())
    assert not (tmp_path / "d").exists()


def test_single_document_and_empty_corpus(tmp_path):
    (tmp_path / "one.txt").write_text("just one document")
    with pytest.raises(UserError, match="single document.*--val-source"):
        prepare(tmp_path / "one.txt", tmp_path / "d", "cl100k_base", **_quiet())
    meta = prepare(tmp_path / "one.txt", tmp_path / "d", "cl100k_base", val_fraction=0.0, **_quiet())
    assert meta["splits"]["val"]["tokens"] == 0 and len(TokenDataset(tmp_path / "d", "val")) == 0
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "blank.txt").write_text("  \n")
    with pytest.raises(UserError, match="holds no text"):
        prepare(tmp_path / "e", tmp_path / "out", "cl100k_base", **_quiet())
    assert not (tmp_path / "out").exists() and not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_trained_bpe_data_dir(tmp_path):
    src, docs = _corpus(tmp_path / "c", 20)
    meta = prepare(src, tmp_path / "d", "bpe:300", val_fraction=0.2, **_quiet())
    d = tmp_path / "d"
    assert meta["tokenizer"] == "bpe:300" and meta["dtype"] == "uint16" and meta["eot_id"] == 0
    assert (d / "tokenizer.json").is_file() and meta["timing"]["bpe_train_s"] >= 0
    tok = load_tokenizer(d)
    assert tok.name == "bpe:300" and tok.vocab_size == meta["vocab_size"]
    assert sorted(_docs_of(d, "train") + _docs_of(d, "val")) == sorted(docs)
    # reuse the trained tokenizer for another corpus
    other, _ = _corpus(tmp_path / "o", 4, start=50)
    meta2 = prepare(other, tmp_path / "d2", d, val_fraction=0.0, **_quiet())
    assert meta2["tokenizer"] == "bpe:300" and load_tokenizer(tmp_path / "d2").encode("river") == tok.encode("river")


def test_fingerprint_is_the_same_wherever_the_text_lies(tmp_path):
    """Version 2 hashes the tokens' text, split and tokenizer, no path: copies of a text at two places (with a BPE
    trained on each, or one tokenizer.json named by two paths) get one fingerprint; another text or tokenizer not."""
    here, _ = _corpus(tmp_path / "here" / "text", 20)
    there = tmp_path / "there" / "deeper" / "copy"
    shutil.copytree(here, there)
    a = prepare(here, tmp_path / "here" / "data", "bpe:300", val_fraction=0.2, **_quiet())
    b = prepare(there, tmp_path / "there" / "data", "bpe:300", val_fraction=0.2, **_quiet())
    assert a["fingerprint_version"] == b["fingerprint_version"] == 2 and "no path" in a["fingerprint_method"]
    assert a["source"] != b["source"] and a["fingerprint"] == b["fingerprint"]
    assert a["legacy_fingerprint"] != b["legacy_fingerprint"]  # version 1 hashed the source's path
    # a tokenizer.json named by two paths: its content counts, not where it lies
    specs = [tmp_path / "t1" / "tok.json", tmp_path / "t2" / "x" / "tok.json"]
    for spec in specs:
        spec.parent.mkdir(parents=True)
        shutil.copy(tmp_path / "here" / "data" / "tokenizer.json", spec)
    c, d = (prepare(here, tmp_path / f"json{i}", spec, val_fraction=0.2, **_quiet()) for i, spec in enumerate(specs))
    assert c["tokenizer"] != d["tokenizer"] and c["fingerprint"] == d["fingerprint"]
    # another text, another tokenizer: another fingerprint
    (there / "doc003.txt").write_text(_doc(3) + "One more line.\n")
    assert prepare(there, tmp_path / "e1", "bpe:300", val_fraction=0.2, **_quiet())["fingerprint"] != a["fingerprint"]
    assert prepare(here, tmp_path / "e2", "bpe:280", val_fraction=0.2, **_quiet())["fingerprint"] != a["fingerprint"]
    assert prepare(here, tmp_path / "e3", "cl100k_base", val_fraction=0.2, **_quiet())["fingerprint"] != \
        prepare(here, tmp_path / "e4", "o200k_base", val_fraction=0.2, **_quiet())["fingerprint"]


def test_a_data_dir_prepared_before_fingerprint_versions_still_loads(tmp_path):
    """meta.json as written before version 2 (path-dependent fingerprint, no version) is up to date as it is,
    with a note naming --overwrite, and reads as before."""
    src, _ = _corpus(tmp_path / "c", 10)
    out = tmp_path / "d"
    meta = prepare(src, out, "cl100k_base", val_fraction=0.2, **_quiet())
    old = {k: v for k, v in meta.items() if k not in ("fingerprint_version", "legacy_fingerprint",
                                                       "legacy_fingerprint_method", "field_digests")}
    old["fingerprint"] = meta["legacy_fingerprint"]
    old["created"] = "2026-12-04T22:52:55+00:00"  # before digests (round 21, P512: one since must have them)
    (out / "meta.json").write_text(json.dumps(old))
    messages = []
    assert prepare(src, out, "cl100k_base", val_fraction=0.2, progress=False, log=messages.append) == old
    assert "up to date" in messages[0] and "fingerprint is version 1" in messages[0] and "--overwrite" in messages[0]
    assert len(TokenDataset(out, "train")) > 0 and load_tokenizer(out).name == "cl100k_base"
    again = prepare(src, out, "cl100k_base", val_fraction=0.2, overwrite=True, **_quiet())
    assert again["fingerprint"] == meta["fingerprint"] and again["legacy_fingerprint"] == old["fingerprint"]


def test_existing_out_dir_rules(tmp_path):
    src, _ = _corpus(tmp_path / "c", 10)
    out = tmp_path / "d"
    prepare(src, out, "cl100k_base", val_fraction=0.2, **_quiet())
    mtime = (out / "train.bin").stat().st_mtime_ns
    messages = []
    prepare(src, out, "cl100k_base", val_fraction=0.2, progress=False, log=messages.append)
    assert "up to date" in messages[0] and (out / "train.bin").stat().st_mtime_ns == mtime
    with pytest.raises(UserError, match="differs in: tokenizer.*--overwrite"):
        prepare(src, out, "o200k_base", val_fraction=0.2, **_quiet())
    meta = prepare(src, out, "o200k_base", val_fraction=0.2, overwrite=True, **_quiet())
    assert meta["tokenizer"] == "o200k_base" and json.loads((out / "meta.json").read_text())["tokenizer"] == "o200k_base"
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "notes.txt").write_text("keep me")
    with pytest.raises(UserError, match="not a leviathan data dir"):
        prepare(src, tmp_path / "precious", "cl100k_base", overwrite=True, **_quiet())
    assert (tmp_path / "precious" / "notes.txt").read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("damage, why", [("{", "is not valid JSON"), ('{"vocab_size": 5}', "format None"),
                                         (None, "field 'vocab_size' is 'x'")], ids=["torn", "foreign", "edited"])
def test_an_out_dir_with_a_damaged_meta_json_is_refused_then_replaced_with_overwrite(tmp_path, damage, why):
    """prepare reads an existing --out's meta.json through ``data.meta`` like every reader: a damaged one is not up
    to date (refused naming the file, the damage and --overwrite), and --overwrite replaces a folder prepare wrote."""
    src, _ = _corpus(tmp_path / "c", 10)
    out = tmp_path / "d"
    meta = prepare(src, out, "cl100k_base", val_fraction=0.2, **_quiet())
    (out / "meta.json").write_text(damage if damage is not None else json.dumps({**meta, "vocab_size": "x"}))
    with pytest.raises(UserError, match=f"meta.json.*{why}.*pass --overwrite"):
        prepare(src, out, "cl100k_base", val_fraction=0.2, **_quiet())
    assert prepare(src, out, "cl100k_base", val_fraction=0.2, overwrite=True, **_quiet())["tokenizer"] == "cl100k_base"
    assert json.loads((out / "meta.json").read_text())["vocab_size"] == meta["vocab_size"]


def test_a_crash_leaves_no_data_dir(tmp_path, monkeypatch):
    src, _ = _corpus(tmp_path / "c", 10)
    tok = load_tokenizer("cl100k_base")
    calls = []

    def failing(texts, num_threads=0):
        calls.append(1)
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(tok, "encode_flat", failing)
    with pytest.raises(RuntimeError, match="simulated crash"):
        prepare(src, tmp_path / "d", tok, batch_chars=10, **_quiet())
    assert calls and not (tmp_path / "d").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["c"]


def test_stale_temporary_folders_of_dead_runs_are_removed(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    stale = tmp_path / f".d.tmp-{dead}-abcd1234"
    stale.mkdir()
    (stale / "train.bin").write_bytes(b"junk")
    alive = tmp_path / f".d.tmp-{os.getpid()}-0000"
    alive.mkdir()
    src, _ = _corpus(tmp_path / "c", 4)
    prepare(src, tmp_path / "d", "cl100k_base", val_fraction=0.0, **_quiet())
    assert not stale.exists() and alive.exists() and (tmp_path / "d" / "meta.json").is_file()


def test_stdlib_and_jsonl_sources(tmp_path):
    meta = prepare("stdlib", tmp_path / "s", "cl100k_base", max_documents=3, val_fraction=0.0, **_quiet())
    assert meta["splits"]["train"]["documents"] == 3 and meta["source"].startswith("stdlib (Python")
    lines = "".join(json.dumps({"text": _doc(i)}) + "\n" for i in range(6))
    (tmp_path / "x.jsonl").write_text(lines)
    meta = prepare(tmp_path / "x.jsonl", tmp_path / "j", "cl100k_base", val_fraction=0.5, **_quiet())
    assert meta["splits"]["train"]["documents"] + meta["splits"]["val"]["documents"] == 6


def test_decode_errors_are_reported(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_bytes(b"fine text")
    (tmp_path / "c" / "b.txt").write_bytes(b"bad \xff byte")
    meta = prepare(tmp_path / "c", tmp_path / "d", "cl100k_base", **_quiet())
    assert meta["source_stats"]["decode_errors"] == 1
    with pytest.raises(UserError, match=r"b\.txt: invalid UTF-8 at byte offset 4"):
        prepare(tmp_path / "c", tmp_path / "e", "cl100k_base", strict=True, **_quiet())
    assert not (tmp_path / "e").exists()


def test_prepare_eval_text(tmp_path):
    text = "Évaluation text\n" + _doc(7)
    (tmp_path / "wiki.test.txt").write_text(text)
    ids, num_bytes = prepare_eval_text(tmp_path / "wiki.test.txt", "cl100k_base")
    tok = load_tokenizer("cl100k_base")
    assert ids.dtype == np.int64 and ids.tolist() == tok.encode(text) and num_bytes == len(text.encode())
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "a.txt").write_text("first")
    (tmp_path / "two" / "b.txt").write_text("second")
    ids, num_bytes = prepare_eval_text(tmp_path / "two", tok)
    assert ids.tolist() == tok.encode("first") + [tok.eot_id] + tok.encode("second") and num_bytes == 11


def test_cli(tmp_path, capsys):
    src, _ = _corpus(tmp_path / "c", 6)
    out = tmp_path / "d"
    rc = cli_main(["prepare", str(src), "--out", str(out), "--tokenizer", "cl100k_base", "--val-fraction", "0.3",
                   "--workers", "1", "--no-progress"])
    assert rc == 0 and (out / "meta.json").is_file()
    assert "train" in capsys.readouterr().out
    assert cli_main(["prepare", str(tmp_path / "missing"), "--out", str(tmp_path / "x"), "--no-progress"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli_main(["prepare", str(src), "--out", str(out), "--tokenizer", "bpe:12", "--no-progress"]) == 2
    assert not os.path.exists(tmp_path / "x")
