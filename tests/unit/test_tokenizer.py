"""Tokenizers: built-ins pinned to tiktoken's ids, trained BPE, tokenizer.json, the quicktok fast path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from leviathan.data.tokenizer import (
    EOT_TEXT,
    HFTokenizer,
    load_tokenizer,
    split_for_threads,
    train_bpe,
)
from leviathan.errors import UserError

PARAGRAPH = (
    "The generator replaces the embedding table. Each token id is written in base b with k digits;\n"
    "every digit is mapped through a B-spline basis, and the products form a smooth embedding.\n"
    "Small models spend most of their parameters on the table, so the saving matters most there.\n"
    "Numbers like 3.14159, 42 and 2026 appear; so do accents (café, naïve) and symbols: {x: [1, 2]}.\n"
) * 6


def _lines_text() -> str:
    words = ["alpha", "Beta", "gamma", "delta", "  indented", "x = 1", "Zeta!", "", "eta's", "Über"]
    return "\n".join(f"{words[i % len(words)]} line {i} {'and more ' * (i % 5)}" for i in range(400))


@pytest.fixture(scope="module")
def bpe():
    return train_bpe([PARAGRAPH, _lines_text()], 400)


def test_o200k_builtin_matches_tiktoken_ids():
    tok = load_tokenizer("o200k_base")
    assert tok.name == "o200k_base" and tok.vocab_size == 200019 and tok.eot_id == 199999
    assert tok.encode("hello world") == [24912, 2375]  # tiktoken o200k_base
    assert tok.decode(tok.encode(PARAGRAPH)) == PARAGRAPH
    assert load_tokenizer("o200k_base") is tok  # cached


def test_cl100k_builtin_matches_tiktoken_ids():
    tok = load_tokenizer("cl100k_base")
    assert tok.vocab_size == 100277 and tok.eot_id == 100257
    assert tok.encode("hello world") == [15339, 1917]


def test_special_token_text_is_plain_text():
    tok = load_tokenizer("o200k_base")
    assert tok.eot_id not in tok.encode(f"a {EOT_TEXT} b")


@pytest.mark.parametrize("spec", ["o200k_base", "cl100k_base", "bpe"])
def test_encode_flat_and_newline_cuts_give_the_same_ids(spec, bpe):
    tok = bpe if spec == "bpe" else load_tokenizer(spec)
    text = _lines_text()
    pieces = split_for_threads(text, 300)
    assert len(pieces) > 10 and "".join(pieces) == text
    toks, offsets = tok.encode_flat(pieces, 2)
    assert toks.dtype == np.uint32 and offsets[0] == 0 and offsets[-1] == len(toks)
    assert toks.tolist() == tok.encode(text)
    assert tok.encode_batch(["ab", "", "cd ef"]) == [tok.encode("ab"), [], tok.encode("cd ef")]


def test_trained_bpe(bpe):
    assert bpe.name == "bpe:400" and bpe.eot_id == 0 and bpe.vocab_size <= 400
    assert bpe.fast  # the o200k grammar lets quicktok run it
    for text in (PARAGRAPH, "unseen wörds ☃ 😀 and\ttabs", f"x{EOT_TEXT}y"):
        assert bpe.decode(bpe.encode(text)) == text
        assert bpe.encode(text) == bpe._hf.encode(text, add_special_tokens=False).ids
    assert bpe.eot_id not in bpe.encode(f"x{EOT_TEXT}y")
    assert len(bpe.encode(PARAGRAPH)) < len(PARAGRAPH.encode()) / 2  # it learned merges


def test_save_and_load_round_trip(bpe, tmp_path):
    bpe.save(tmp_path / "tok")
    assert (tmp_path / "tok" / "tokenizer.json").is_file()
    again = load_tokenizer(tmp_path / "tok")
    assert again.name == "bpe:400" and again.eot_id == bpe.eot_id and again.vocab_size == bpe.vocab_size
    assert again.encode(PARAGRAPH) == bpe.encode(PARAGRAPH)
    by_file = load_tokenizer(str(tmp_path / "tok" / "tokenizer.json"))
    assert by_file.name == str((tmp_path / "tok" / "tokenizer.json").resolve())
    assert by_file.encode(PARAGRAPH) == bpe.encode(PARAGRAPH)
    load_tokenizer("cl100k_base").save(tmp_path / "cl")
    assert load_tokenizer(tmp_path / "cl").name == "cl100k_base"


def test_gpt2_style_tokenizer_json_uses_the_tokenizers_path(tmp_path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # GPT-2 regex: quicktok refuses
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator([PARAGRAPH], trainers.BpeTrainer(vocab_size=300, special_tokens=[EOT_TEXT],
                                                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = load_tokenizer(str(tmp_path / "tokenizer.json"))
    assert isinstance(tok, HFTokenizer) and not tok.fast and tok.eot_id == 0
    assert tok.encode_flat([PARAGRAPH, "b"])[0].tolist() == tok.encode(PARAGRAPH) + tok.encode("b")
    assert tok.decode(tok.encode(PARAGRAPH)) == PARAGRAPH


def test_tokenizer_json_without_eot_gets_one(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    hf = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = load_tokenizer(str(tmp_path / "tokenizer.json"))
    assert tok.eot_id == 3 and tok.vocab_size == 4
    assert tok.encode("a b c") == [0, 1, 2]


def test_bad_specs_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="did you mean 'o200k_base'"):
        load_tokenizer("o200k")
    with pytest.raises(UserError, match="prepared data dir"):
        load_tokenizer("bpe:512")
    (tmp_path / "bad.json").write_text(json.dumps({"not": "a tokenizer"}))
    with pytest.raises(UserError, match="not a readable"):
        load_tokenizer(str(tmp_path / "bad.json"))
    with pytest.raises(UserError, match="holds no tokenizer"):
        load_tokenizer(tmp_path)
    with pytest.raises(UserError, match="at least 257"):
        train_bpe([PARAGRAPH], 100)


def test_a_byte_level_bpe_without_every_byte_token_loads_without_crashing(tmp_path):
    """Round 12 (U67, U88): a tokenizer.json whose vocabulary lacks byte tokens (ids >= 200 and the merges removed)
    crashed the process with SIGSEGV in quicktok's import; such a tokenizer is now read by tokenizers alone. Run in a
    child process: a crash must fail this test, not end the suite."""
    import subprocess
    import sys
    from pathlib import Path

    tok = train_bpe(["the quick brown fox jumps over the lazy dog"] * 40, 300)
    spec = json.loads(tok.to_json())
    spec["model"]["vocab"] = {k: v for k, v in spec["model"]["vocab"].items() if v < 200}
    spec["model"]["merges"] = []
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec))
    code = (f"from leviathan.data.tokenizer import load_tokenizer; t = load_tokenizer({str(path)!r}); "
            f"print(t.vocab_size, len(t.encode('the fox')))")
    src = Path(__file__).resolve().parents[2] / "src"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(src)})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.split()[0] == "200"


def test_the_tokenizer_api_refuses_what_is_not_text_or_ids():
    """Issue 30 round 14: ``encode(None)`` and ``encode('a\\ud800b')`` ended in quicktok's pybind signature dump (B86,
    B87), ``encode_batch('abc')`` encoded each character as a text (B89), ``num_threads=1.5`` was truncated and -1 a
    pybind dump (B90, B91), ``decode(5)`` "'int' object is not iterable" (B99); ``train_bpe`` took
    ``vocab_size='300'`` (B361), ``min_frequency=-1`` / ``1.5`` ended in tokenizers' errors (B362, B363), and
    ``train_bpe([])`` returned a BPE of the byte alphabet (B364)."""
    from leviathan.data.tokenizer import load_tokenizer, train_bpe
    from leviathan.errors import UserError

    tok = train_bpe(["the cat sat on the mat"] * 3, vocab_size=300)
    for call, kind, words in ((lambda: tok.encode(None), TypeError, "encode takes a str, got NoneType"),
                              (lambda: tok.encode("a\ud800b"), ValueError, "a lone surrogate that is not UTF-8"),
                              (lambda: tok.encode_batch("abc"), TypeError, "takes a list of texts, got one str"),
                              (lambda: tok.encode_batch(["a"], num_threads=1.5), ValueError, "num_threads must be"),
                              (lambda: tok.encode_batch(["a"], num_threads=-1), ValueError, "num_threads must be"),
                              (lambda: tok.decode(5), TypeError, "decode takes a sequence of token ids"),
                              (lambda: load_tokenizer("o200k_base").encode(3), TypeError, "encode takes a str")):
        with pytest.raises(kind, match=words):
            call()
    for text in (b"the cat", b"\xff\xfe", bytearray(b"ab")):  # round 21, P35b: b'\xff\xfe' was two U+FFFD
        with pytest.raises(TypeError, match=r"encode takes a str, got (bytes|bytearray) .*decode it first: "
                                            r"data\.decode\('utf-8'\)"):
            tok.encode(text)
    with pytest.raises(TypeError, match="encode takes a str, got bytes"):
        tok.encode_batch(["a", b"\xff"])
    for kwargs, words in (({"vocab_size": "300"}, "must be a whole number such as 8192, got '300'"),
                          ({"vocab_size": 300, "min_frequency": -1}, "min_frequency must be a whole number >= 0"),
                          ({"vocab_size": 300, "min_frequency": 1.5}, "min_frequency must be a whole number >= 0")):
        with pytest.raises(UserError, match=words):
            train_bpe(["the cat"], **kwargs)
    with pytest.raises(UserError, match="cannot train a BPE on an empty corpus"):
        train_bpe([], vocab_size=300)


@pytest.mark.parametrize("name", [123, "", "  ", b"bpe:300"])
def test_train_bpe_refuses_a_name_its_own_reader_would_refuse(tmp_path, name):
    """Round 17 (E433): ``train_bpe(texts, 300, name=123).save(DIR)`` wrote a folder that ``load_tokenizer(DIR)`` then
    refused ("field 'name' is 123, not a tokenizer name; the directory was damaged"). The name is checked first."""
    with pytest.raises(UserError, match="train_bpe's name is the tokenizer's spec"):
        train_bpe(["hello world"] * 50, 300, name=name)
    assert list(tmp_path.iterdir()) == []
    assert train_bpe(["hello world"] * 50, 300, name="mine").name == "mine"
