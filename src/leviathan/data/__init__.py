"""Data layer: tokenizers, document sources, token-file preparation and the resumable loader.

    from leviathan.data import load_tokenizer, prepare, TokenDataset, BatchLoader

    prepare("stdlib", "data/stdlib")                       # -> data/stdlib/{meta.json,train.bin,val.bin,...}
    loader = BatchLoader(TokenDataset("data/stdlib", "train"), seq_len=256, batch_size=16, seed=0)
    x, y = loader.next_batch()                             # int64 (16, 256) each

Modules: ``tokenizer``, ``sources``, ``prepare``, ``meta``, ``fingerprint``, ``companions``, ``integrity``,
``binary``, ``loader``. Names are imported lazily, so ``import leviathan.data`` does not import torch.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "Tokenizer": "tokenizer", "load_tokenizer": "tokenizer", "train_bpe": "tokenizer",
    "BUILTIN_ENCODINGS": "tokenizer",
    "Source": "sources", "open_source": "sources", "stdlib_files": "sources",
    "prepare": "prepare", "prepare_eval_text": "prepare", "dtype_for_vocab": "prepare",
    "TokenDataset": "loader", "BatchLoader": "loader", "read_meta": "meta", "PreparedMeta": "meta",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
