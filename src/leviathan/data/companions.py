"""The files of a prepared data folder tied together: meta.json records a digest of each, checked when one is read.

    meta["files"] = file_digests(tmp)         # prepare, just before meta.json is written
    check_file(data_dir, meta.files, "train.bin")   # UserError naming the file unless it is the one meta.json describes
    freq = load_train_freq(data_dir)          # train_freq.npy, checked: its digest, shape, counts and their sum

A ``train_freq.npy`` or ``tokenizer.json`` swapped in from another preparation was accepted (issue 30, kind 3).
meta.json, written last by ``prepare``, records ``files``: per other file ``sha256:<hex>`` of the whole file, or,
over ``FULL_HASH_BYTES`` (token files of a large corpus), ``sampled-sha256:<hex>`` over its size and ``SAMPLES``
blocks spread evenly across it (first and last among them): enough to tell another preparation's file for a few MB
read (a full hash of a 40 GB token file would add a minute to every training start). A folder prepared before
digests were recorded has no ``files`` and is checked as before (sizes, token counts, ids).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from ..errors import UserError, not_a_file
from .meta import PreparedMeta, find_meta

FULL_HASH_BYTES = 64 << 20
SAMPLES = 256
SAMPLE_BYTES = 64 << 10
_EXCLUDED = ("meta.json", "leviathan_output.json")


def file_digest(path: str | os.PathLike) -> str:
    """``sha256:<hex>`` of the file, or ``sampled-sha256:<hex>`` for one over ``FULL_HASH_BYTES``."""
    path = Path(path)
    size = path.stat().st_size
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        if size <= FULL_HASH_BYTES:
            while chunk := f.read(1 << 22):
                digest.update(chunk)
            return f"sha256:{digest.hexdigest()}"
        digest.update(size.to_bytes(8, "little"))
        for offset in np.linspace(0, size - SAMPLE_BYTES, SAMPLES).astype(np.int64):
            f.seek(int(offset))
            digest.update(f.read(SAMPLE_BYTES))
    return f"sampled-sha256:{digest.hexdigest()}"


def file_digests(folder: str | os.PathLike) -> dict[str, str]:
    """{name: digest} of every file of a data folder but meta.json and the ownership marker."""
    return {p.name: file_digest(p) for p in sorted(Path(folder).iterdir()) if p.is_file() and p.name not in _EXCLUDED}


def check_file(data_dir: str | os.PathLike, files: dict[str, str] | None, name: str) -> None:
    """UserError unless ``data_dir/name`` has the digest meta.json records (``PreparedMeta.files``; nothing to check
    when it records none). A mismatch names both causes, the file or meta.json's record of it (issue 30 round 21,
    N226's kind: an edited record blamed the untouched file alone)."""
    if files is None or name not in files:
        return
    path = Path(data_dir) / name
    if not path.is_file():  # a pipe or a folder there was "is missing" (issue 30 round 23, U379's kind)
        raise UserError(f"{str(path)!r} {not_a_file(path) or 'is missing'}, but meta.json records it; the data "
                        f"folder is incomplete: copy "
                        f"the file back, or prepare the data again (leviathan prepare SOURCE --out {data_dir} "
                        f"--overwrite)")
    found = file_digest(path)
    if found != files[name]:
        raise UserError(f"{str(path)!r} is not the file prepared with this meta.json ({found[:24]}..., meta.json "
                        f"records {str(files[name])[:24]}...): the file comes from another preparation or was "
                        f"damaged, or meta.json's record of it was edited; copy the data folder again as a whole, or prepare it again (leviathan prepare SOURCE --out "
                        f"{data_dir} --overwrite)")


def load_train_freq(data_dir: str | os.PathLike, meta: PreparedMeta | None = None) -> np.ndarray:
    """train_freq.npy of a prepared data folder, checked against its meta.json: the recorded digest, one
    non-negative integer count per id (vocab_size of them), summing to the train split's tokens. A copied
    frequency file without its meta.json: only its own shape and counts are checked."""
    from ..value_rules import check_read_path
    from .meta import DATA_DIR_FIX

    check_read_path("load_train_freq", "data_dir", data_dir, DATA_DIR_FIX)  # M335 (round 20)
    if meta is not None and not isinstance(meta, PreparedMeta):  # 5: "'int' object has no attribute 'files'" (Y661)
        from ..errors import ArgumentTypeError

        raise ArgumentTypeError(f"load_train_freq: meta must be the folder's PreparedMeta (leviathan.data.meta."
                                f"read_meta(DATA)), or None to read it, got {type(meta).__name__} {meta!r:.40}; "
                                f"leave it out")
    data_dir = Path(data_dir)
    meta = meta if meta is not None else find_meta(data_dir)
    path = data_dir / "train_freq.npy"
    if not os.path.isfile(path):  # a link to nothing "is missing" while `ls` lists it; a long name (round 18, G400)
        raise UserError(f"{str(path)!r} {not_a_file(path) or 'is missing'}; re-run leviathan prepare (it writes "
                        f"train_freq.npy)")
    check_file(data_dir, meta.files if meta else None, path.name)
    fix = f"prepare the data again (leviathan prepare SOURCE --out {data_dir} --overwrite)"
    try:
        freq = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:  # an empty file: EOFError (issue 30 round 12, U198)
        raise UserError(f"{str(path)!r} is not a readable .npy array ({e}); {fix}") from None
    vocab = meta.vocab_size if meta else None
    if freq.ndim != 1 or (vocab is not None and freq.shape[0] != vocab) or freq.dtype.kind not in "iu":
        want = f"{vocab:,} integer counts (meta.json's vocab_size)" if vocab is not None else "one integer count per id"
        raise UserError(f"{str(path)!r} holds a {freq.dtype} array of shape {tuple(freq.shape)}, expected {want}: it "
                        f"belongs to another preparation or is damaged; {fix}")
    if freq.size and int(freq.min()) < 0:
        raise UserError(f"{str(path)!r} holds negative counts; it is damaged; {fix}")
    train = meta.tokens("train") if meta else None
    if train is not None and int(freq.sum()) != train:
        raise UserError(f"{str(path)!r} counts {int(freq.sum()):,} tokens but meta.json's train split has "
                        f"{train:,}: it belongs to another preparation; {fix}")
    return freq.astype(np.int64, copy=False)
