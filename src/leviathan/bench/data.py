"""The benchmark's text and token ids: corpus files, a cached BPE, one id stream per tokenizer, batches.

Text: the Gutenberg books of the data folder (``leviathan.io.data_root``), else the Python standard library's
sources (first files for tokenizer training, last for batches). A trained BPE is cached under ``cache_root()/bench``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from ..errors import UserError
from ..io import books_root, cache_root
from .. import json_text


def corpus_files(split: str) -> tuple[list[Path], str]:
    """Text files for ``split`` ("train" for tokenizer training, "valid" for batches) and a description."""
    root = books_root()
    if root is not None:
        files = sorted((root / "gutenberg" / split).glob("*.txt"))
        if files:
            return files, f"gutenberg/{split}"
    from ..data.sources import stdlib_files

    files = stdlib_files()
    cut = int(len(files) * 0.8)
    return (files[:cut], "stdlib sources (first 80%)") if split == "train" else \
        (files[cut:], "stdlib sources (last 20%)")


def read_texts(files: Sequence[Path], max_chars: int) -> list[str]:
    """Whole files in order until ``max_chars`` characters are read."""
    texts, total = [], 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        texts.append(text)
        total += len(text)
        if total >= max_chars:
            break
    return texts


CACHE_RECORD = "bench_cache.json"  # {"files": {name: sha256}} of a cached BPE folder, written last


def default_cache_dir() -> Path:
    """Where the benchmark's trained BPEs are cached: ``leviathan.io.cache_root() / "bench"``."""
    return cache_root() / "bench"


def bench_tokenizer(spec: str, cache_dir: Path, log: Callable[[str], None] = print):
    """o200k_base (bundled), or a BPE of ``bpe:VOCAB`` trained on a few MB of train text, cached on disk under a key of the
    vocabulary, the corpus files (names and sizes) and the character budget, so changed text retrains."""
    from ..value_rules import check_callback

    check_callback("bench_tokenizer", "log", log)  # a function of one message (round 31, AA281, AA714)
    log = print if log is None else log  # None is the default, as check_callback's line says
    from ..data.tokenizer import load_tokenizer, train_bpe

    if not spec.startswith("bpe:"):
        return load_tokenizer(spec)
    vocab = int(spec.split(":", 1)[1])
    max_chars = 4_000_000 if vocab > 1024 else 400_000
    files, description = corpus_files("train")
    texts_files = []
    total = 0
    for path in files:
        texts_files.append(path)
        total += path.stat().st_size
        if total >= max_chars:
            break
    key = hashlib.sha256(json.dumps([vocab, max_chars, [(p.name, p.stat().st_size) for p in texts_files]]).encode())
    directory = Path(cache_dir) / f"bpe-{vocab}-{key.hexdigest()[:12]}"
    if (directory / "tokenizer.json").is_file():
        return _cached(directory, spec, vocab)
    # made before the training: a file in the cache's place ($LEVIATHAN_CACHE=a file) was found after it (round 27, R76)
    directory.mkdir(parents=True, exist_ok=True)
    log(f"training a BPE of {vocab} on {description} ({len(texts_files)} files, cached in {directory}) ...")
    tok = train_bpe(read_texts(texts_files, max_chars), vocab, name=spec)  # the cache's key, short of it or not
    tok.save(directory)
    _record_cache(directory)
    return load_tokenizer(str(directory))


def _record_cache(directory: Path) -> None:
    """Write the sha256 of the cached tokenizer's files (``CACHE_RECORD``), written last."""
    from ..checkpoint.state import fingerprints
    from ..io import atomic_write_text

    atomic_write_text(directory / CACHE_RECORD, json.dumps({"files": fingerprints(directory, (CACHE_RECORD,))}) + "\n")


