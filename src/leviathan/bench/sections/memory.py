"""``memory``: bytes autograd keeps for backward per distinct id (unique storages seen by
``saved_tensors_hooks``, parameters excluded), fast path vs the literal formula, at paper defaults."""

from __future__ import annotations

from typing import Callable

import torch

from ..configs import BenchOptions
from ..data import TokenData
from ..harness import free
from .generator import paper_batch, paper_generator


def saved_bytes(module: torch.nn.Module, fn: Callable[[], torch.Tensor]) -> int:
    """Bytes of the distinct storages autograd saves for backward while ``fn()`` runs, parameters excluded."""
    params = {p.untyped_storage().data_ptr() for p in module.parameters()}
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn()
    del y
    return sum(storages.values())


def bench_memory(batch_ids: torch.Tensor, reference_ids: int = 32) -> dict:
    """Saved-for-backward bytes per distinct id: the fast path on a whole batch (duplicates included), the
    literal formula on ``reference_ids`` of its distinct ids (its memory is linear in ids)."""
    from ...model.reference import reference_from_module

    g = paper_generator()
    U = int(batch_ids.unique().numel())
    fast = saved_bytes(g, lambda: g(batch_ids)) / U
    ids = batch_ids.unique()[:reference_ids]
    ref = saved_bytes(g, lambda: reference_from_module(g, ids)) / ids.numel()
    out = {"distinct_ids": U, "positions": int(batch_ids.numel()),
           "fast_kib_per_id": fast / 1024, "reference_kib_per_id": ref / 1024, "reference_ids": int(ids.numel()),
           "ratio": ref / fast}
    free()
    return out


def run(opts: BenchOptions, data: dict[str, TokenData], log: Callable[[str], None]) -> dict:
    log("[memory] saved-for-backward bytes per distinct id ...")
    return bench_memory(paper_batch(data), reference_ids=8 if opts.quick else 32)
