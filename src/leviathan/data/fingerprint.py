"""The fingerprint of a prepared data folder: a hash of the tokens it holds, the same wherever the text lay.

    fp = DataFingerprint(settings, tokenizer)   # once the tokenizer is known (trained, for bpe:VOCAB)
    fp.add(split, digest)                        # per document, in reading order (``prepare``'s reader thread)
    meta.update(fp.record())                     # fingerprint, fingerprint_version, fingerprint_method, legacy_...

Results rows record it (``experiments.machinery.provenance``) and a resumed sweep compares it with its data folder
(``experiments.machinery.data_match``), so it must name the tokens, not the place they were prepared from.

Version 2 (``FINGERPRINT_VERSION``): sha256 over a JSON header and then, for every document in reading order, one
byte for its split (0 train, 1 validation) and the blake2b-128 digest of its UTF-8 bytes. The header holds the
settings that change the tokens (``format``, ``val_fraction``, ``seed``, ``text_field``, ``max_documents``,
``strict``) and the tokenizer's identity: kind, vocabulary size, end-of-text id and ``Tokenizer.fingerprint()`` (a
built-in's name; for a trained BPE or a tokenizer.json, sha256 over its vocabulary, merges, added tokens and
pre-processing, never its path). No path enters it: the same text with the same tokenizer and settings gets the same
fingerprint anywhere. Reading order is the source's (sorted paths), so files renamed into another order change it.

Version 1 (meta.json without ``fingerprint_version``, before issue 29): sha256 over ``json.dumps(settings,
sort_keys=True)`` (which holds the sources' absolute paths and a tokenizer.json's path), then the same
per-document stream. A version-2 prepare still records it as ``legacy_fingerprint``, so rows written from a
version-1 folder at the same place still match exactly.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the results side (experiments.machinery.provenance) reads versions without loading tokenizers
    from .tokenizer import Tokenizer

__all__ = ["DataFingerprint", "FINGERPRINT_VERSION", "LEGACY_VERSION", "CONTENT_SETTINGS", "fingerprint_version",
           "recorded_problem"]

from .fingerprint_fields import FINGERPRINT_VERSION, LEGACY_VERSION, recorded_problem  # noqa: F401 (re-exported)
CONTENT_SETTINGS = ("format", "val_fraction", "seed", "text_field", "max_documents", "strict")
METHOD = ("sha256 over a JSON header (format, val_fraction, seed, text_field, max_documents, strict, and the "
          "tokenizer's kind, vocab_size, eot_id and content hash) and, per document in order, its split and the "
          "blake2b-128 digest of its UTF-8 bytes; no path enters it (version 2)")
LEGACY_METHOD = ("sha256 over the prepare settings (source paths included) and, per document in order, its split "
                 "and the blake2b-128 digest of its UTF-8 bytes (version 1)")


def fingerprint_version(value: Any) -> int:
    """The fingerprint version a meta.json or a row's ``data`` records (no ``fingerprint_version``: version 1)."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else LEGACY_VERSION


def content_header(settings: dict, tokenizer: Tokenizer) -> dict:
    """What the version-2 fingerprint hashes before the documents: content settings and the tokenizer's identity."""
    return {"fingerprint_version": FINGERPRINT_VERSION, **{k: settings.get(k) for k in CONTENT_SETTINGS},
            "tokenizer": {"kind": tokenizer.kind, "vocab_size": int(tokenizer.vocab_size),
                          "eot_id": int(tokenizer.eot_id), "content": tokenizer.fingerprint()}}


class DataFingerprint:
    """Both fingerprints of one prepare, fed the same per-document stream (see the module docstring)."""

    def __init__(self, settings: dict, tokenizer: Tokenizer):
        self.current = hashlib.sha256(json.dumps(content_header(settings, tokenizer), sort_keys=True).encode())
        self.legacy = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())

    def add(self, split: int, digest: bytes) -> None:
        """One document, in reading order: its split (0 train, 1 validation) and its blake2b-128 digest."""
        item = bytes([split]) + digest
        self.current.update(item)
        self.legacy.update(item)

    def record(self) -> dict:
        """The meta.json keys: ``fingerprint`` (version 2), its version and method, and ``legacy_fingerprint``."""
        return {"fingerprint": self.current.hexdigest(), "fingerprint_version": FINGERPRINT_VERSION,
                "fingerprint_method": METHOD, "legacy_fingerprint": self.legacy.hexdigest(),
                "legacy_fingerprint_method": LEGACY_METHOD}