def _cached(directory: Path, spec: str, vocab: int):
    """The cached BPE, checked against the sha256 its record holds: a tokenizer of another corpus put in the cache
    was measured as bench's own, exit 0 (issue 30 round 15, A43), and a damaged cache file was named with a fix
    bench does not take ("pass a valid tokenizer.json", A41) or "re-create it" (A42). A cache written before the
    record is loaded as it is, once it is a BPE of the request its folder is named for (``_check_cached_request``)."""
    from ..checkpoint.state import fingerprints
    from ..data.tokenizer import load_tokenizer

    fix = f"delete the folder {str(directory)!r} and run bench again (it trains the tokenizer anew)"
    try:
        record = json_text.read_file(directory / CACHE_RECORD, object_pairs_hook=json_text.no_repeats) \
            if (directory / CACHE_RECORD).exists() else None
    except (OSError, ValueError) as e:
        raise UserError(f"bench's cache record {str(directory / CACHE_RECORD)!r} is not readable JSON ({e}); {fix}")
    found = fingerprints(directory, (CACHE_RECORD,))
    if record is not None and (not isinstance(record, dict) or record.get("files") != found):
        raise UserError(f"bench's cached tokenizer in {str(directory)!r} is not the one bench trained (its files' "
                        f"sha256 differ from {CACHE_RECORD}'s): it was replaced or damaged; {fix}")
    try:
        tok = load_tokenizer(str(directory))
    except UserError as e:
        problem = str(e).split("; ")[0]  # its own fix names options bench does not take (A41)
        raise UserError(f"bench's cached tokenizer in {str(directory)!r} cannot be used ({problem}); {fix}") from None
    _check_cached_request(tok, directory, spec, vocab, fix)
    return tok


def _check_cached_request(tok, directory: Path, spec: str, vocab: int, fix: str) -> None:
    """UserError unless the cached ``tok`` is a BPE trained for ``spec`` (its recorded name) with at most ``vocab``
    ids (a small corpus may stop short of it, never past). Another BPE's files put in the folder, with the record
    deleted or rewritten to their sha256, were measured as "bpe:512 (300 ids)", exit 0 (issue 30 round 23, T8, T9):
    the record proves only that the files are the ones recorded, not that they are the BPE the folder is named for."""
    if tok.name == spec and tok.vocab_size <= vocab:
        return
    raise UserError(f"bench's cached tokenizer in {str(directory)!r} is not the one bench trained: the folder caches "
                    f"{spec}, but it holds {tok.name!r} ({tok.vocab_size:,} ids); {fix}")


def token_stream(tokenizer, max_chars: int = 2_000_000) -> tuple[np.ndarray, str]:
    """Validation text (never the tokenizer's training text) encoded as one id stream."""
    files, description = corpus_files("valid")
    ids = np.concatenate([np.asarray(tokenizer.encode(t), dtype=np.int64) for t in read_texts(files, max_chars)])
    return ids, description


@dataclass
class TokenData:
    """One configuration's token ids: the validation stream and where it came from."""

    stream: np.ndarray
    text: str  # which text, e.g. "gutenberg/valid"
    tokenizer: str
    vocab: int

    def summary(self) -> dict:
        """What the result JSON records (everything but the ids)."""
        return {"text": self.text, "tokenizer": self.tokenizer, "vocab": self.vocab, "tokens": int(len(self.stream))}

    def batches(self, batch_size: int, seq_len: int, count: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        return make_batches(self.stream, batch_size, seq_len, count)


def make_batches(stream: np.ndarray, batch_size: int, seq_len: int, count: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``count`` batches of consecutive windows, spread evenly over the stream: (x, y) int64 (B, T)."""
    need = batch_size * (seq_len + 1)
    if len(stream) < need:
        raise UserError(f"the benchmark text has {len(stream)} tokens, fewer than one batch ({need}); "
                        f"point $LEVIATHAN_DATA at the data folder")
    starts = np.linspace(0, len(stream) - need, count).astype(np.int64)
    out = []
    for s in starts:
        block = torch.from_numpy(stream[s:s + need].copy()).view(batch_size, seq_len + 1)
        out.append((block[:, :-1].contiguous(), block[:, 1:].contiguous()))
    return out
