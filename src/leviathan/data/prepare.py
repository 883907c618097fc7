"""Tokenize a corpus into memory-mapped token files: the data dir every training run reads.

    meta = prepare("stdlib", "data/stdlib")                                # o200k_base, 1% validation
    meta = prepare("books/", "data/books-bpe", tokenizer="bpe:8192")       # train a BPE first
    meta = prepare("train/", "data/x", val_source="valid/")                # explicit validation corpus
    tokens, num_bytes = prepare_eval_text("wiki.test.tokens", "data/x")    # raw text for evaluation

The data dir (docs/CONTRACTS.md, section Data): meta.json (``data.meta``; written last, with a digest of every
other file, ``data.companions``), train.bin and val.bin (raw ids, uint16 when vocab_size <= 65535 else uint32,
each document followed by eot_id), train_freq.npy (int64 count of each id in train.bin), the tokenizer's files and
the ownership marker (``leviathan.ownership``). A split's ``bytes`` is the UTF-8 size of its documents (separators
excluded): bits per byte = loss_nats * tokens / (bytes * ln 2), comparable across tokenizers.

Validation split, by document. Each document's UTF-8 bytes are hashed (blake2b-128); a keyed
hash of that digest with ``seed`` gives u in [0, 1), and the document goes to validation iff
u < val_fraction. This is deterministic, independent of document order and of the number of
workers, and sends duplicate documents to the same split. If no document falls below
val_fraction (tiny corpora), the document with the smallest u is moved to validation, so
val_fraction > 0 always yields a validation split (a corpus of a single document is refused;
pass ``val_source``). With ``val_source`` every source document is training data.
(A BPE trained by ``prepare`` sees only training documents, except in that fallback case, where
the moved document was part of the BPE's training text.)

The fingerprint (``data.fingerprint``) names the tokens wherever the text lies; ``source_stat`` (sha256 over file
names, sizes and mtimes) is cheaper and only decides whether an existing data dir is up to date (then ``prepare``
returns its meta without work; a data dir prepared before fingerprint version 2 keeps its version-1 fingerprint
until ``overwrite=True`` prepares it again).

Parallelism: quicktok's ``encode_batch`` runs ``num_workers`` native threads without the GIL while a reader thread
reads, decodes and hashes the next batch (a process pool was measured slower: docs/benchmarks.md, "Data
preparation"). Documents longer than ``piece_chars`` are cut at "\\n"+letter boundaries, where the pre-tokenizers
always split, so one huge document still uses every thread and the ids are unchanged (tested).

Atomicity: everything is written into a hidden ``.NAME.tmp-PID-*`` folder next to ``out_dir`` and renamed into
place after an fsync (a killed run's folder is deleted by the next ``prepare`` once its process is gone), never a
half-written data dir. An existing different data dir is only replaced with ``overwrite=True``, and only when it
is provably prepare's output (``leviathan.ownership``: its marker, or for a data dir prepared before markers its
meta.json's files and nothing else) and no live process holds a lock in it.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import queue
import shutil
import sys
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

from ..value_rules import api_check, check_callback, check_switches, thread_problem
from ..errors import UserError, not_a_folder
from ..locking import folder_lock
from ..ownership import (CONTAINERS, check_apart, check_not_inside, check_replaceable, check_unlocked,
                         leftover_is_own, listed_files, read_marker, replaced_folder, write_marker)
from ..removal import remove_tree, warn_left
from ..seeds import check_seed
from ..storage import storage_oserror
from .. import stop_signals
from .companions import file_digests
from .fingerprint import DataFingerprint
from .meta import META_FILE, PreparedMeta, find_meta
from .meta_digest import DIGESTS, field_digests
from .prepare_arguments import check_prepare_arguments
from .sources import Source, SourceStats, open_source
from .tokenizer import (BUILTIN_ENCODINGS, Tokenizer, check_bpe_vocab_size, load_tokenizer, short_vocabulary,
                        split_for_threads, train_bpe)
from .val_overlap import ValOverlap
from ..storage import api_write

__all__ = ["prepare", "prepare_eval_text", "dtype_for_vocab", "FORMAT_VERSION", "META_FILE", "FREQ_FILE"]

FORMAT_VERSION = 1
FREQ_FILE = "train_freq.npy"
SPLITS = ("train", "val")
_U64 = float(2**64)


def dtype_for_vocab(vocab_size: int) -> np.dtype:
    """uint16 when every id fits (vocab_size <= 65535), else uint32."""
    return np.dtype(np.uint16) if vocab_size <= 65535 else np.dtype(np.uint32)


# --------------------------------------------------------------------------------------------
# document batches (built by a reader thread)


def _split_key(seed: int) -> bytes:
    return hashlib.sha256(f"leviathan-split-{int(seed)}".encode()).digest()


def _doc_hash(data: bytes, key: bytes) -> tuple[bytes, float]:
    """(blake2b-128 digest of the document, u in [0, 1) from a seed-keyed hash of that digest)."""
    digest = hashlib.blake2b(data, digest_size=16).digest()
    u = int.from_bytes(hashlib.blake2b(digest, digest_size=8, key=key).digest(), "little") / _U64
    return digest, u


@dataclass
class _Batch:
    pieces: list[str] = field(default_factory=list)
    piece_doc: list[int] = field(default_factory=list)  # batch-local document index of each piece
    doc_split: list[int] = field(default_factory=list)  # 0 train, 1 val
    doc_bytes: list[int] = field(default_factory=list)
    doc_u: list[float] = field(default_factory=list)
    chars: int = 0


class _Reader:
    """Reads documents, assigns splits, hashes them; hands out batches from a background thread."""

    def __init__(self, parts: list[tuple[Source, bool]], val_fraction: float, seed: int,
                 fingerprint: DataFingerprint, cut: bool, batch_chars: int, piece_chars: int):
        self.parts = parts  # (source, is_validation_source)
        self.val_fraction = val_fraction
        self.key = _split_key(seed)
        self.fingerprint = fingerprint
        self.cut, self.batch_chars, self.piece_chars = cut, batch_chars, piece_chars
        self.queue: queue.Queue = queue.Queue(maxsize=2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="leviathan-prepare-reader", daemon=True)

    def _put(self, item) -> bool:
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            batch = _Batch()
            overlap = ValOverlap(active=len(self.parts) > 1)  # F181, G119: a validation copy of a training document
            for source, is_val in self.parts:
                for text in source:
                    data = text.encode("utf-8")
                    digest, u = _doc_hash(data, self.key)
                    split = 1 if (is_val or u < self.val_fraction) else 0
                    self.fingerprint.add(split, digest)
                    overlap.add(is_val, digest)
                    d = len(batch.doc_split)
                    batch.doc_split.append(split)
                    batch.doc_bytes.append(len(data))
                    batch.doc_u.append(u)
                    pieces = split_for_threads(text, self.piece_chars) if self.cut else [text]
                    batch.pieces.extend(pieces)
                    batch.piece_doc.extend([d] * len(pieces))
                    batch.chars += len(text)
                    if batch.chars >= self.batch_chars:
                        if not self._put(batch):
                            return
                        batch = _Batch()
            if len(self.parts) > 1:
                overlap.check(self.parts[0][0], self.parts[1][0])
            if batch.pieces and not self._put(batch):
                return
            self._put(None)
        except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
            self._put(e)

    def __iter__(self):
        self.thread.start()
        try:
            while True:
                item = self.queue.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.stop.set()


# --------------------------------------------------------------------------------------------
# split writers


class _SplitWriter:
    def __init__(self, path: Path, dtype: np.dtype, vocab_size: int | None):
        self.path = path
        self.file = open(path, "wb")
        self.dtype = dtype
        self.tokens = 0
        self.documents = 0
        self.bytes = 0
        self.freq = np.zeros(vocab_size, dtype=np.int64) if vocab_size else None

    def write(self, ids: np.ndarray, documents: int, num_bytes: int) -> None:
        if ids.size:
            arr = ids.astype(self.dtype, copy=False)
            try:
                arr.tofile(self.file)
            except OSError as e:  # a disk filling part-way: numpy says so without an errno (leviathan.storage)
                raise storage_oserror(e, self.path) from None
            if self.freq is not None:
                self.freq += np.bincount(ids, minlength=self.freq.size)
        self.tokens += int(ids.size)
        self.documents += documents
        self.bytes += num_bytes

    def close(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()

    def summary(self) -> dict:
        return {"file": self.path.name, "tokens": self.tokens, "documents": self.documents, "bytes": self.bytes}


def _write_batch(batch: _Batch, toks: np.ndarray, offsets: np.ndarray, eot_id: int,
                 writers: tuple[_SplitWriter, _SplitWriter], best: dict) -> None:
    """Append one encoded batch to the split files, a separator after each document."""
    lens = np.diff(offsets)  # (num_pieces,)
    piece_doc = np.asarray(batch.piece_doc, dtype=np.int64)
    piece_end = np.ones(len(piece_doc), dtype=bool)
    piece_end[:-1] = piece_doc[1:] != piece_doc[:-1]  # last piece of its document
    doc_split = np.asarray(batch.doc_split, dtype=np.int8)
    doc_bytes = np.asarray(batch.doc_bytes, dtype=np.int64)
    piece_split = doc_split[piece_doc]
    for s, writer in enumerate(writers):
        mask = piece_split == s
        if not mask.any():
            continue
        if mask.all():
            seg, seg_lens, seg_end = toks, lens, piece_end
        else:
            seg = toks[np.repeat(mask, lens)]
            seg_lens, seg_end = lens[mask], piece_end[mask]
        out = np.insert(seg, np.cumsum(seg_lens)[seg_end], eot_id)  # doc, eot, doc, eot, ...
        docs_here = doc_split == s
        if s == 0:  # remember where the smallest-u training document lies (see the fallback)
            u = np.asarray(batch.doc_u)
            cand = np.nonzero(docs_here)[0]
            d = int(cand[np.argmin(u[cand])])
            same = int((u[cand] == u[d]).sum())  # copies of that document (one text, one hash) in this batch
            if u[d] == best.get("u"):
                best["copies"] += same
            elif u[d] < best.get("u", 2.0):
                piece_out_len = seg_lens + seg_end  # tokens each piece adds to ``out``
                starts = np.concatenate([[0], np.cumsum(piece_out_len)[:-1]])
                mine = piece_doc[mask] == d
                best.update(u=float(u[d]), start=writer.tokens + int(starts[mine][0]),
                            length=int(piece_out_len[mine].sum()), bytes=int(doc_bytes[d]), copies=same)
        writer.write(out, int(docs_here.sum()), int(doc_bytes[docs_here].sum()))


def _move_to_val(tmp: Path, train: _SplitWriter, val: _SplitWriter, best: dict) -> None:
    """Move one training document (token range ``best``) to the validation file."""
    train.file.flush()
    n, start, length = train.tokens, best["start"], best["length"]
    arr = np.memmap(train.path, dtype=train.dtype, mode="r+", shape=(n,))
    seg = np.array(arr[start:start + length])
    arr[start:n - length] = arr[start + length:n].copy()
    arr.flush()
    del arr
    train.file.truncate((n - length) * train.dtype.itemsize)
    train.file.seek(0, os.SEEK_END)
    train.tokens -= length
    train.documents -= 1
    train.bytes -= best["bytes"]
    if train.freq is not None:
        train.freq -= np.bincount(seg, minlength=train.freq.size)
    val.write(seg, 1, best["bytes"])


# --------------------------------------------------------------------------------------------
# out_dir handling


def _complete(directory: Path, meta: PreparedMeta) -> bool:
    try:
        itemsize = np.dtype(meta.dtype).itemsize
        return all((directory / v.file).stat().st_size == v.tokens * itemsize
                   for v in meta.splits.values()) and (directory / FREQ_FILE).is_file()
    except (TypeError, OSError):
        return False


def _marked_by_prepare(out: Path) -> bool:
    """Whether ``out`` holds prepare's marker (a folder without one is replaced only when its meta.json reads:
    ``_legacy_data_dir``)."""
    try:
        marker = read_marker(out)
    except UserError:
        return False
    return marker is not None and marker.verb == "prepare"


# the flag and the API's keyword that replace a data folder, named both in every refusal about it: the lines said
# "--overwrite" to a Python caller of prepare(..., overwrite=True) (round 32's note, carried in round 33), as export's
OVERWRITE = "--overwrite (overwrite=True)"


def _check_out_dir(out: Path, settings: dict, stat: str, overwrite: bool) -> PreparedMeta | None:
    """Existing up-to-date data dir -> its meta; a conflicting one -> UserError (unless overwrite)."""
    if not out.exists():
        return None
    if not out.is_dir():  # a named pipe was "is a file" (round 28, T48)
        raise UserError(f"--out {out} {not_a_folder(out)}; choose a directory path (a new or empty folder)")
    fix = f"pass {OVERWRITE} to replace it, or choose another --out"
    # a damaged meta.json in a folder without prepare's marker: --overwrite would be refused too (round 11, R65)
    damaged_fix = fix if _marked_by_prepare(out) else (f"the folder holds no marker of `leviathan prepare`, so "
                                                       f"{OVERWRITE} would not replace it either; choose a new or "
                                                       f"empty --out")
    try:
        meta = find_meta(out, damaged_fix)
    except UserError:  # a damaged or foreign meta.json: --overwrite replaces it only where prepare wrote the folder
        if not overwrite:
            raise
        meta = None
    else:
        if meta is None:
            if any(out.iterdir()):
                raise UserError(f"--out {out} exists and is not a leviathan data dir (no meta.json); refusing to "
                                f"replace it; choose a new or empty directory")
            return None
    if overwrite:
        check_replaceable(out, "prepare", OVERWRITE, legacy=lambda folder, files: _legacy_data_dir(meta, files),
                          own=OWN_FILES)
        return None
    if meta.settings == settings and meta.source_stat == stat and _complete(out, meta):
        return meta
    old = meta.settings or {}
    diff = [k for k in settings if old.get(k) != settings[k]] or ["source files changed"]
    raise UserError(f"--out {out} already holds different prepared data (tokenizer {meta.tokenizer!r}, "
                    f"source {meta.source!r}; differs in: {', '.join(diff)}); {fix}")


def _check_named_once(source, val_source) -> None:
    """UserError when one file or folder is named twice among the sources and the validation source, or one lies
    inside another named folder: ``prepare a.txt a.txt`` counted its documents twice and put one copy in each split
    (issue 30 round 12, U200), and ``prepare corpus --val-source corpus/b.txt`` trained on b.txt and scored on it
    (round 18, F180, G115, G118). A copy under another name is found by its digest as the documents are read
    (``_Reader``)."""
    seen: list[tuple[Path, str]] = []
    for spec in [*(source if isinstance(source, (list, tuple)) else [source]),
                 *(val_source if isinstance(val_source, (list, tuple)) else [val_source])]:
        if not isinstance(spec, (str, os.PathLike)) or os.fspath(spec) == "stdlib":
            continue
        path = Path(spec).expanduser()
        if not path.exists():
            continue
        real = Path(os.path.realpath(path))
        for other, name in seen:
            if real == other:
                raise UserError(f"{os.fspath(spec)!r} and {name!r} are one source named twice: its documents would be "
                                f"counted twice, and a copy could land in each split; name each source once")
            if real.is_relative_to(other) or other.is_relative_to(real):
                inner, outer = (os.fspath(spec), name) if real.is_relative_to(other) else (name, os.fspath(spec))
                raise UserError(f"{inner!r} lies inside the folder {outer!r}, also named as a source: its documents "
                                f"would be read twice, and a validation file also trained on; move it out of the "
                                f"folder, or name it once")
        seen.append((real, os.fspath(spec)))


def _check_apart(out: Path, specs: list, sources: list) -> None:
    """UserError when --out is a source folder, lies inside one, or holds a source file (``ownership.check_apart``):
    a data folder inside its corpus is read as corpus next time, and replacing one that holds its source deletes it."""
    folders = []
    for spec in specs:
        for item in spec if isinstance(spec, (list, tuple)) else [spec]:
            if isinstance(item, (str, os.PathLike)) and os.fspath(item) != "stdlib" and Path(item).expanduser().is_dir():
                folders.append(Path(item).expanduser())
    for folder in folders:
        check_apart(folder, "the source folder", out, "--out")
    files = []
    pending = [s for s in sources if s is not None]
    while pending:
        source = pending.pop()
        pending.extend(getattr(source, "sources", []))
        files.extend(getattr(source, "paths", []))
    root = Path(os.path.realpath(out))
    inside = [f for f in files if Path(os.path.realpath(f)).is_relative_to(root)]
    if inside:
        raise UserError(f"--out {str(out)!r} holds the source file {str(inside[0])!r}: an output folder must be apart "
                        f"from its input ({OVERWRITE} would delete it); choose another --out")


# every file a data folder (and the temporary folder it is built in) ever holds: its split files are NAME.bin
OWN_FILES = (META_FILE, FREQ_FILE, "*.bin", "tokenizer.json", "leviathan_tokenizer.json", "leviathan_output.json")


def _legacy_data_dir(meta: PreparedMeta | None, files: list[str]) -> bool:
    """Whether a folder without the ownership marker is a data dir ``prepare`` wrote before markers existed: its
    meta.json reads, and it holds its split files, the frequencies, the tokenizer files and nothing else."""
    expected = {META_FILE, FREQ_FILE, "tokenizer.json", "leviathan_tokenizer.json"}
    expected |= {v.file for v in (meta.splits.values() if meta is not None else ())}
    return meta is not None and META_FILE in files and set(files) <= expected


def _remove_stale_temps(out: Path) -> None:
    """Delete ``.NAME.tmp-PID-*`` folders left by prepare runs whose process no longer exists."""
    from ..dead_writers import leftovers

    for p, pid in leftovers(out.parent, f".{out.name}.tmp-"):
        if pid is not None and leftover_is_own(p, OWN_FILES):  # a user's folder of that name is not prepare's to delete
            shutil.rmtree(p, ignore_errors=True)


def _install(tmp: Path, out: Path) -> None:
    """Rename the finished temporary folder to ``out`` (replacing an old data dir)."""
    old = None
    if out.exists():
        check_unlocked(out, f"{OVERWRITE} would replace")  # a training run may have started reading it meanwhile (H1)
        if os.path.islink(out) or any(out.iterdir()):  # a link is replaced, what it names kept (as demo does)
            old = out.with_name(f".{out.name}.old-{uuid.uuid4().hex[:8]}")
            os.rename(out, old)
        else:
            out.rmdir()
    try:
        os.rename(tmp, out)
    except OSError as e:
        if old is not None and not out.exists():
            os.rename(old, out)
        raise UserError(f"could not move the prepared data into {out} ({e}); another process may be writing "
                        f"there; retry") from None
    if old is not None and os.path.islink(old):  # rmtree refuses a link (ignored): a hidden .NAME.old-* link was left
        old.unlink()  # beside the new folder (issue 30 round 9, N5)
    elif old is not None and (problem := remove_tree(old)) is not None:  # round 10 (P20): left hidden, no word
        warn_left(old, problem, "the replaced data folder, moved aside to", f"the new data is in place in '{out}'")
    try:  # make the rename durable
        fd = os.open(out.parent, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
    except OSError:
        pass


# --------------------------------------------------------------------------------------------
# prepare


def _resolve_tokenizer(tokenizer, bpe_vocab_size) -> tuple[Tokenizer | None, int | None, str]:
    if isinstance(tokenizer, str) and tokenizer.startswith("bpe:"):
        try:
            v = int(tokenizer[4:].replace("_", ""))
        except ValueError:
            raise UserError(f"bad tokenizer {tokenizer!r}; write bpe:VOCAB, e.g. bpe:8192") from None
        if bpe_vocab_size is not None and check_bpe_vocab_size(bpe_vocab_size) != v:  # 'abc', nan, inf were int()'s
            # tracebacks and 300.7 was taken as 300 (issue 30 round 23, U166-U169)
            raise UserError(f"tokenizer {tokenizer!r} and bpe_vocab_size={bpe_vocab_size} disagree; give one")
        bpe_vocab_size = v
    if bpe_vocab_size is not None:
        if tokenizer not in (None, "o200k_base") and not (isinstance(tokenizer, str) and tokenizer.startswith("bpe:")):
            raise UserError(f"bpe_vocab_size trains a new BPE; it cannot be combined with tokenizer {tokenizer!r}")
        size = check_bpe_vocab_size(bpe_vocab_size)
        return None, size, f"bpe:{size}"
    tok = load_tokenizer(tokenizer)
    return tok, None, tok.name


def _checked_val_choice(val_fraction, val_source):
    """``val_fraction`` (None: 0.01), or a UserError when ``val_source`` is given too: the validation came from the file
    and ``val_fraction=0.5`` was dropped without a word (issue 30 round 29, W753), where ``leviathan prepare`` refuses
    --val-fraction beside --val-source (round 25's X84 kind: what was given, not what differs from the default)."""
    if val_source is None:
        return 0.01 if val_fraction is None else val_fraction
    if val_fraction is not None:
        raise UserError(f"prepare: val_fraction={val_fraction!r:.40} holds out part of the source, and val_source="
                        f"{str(val_source)!r:.80} is the validation corpus itself: pass one of the two")
    return 0.0


@api_write("prepare()", "out_dir")
def prepare(
    source,
    out_dir: str | os.PathLike,
    tokenizer="o200k_base",
    *,
    val_fraction: float | None = None,
    val_source=None,
    bpe_vocab_size: int | None = None,
    num_workers: int = 2,
    seed: int = 0,
    overwrite: bool = False,
    strict: bool = False,
    text_field: str = "text",
    max_documents: int | None = None,
    progress: bool = True,
    batch_chars: int = 8_000_000,
    piece_chars: int = 1_000_000,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Tokenize ``source`` into ``out_dir`` (see module docstring); returns the meta.json dict.

    ``tokenizer``: o200k_base | cl100k_base | bpe:VOCAB | tokenizer.json path | data dir | Tokenizer.
    ``val_fraction``: the share of ``source``'s documents held out for validation (None: 0.01).
    ``val_source``: an explicit validation corpus, instead of ``val_fraction`` (giving both is refused).
    ``max_documents`` caps the documents read from each of source and val_source.

    Parameters: the options of ``leviathan prepare``, keyword arguments one each (the library entry point mirrors
    the verb).
    """
    check_switches("prepare", overwrite=overwrite, strict=strict, progress=progress)  # round 17 (E194): 'no' is true
    check_callback("prepare", "log", log)
    check_prepare_arguments("prepare", out_dir, text_field, max_documents, num_workers, batch_chars, piece_chars)
    max_documents = None if max_documents is None else int(max_documents)  # numpy's int64 entered meta.json (S408)
    log = log or (lambda msg: print(msg, file=sys.stderr))
    out = Path(out_dir).expanduser()
    out = Path(os.path.abspath(out)) if out.name in ("", ".", "..") else out  # its name and parent are its own
    val_fraction = _checked_val_choice(val_fraction, val_source)
    if isinstance(val_fraction, bool) or not isinstance(val_fraction, numbers.Real) or not 0.0 <= val_fraction < 1.0:
        # 'abc', None and an array were float()'s tracebacks (issue 30 round 23, U143-U145)
        raise UserError(f"val_fraction must be a number in [0, 1), got {val_fraction!r:.40}; e.g. 0.01")
    seed = check_seed(seed, "seed")  # a plain int: numpy integers are integers (round 9, Q11)
    api_check("prepare", "num_workers", thread_problem(num_workers), "pass the tokenizer's threads as --workers "
              "takes them, e.g. num_workers=2")  # 10**6 started threads by the hundred (round 18, G271)
    _check_named_once(source, val_source)
    src = open_source(source, text_field=text_field, strict=strict, max_documents=max_documents)
    vsrc = (open_source(val_source, text_field=text_field, strict=strict, max_documents=max_documents)
            if val_source is not None else None)
    _check_apart(out, [source, val_source], [src, vsrc])
    _check_text_field_used(text_field, src, vsrc)
    tok, bpe_vocab, tok_name = _resolve_tokenizer(tokenizer, bpe_vocab_size)
    val_fraction = 0.0 if vsrc is not None else float(val_fraction)
    settings = {"format": FORMAT_VERSION, "source": src.description,
                "val_source": vsrc.description if vsrc is not None else None, "tokenizer": tok_name,
                "val_fraction": val_fraction, "seed": int(seed), "text_field": text_field,
                "max_documents": max_documents, "strict": bool(strict)}
    stat = hashlib.sha256((src.stat_fingerprint() + (vsrc.stat_fingerprint() if vsrc else "")).encode()).hexdigest()
    check_not_inside(out, "--out", ("train", "prepare", "export"), within=CONTAINERS, verb="prepare")  # N120, C203
    with folder_lock(out, "prepare", "choose another --out", beside=True):  # one writer per --out
        existing = _check_out_dir(out, settings, stat, overwrite)
        if existing is not None:
            log(f"{out} is up to date ({existing.tokens('train'):,} train tokens); nothing to do"
                + ("" if existing.fingerprint_version else "; its fingerprint is version 1 (it hashed the "
                   "source paths): overwrite=True (--overwrite) prepares it again with a version-2 fingerprint"))
            return existing.raw

        out = replaced_folder(out, "--out")  # built beside it, renamed into place
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(out)
        tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            meta = _prepare_into(_Job(tmp, src, vsrc, tok, bpe_vocab, settings, stat, int(num_workers), int(seed),
                                      val_fraction, progress, batch_chars, piece_chars, log))
            write_marker(tmp, "prepare", listed_files(tmp))  # last: names every file of the data dir
            with stop_signals.held_stops(deliver_after=True):  # a stop during the rename is said once it is done (Q106)
                _install(tmp, out)
                stop_signals.placed(out)  # a stop from here on finds the data folder complete (the CLI's output)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return meta


@dataclass
class _Job:
    """One ``prepare`` call, resolved: the sources, the tokenizer (None: train a BPE of ``bpe_vocab`` ids), the
    settings recorded in meta.json, and how to run (threads, batch sizes, progress, log)."""

    tmp: Path  # the temporary output folder, renamed into place once complete
    src: Source
    vsrc: Source | None
    tok: Tokenizer | None
    bpe_vocab: int | None
    settings: dict
    stat: str
    num_workers: int
    seed: int
    val_fraction: float
    progress: bool
    batch_chars: int
    piece_chars: int
    log: Callable[[str], None]

    @property
    def parts(self) -> list[tuple[Source, bool]]:
        """(source, is the validation source) in reading order."""
        return [(self.src, False)] + ([(self.vsrc, True)] if self.vsrc is not None else [])


def _prepare_into(job: _Job) -> dict:
    """Tokenize ``job``'s sources into ``job.tmp``: train.bin, val.bin, the frequencies, the tokenizer, meta.json."""
    timing: dict = {"num_workers": job.num_workers}
    tok = job.tok if job.tok is not None else _train_job_bpe(job, timing)
    dtype = dtype_for_vocab(tok.vocab_size)
    writers = (_SplitWriter(job.tmp / "train.bin", dtype, tok.vocab_size),
               _SplitWriter(job.tmp / "val.bin", dtype, None))
    fingerprint = DataFingerprint(job.settings, tok)
    best: dict = {}
    elapsed = _tokenize(job, tok, writers, fingerprint, best)
    train, val = writers
    fallback = _check_splits(job, writers, best)
    total_tokens = train.tokens + val.tokens
    timing.update(tokenize_s=round(elapsed, 3), tokens_per_s=round(total_tokens / max(elapsed, 1e-9)))
    np.save(job.tmp / FREQ_FILE, train.freq)
    tok.save_owned(job.tmp)
    stats = SourceStats()
    stats.merge(job.src.stats)
    if job.vsrc is not None:
        stats.merge(job.vsrc.stats)
    meta = _meta(job, tok, writers, fingerprint, fallback, stats, timing)
    meta["files"] = file_digests(job.tmp)  # meta.json, written last, ties every other file to it (data.companions)
    meta[DIGESTS] = field_digests(meta)  # and its own fields, as written here (round 14, A25, A26: data.meta_digest)
    with open(job.tmp / META_FILE, "w") as f:
        f.write(json.dumps(meta, indent=2) + "\n")
        f.flush()
        os.fsync(f.fileno())
    job.log(f"{total_tokens:,} tokens ({train.tokens:,} train in {train.documents:,} documents, {val.tokens:,} val "
            f"in {val.documents:,}) in {elapsed:.1f}s = {timing['tokens_per_s'] / 1e6:.2f}M tokens/s with "
            f"{job.num_workers} thread(s)" + (f"; {stats.decode_errors} invalid UTF-8 sequences replaced in "
                                              f"{len(stats.files_with_decode_errors)} file(s)"
                                              if stats.decode_errors else "")
            + ("; no document hashed into validation, moved the smallest-hash one" if fallback else "")
            # a JSON line cut off or unreadable was dropped without a word, counted only in meta.json (round 14, B208)
            + (f"; {stats.skipped_records:,} JSON record(s) skipped (not valid JSON, or a null text; --strict refuses "
               f"them)" if stats.skipped_records else ""))
    if (note := skipped_note(stats)) is not None:
        job.log(note)
    if val.tokens < 2:  # accepted without a word, then refused by train and sweep (issue 30 round 24, V139)
        job.log(f"note: no validation split (--val-fraction {job.val_fraction:g}): `leviathan train` and `leviathan "
                f"sweep` refuse this folder, as a run validates at its end; it serves `leviathan eval --split train` "
                f"and another prepare's --tokenizer; to train on it, prepare it again with --val-fraction 0.01 or "
                f"--val-source FILE")
    return meta


def skipped_note(stats: SourceStats, shown: int = 3) -> str | None:
    """The line naming what the corpus folders' walk passed over (the first ``shown`` names, and why), None when
    nothing: a README without an extension was left out of the data, counted only in meta.json's
    ``source_stats.skipped_files`` (issue 30 round 26, P61), and a link back to a folder read already is skipped
    (P60's guard), and a file reached again through a link (round 27, R84), a hard link or a second source naming
    it (round 28, T19, T21). The names are in meta.json too
    (``skipped_file_names``, ``skipped_links``, ``skipped_file_links``)."""
    parts = []
    if stats.skipped_files:
        names = ", ".join(stats.skipped_file_names[:shown]) + (", ..." if stats.skipped_files > shown else "")
        parts.append(f"{stats.skipped_files:,} file(s) no reader takes (no extension, or one not read as text: "
                     f"{names}); give them a text extension such as .txt to include them")
    if stats.skipped_links:
        names = ", ".join(stats.skipped_links[:shown]) + (", ..." if len(stats.skipped_links) > shown else "")
        parts.append(f"{len(stats.skipped_links):,} link(s) to a folder read already ({names}), each folder read once")
    if stats.skipped_file_links:  # round 27, R84: one file under three names was three documents
        names = ", ".join(stats.skipped_file_links[:shown]) + (", ..." if len(stats.skipped_file_links) > shown else "")
        parts.append(f"{len(stats.skipped_file_links):,} more name(s) of a file read already ({names}: a link, or a "
                     f"source naming it again), each file read once")
    return f"note: skipped {'; and '.join(parts)}" if parts else None


def _check_text_field_used(text_field: str, src, vsrc) -> None:
    """UserError when a ``text_field`` other than the default is given but no source reads fields (text files only,
    read whole): the option had no effect, exit 0 (issue 30 round 24, V138)."""
    from .sources import reads_fields

    if text_field != "text" and not reads_fields(src) and not reads_fields(vsrc):
        shown = src.description + (f" and {vsrc.description}" if vsrc is not None else "")
        raise UserError(f"--text-field {text_field!r} names the field or column of JSON lines, parquet and hf: "
                        f"sources, but {shown} holds only text files, each read whole as a document; leave "
                        f"--text-field out, or pass the JSON lines or parquet files the field is in")


def _copies_left(copies: int, job: _Job) -> str:
    """The refusal when the document the fallback would move into validation is given ``copies`` times: the split
    is by each document's content hash, so copies always share a split, but the fallback moved one copy and left the
    others in train. Two copies of one book prepared a val.bin byte for byte the train.bin, exit 0, and every
    validation loss then measured recall of the training text (issue 30 round 24, V52)."""
    return (f"no document of {job.src.description} hashed into validation (--val-fraction {job.val_fraction}), and "
            f"the one that would be moved there is given {copies} times (the same text in {copies} documents or "
            f"files): its copies would stay in the training split, and validation would measure recall of training "
            f"text; remove the copies from the corpus, or pass --val-source FILE")


def _all_in_validation(documents: int, job: _Job) -> str:
    return (f"every one of the {documents:,} documents of {job.src.description} hashed into validation (--val-fraction "
            f"{job.val_fraction}), so nothing is left to train on; lower --val-fraction, or pass --val-source FILE")


def _train_job_bpe(job: _Job, timing: dict) -> Tokenizer:
    """A byte-level BPE trained on the training documents (those the content hash keeps out of validation)."""
    key = _split_key(job.seed)

    counts = [0, 0]  # documents read, of which kept out for validation

    def train_texts():
        for text in job.src:
            counts[0] += 1
            if _doc_hash(text.encode("utf-8"), key)[1] < job.val_fraction:
                counts[1] += 1
                continue
            yield text

    job.log(f"training a byte-level BPE with {job.bpe_vocab:,} ids on {job.src.description} ...")
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():  # said below as a note, in the verb's words
            warnings.filterwarnings("ignore", message="the BPE reached")
            tok = train_bpe(train_texts(), job.bpe_vocab, show_progress=job.progress)
    except UserError:
        if counts[0] and counts[0] == counts[1]:  # no text to train on: the split's own words, as below
            raise UserError(_all_in_validation(counts[0], job)) from None
        if not counts[0] and (why := job.src.stats.unparsed_note()) is not None:  # "give it some text" (X48)
            raise UserError(f"source {job.src.description} holds no text: {why}") from None
        raise
    timing["bpe_train_s"] = round(time.perf_counter() - t0, 3)
    job.log(f"trained BPE: {tok.vocab_size:,} ids in {timing['bpe_train_s']:.1f}s"
            f"{'' if tok.fast else ' (quicktok refused it; encoding with tokenizers, slower)'}")
    if tok.vocab_size < job.bpe_vocab:  # meta.json's tokenizer is the BPE's own name, bpe:REACHED (S537); the
        job.log("note: " + short_vocabulary(tok.vocab_size, job.bpe_vocab, 2, tok.name))  # settings keep the request
    return tok


def _tokenize(job: _Job, tok: Tokenizer, writers, fingerprint: DataFingerprint, best: dict) -> float:
    """Read, encode and write every document (a progress bar on request); the seconds it took."""
    reader = _Reader(job.parts, job.val_fraction, job.seed, fingerprint, tok.newline_cut_safe, job.batch_chars,
                     job.piece_chars)
    total = None
    try:
        sizes = [s.total_bytes() for s, _ in job.parts]
        total = None if any(v is None for v in sizes) or job.settings["max_documents"] else sum(sizes)
    except OSError:
        pass
    bar = None
    if job.progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="B", unit_scale=True, desc=f"tokenizing ({tok.name})", file=sys.stderr,
                   dynamic_ncols=True)
    t0 = time.perf_counter()
    try:
        for batch in reader:
            toks, offsets = tok.encode_flat(batch.pieces, job.num_workers)
            _write_batch(batch, toks, offsets, tok.eot_id, writers, best)
            if bar is not None:
                bar.update(sum(batch.doc_bytes))
                elapsed = time.perf_counter() - t0
                bar.set_postfix(tok_s=f"{(writers[0].tokens + writers[1].tokens) / max(elapsed, 1e-9) / 1e6:.2f}M")
    finally:
        if bar is not None:
            bar.close()
    return time.perf_counter() - t0


def _check_splits(job: _Job, writers, best: dict) -> bool:
    """UserError for a source without text, a single document that cannot be split, or documents that all hashed
    into validation (a tiny corpus with a large val_fraction: an empty train split); moves the smallest-hash
    document into validation when none hashed there (returns True then). Closes the writers."""
    train, val = writers

    def fail(message: str):
        for w in writers:
            w.close()
        raise UserError(message)

    # the source's own documents: those of a --val-source hid an empty source, or one of lines that are not JSON,
    # which made a folder of 0 training tokens that train and eval refuse later (issue 30 round 31, Z41, Z42)
    if (train.documents if job.vsrc is not None else train.documents + val.documents) == 0:
        if (why := job.src.stats.unparsed_note()) is not None:  # every line not JSON (round 30, X48)
            fail(f"source {job.src.description} holds no text: {why}")
        fail(f"source {job.src.description} holds no text (0 non-empty documents); check the path, "
             f"--text-field or the file extensions")
    if job.vsrc is not None and val.documents == 0:
        if (why := job.vsrc.stats.unparsed_note()) is not None:
            fail(f"validation source {job.vsrc.description} holds no text: {why}")
        fail(f"validation source {job.vsrc.description} holds no text (0 non-empty documents); check "
             f"--val-source")
    fallback = False
    if job.val_fraction > 0 and val.documents == 0:
        if train.documents < 2:
            aside = job.src.stats.unparsed_aside()  # the line skipped, named (Z37)
            fail(f"source {job.src.description} is a single document{aside}, so it cannot be split into "  # "or
                 f"train and validation documents; {'fix or delete the line(s) that are not JSON, ' if aside else ''}"
                 f"pass --val-source FILE (a held-out text to validate on), or cut the text into several documents "
                 f"(several text files, or JSON lines)")  # --val-fraction 0 to
            # train without validation" led to a folder train and sweep refuse (issue 30 round 24, V139)
        if best.get("copies", 1) > 1:  # its copies would stay in train: validation would measure recall (V52)
            fail(_copies_left(best["copies"], job))
        _move_to_val(job.tmp, train, val, best)
        fallback = True
    if job.val_fraction > 0 and train.documents == 0:
        fail(_all_in_validation(val.documents, job))
    for w in writers:
        w.close()
    return fallback


def _meta(job: _Job, tok: Tokenizer, writers, fingerprint: DataFingerprint, fallback: bool, stats: SourceStats,
          timing: dict) -> dict:
    """meta.json of a prepared folder: the parts it records, each produced by a different stage of the
    preparation (the dtype is the tokenizer's: ``dtype_for_vocab``, as the writers were opened with)."""
    train, val = writers
    vsrc = job.vsrc
    return {
        "format": FORMAT_VERSION,
        "tokenizer": tok.name,
        "vocab_size": tok.vocab_size,
        "dtype": dtype_for_vocab(tok.vocab_size).name,
        "eot_id": tok.eot_id,
        "splits": {"train": train.summary(), "val": val.summary()},
        "source": job.src.description,
        "val_source": vsrc.description if vsrc is not None else None,
        **fingerprint.record(),  # fingerprint, fingerprint_version, fingerprint_method, legacy_fingerprint, ...
        "source_stat": job.stat,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "separator": "eot_id after every document",
        "val_assignment": {"method": "val_source" if vsrc is not None else
                           ("content_hash" if job.val_fraction > 0 else "none"),
                           "val_fraction": job.val_fraction, "seed": job.seed, "fallback_smallest_hash": fallback},
        "freq_file": FREQ_FILE,
        "tokenizer_file": "tokenizer.json" if tok.name not in BUILTIN_ENCODINGS else None,
        "source_stats": stats.as_dict(),
        "timing": timing,
        "settings": job.settings,
    }


# --------------------------------------------------------------------------------------------
# evaluation text


def prepare_eval_text(path, tokenizer, *, strict: bool = False, num_workers: int = 2,
                      text_field: str = "text") -> tuple[np.ndarray, int]:
    """Tokenize raw evaluation text (WikiText-2, PTB, ...) -> (ids int64 (N,), UTF-8 bytes). ``path``: any source spec
    (several documents are joined with the end-of-text id: tokens, no bytes); ``tokenizer``: any ``load_tokenizer``
    spec, typically the training data dir, so evaluation uses the training tokenizer.
    """
    check_switches("prepare_eval_text", strict=strict)
    tok = load_tokenizer(tokenizer)
    src = open_source(path, text_field=text_field, strict=strict)
    _check_text_field_used(text_field, src, None)  # ignored for text files, as by prepare (round 24, V138)
    pieces, piece_doc, num_bytes = [], [], 0
    for d, text in enumerate(src):
        num_bytes += len(text.encode("utf-8"))
        chunks = split_for_threads(text, 1_000_000) if tok.newline_cut_safe else [text]
        pieces.extend(chunks)
        piece_doc.extend([d] * len(chunks))
    if not pieces:
        raise UserError(f"{src.description} holds no text; check the path")
    if src.stats.decode_errors:  # a few invalid bytes (another encoding); a file of mostly invalid ones is refused
        print(f"note: {src.stats.decode_errors:,} invalid UTF-8 sequence(s) in {src.description} were replaced by "
              f"U+FFFD before tokenizing (strict=True refuses them)", file=sys.stderr)
    toks, offsets = tok.encode_flat(pieces, num_workers)
    doc = np.asarray(piece_doc)
    ends = np.nonzero(doc[1:] != doc[:-1])[0]  # pieces after which a new document starts
    out = np.insert(toks.astype(np.int64), offsets[ends + 1], tok.eot_id)
    return out, num_bytes
