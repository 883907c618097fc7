"""Compositional index: token id -> base-b digits, most significant first (paper step 1, docs/DESIGN.md §2).

With V = 200,019 (o200k_base) and k = 3 the base is b = 59 (59^3 = 205,379), so 177 codebook rows
of width d_s address every token, and ids V..b^k-1 already have embeddings (room to add tokens).

Footgun: ids outside [0, b^k) would silently alias another token's digits under integer
division; ``to_digits`` rejects them with a message instead.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def check_ids(ids: torch.Tensor, base: int, k: int) -> None:
    """Raise ValueError naming the offending id if any id is outside [0, base**k); TypeError for ids that are not
    integers (issue 30 round 8: a float tensor such as ``tensor([1.5])`` was truncated to id 1 without a word, where
    ``nn.Embedding`` refuses it)."""
    capacity = base**k
    if not isinstance(ids, torch.Tensor):  # a list ended in an AttributeError (issue 30 round 9, M136)
        raise TypeError(f"token ids must be an integer tensor (torch.long), got {type(ids).__name__} {ids!r:.60}; "
                        f"wrap them: torch.tensor(ids)")
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise TypeError(f"token ids must be an integer tensor (torch.long), got {ids.dtype}; convert them with "
                        f".long() only if they hold whole ids")
    if ids.numel() == 0:
        return
    lo, hi = int(ids.min()), int(ids.max())
    if lo < 0 or hi >= capacity:
        bad = lo if lo < 0 else hi
        raise ValueError(
            f"token id {bad} is outside the generator's range [0, {capacity}) (base {base}, k {k}); "
            f"check the tokenizer matches the model, or grow the model with a larger generator_base")


def to_digits(ids: torch.Tensor, base: int, k: int, check: bool = True) -> torch.Tensor:
    """ids (...) int -> digits (..., k) int64, most significant digit first.

    ``to_digits(tensor([205378]), 59, 3) == tensor([[58, 58, 58]])``.
    """
    if check:
        check_ids(ids, base, k)
    ids = ids.long()
    powers = base ** torch.arange(k - 1, -1, -1, device=ids.device, dtype=torch.long)  # (k,) b^(k-1) .. 1
    return (ids.unsqueeze(-1) // powers) % base  # (..., k)


def from_digits(digits: torch.Tensor, base: int) -> torch.Tensor:
    """digits (..., k) -> ids (...): the inverse of ``to_digits``."""
    k = digits.shape[-1]
    powers = base ** torch.arange(k - 1, -1, -1, device=digits.device, dtype=torch.long)
    return (digits.long() * powers).sum(-1)


def codebook_sum(ids: torch.Tensor, codebooks: torch.Tensor) -> torch.Tensor:
    """Steps 1-2: ids (N,) -> z (N, d_s) = C_1[i_1] + ... + C_k[i_k], codebooks (k, b, d_s).

    One ``embedding_bag`` over the flattened (k b, d_s) table: digit j of an id selects row j b + i_j.
    Ids are not range-checked here (callers check once per batch with ``check_ids``).
    """
    k, base, seed_dim = codebooks.shape
    digits = to_digits(ids, base, k, check=False)  # (N, k)
    offsets = torch.arange(k, device=ids.device) * base  # first row of codebook j in the flat table
    return F.embedding_bag(digits + offsets, codebooks.reshape(k * base, seed_dim), mode="sum")  # (N, d_s)
