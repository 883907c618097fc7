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
    ``nn.Embedding`` refuses it). Both are UserErrors too (``errors.ArgumentValueError``, round 22)."""
    from ..errors import ArgumentValueError

    capacity = base**k
    _check_id_type(ids)
    if ids.numel() == 0:
        return
    lo, hi = int(ids.min()), int(ids.max())
    if lo < 0 or hi >= capacity:
        bad = lo if lo < 0 else hi
        raise ArgumentValueError(
            f"token id {bad} is outside the generator's range [0, {capacity}) (base {base}, k {k}); "
            f"check the tokenizer matches the model, or grow the model with a larger generator_base")


def check_unique_ids(ids: torch.Tensor, base: int, k: int, api: str = "embed_unique") -> None:
    """``check_ids`` for ``LeviathanGenerator.embed_unique``, whose ids are one list (U,): a (1, 2) tensor ended in
    torch's "input has to be 1D or 2D Tensor, but got Tensor of dimension 3" (issue 30 round 22, S477). The type and
    shape are checked always (O(1), static under torch.compile); the range (a read of values) outside compiled
    graphs only, where an id past b^k would alias another id's digits."""
    from ..errors import ArgumentValueError

    _check_id_type(ids)
    if ids.dim() != 1:
        raise ArgumentValueError(f"{api} takes a 1-D tensor of ids (U,), got shape {tuple(ids.shape)}; "
                                 f"flatten them (ids.reshape(-1)), or call the generator itself for ids of any shape")
    if not torch.compiler.is_compiling():
        check_ids(ids, base, k)


def _check_base(base, k, api: str) -> None:
    """One line (a UserError that is still a TypeError / ValueError) unless ``base`` is a whole number >= 2 and ``k``
    one in [1, 64] (``value_rules.check_whole``)."""
    from ..value_rules import check_whole

    check_whole(api, "base", base, 2, fix="pass the digit base b (the generator's base)")
    check_whole(api, "k", k, 1, 64, fix="pass the number of digits per id (3 in the paper)")


def _check_id_type(ids) -> None:
    """TypeError (a UserError too) unless ``ids`` is an integer tensor: a list ended in an AttributeError (issue 30
    round 9, M136), a float tensor was truncated (round 8)."""
    from ..errors import ArgumentTypeError

    if not isinstance(ids, torch.Tensor):
        raise ArgumentTypeError(f"token ids must be an integer tensor (torch.long), got {type(ids).__name__} "
                                f"{ids!r:.60}; wrap them: torch.tensor(ids)")
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise ArgumentTypeError(f"token ids must be an integer tensor (torch.long), got {ids.dtype}; convert them "
                                f"with .long() only if they hold whole ids")


_WIDE_UNSIGNED = (torch.uint16, torch.uint32, torch.uint64)  # torch's min, max and unique take none of them


def as_lookup_ids(ids):
    """``ids`` as int64 when they are uint16 (the token files' dtype), uint32 or uint64, which torch's reductions
    refuse ("min_all" not implemented for 'UInt16'); anything else unchanged, for the checks after. ``CausalLM``
    converts such ids itself (round 12, U124); the generator, "a drop-in nn.Embedding", did not (round 25, Y79)."""
    return ids.long() if isinstance(ids, torch.Tensor) and ids.dtype in _WIDE_UNSIGNED else ids


def to_digits(ids: torch.Tensor, base: int, k: int, check: bool = True) -> torch.Tensor:
    """ids (...) int -> digits (..., k) int64, most significant digit first.

    ``to_digits(tensor([205378]), 59, 3) == tensor([[58, 58, 58]])``.
    """
    from ..value_rules import check_switches

    check_switches("to_digits", check=check)  # 'no' ran the check, 0 skipped it (issue 30 round 30, Y627, Y628)
    ids = as_lookup_ids(ids)
    if check:  # base 1 gave every id the digits 0, k 0 no digits at all, without a word (round 22)
        _check_base(base, k, "to_digits")
        check_ids(ids, base, k)
    ids = ids.long()
    powers = base ** torch.arange(k - 1, -1, -1, device=ids.device, dtype=torch.long)  # (k,) b^(k-1) .. 1
    return (ids.unsqueeze(-1) // powers) % base  # (..., k)


def from_digits(digits: torch.Tensor, base: int) -> torch.Tensor:
    """digits (..., k) -> ids (...): the inverse of ``to_digits``. Float digits were truncated and ``base=True`` read as
    1 without a word (round 22): an integer tensor of at least one dimension and a whole base >= 2 (O(1) checks)."""
    _check_id_type(digits)
    if digits.dim() < 1:
        from ..errors import ArgumentValueError

        raise ArgumentValueError("from_digits takes digits (..., k), one row of k digits per id, got a 0-d tensor")
    _check_base(base, 1, "from_digits")
    _check_digit_range(digits, base)
    k = digits.shape[-1]
    powers = base ** torch.arange(k - 1, -1, -1, device=digits.device, dtype=torch.long)
    return (digits.long() * powers).sum(-1)


def _check_digit_range(digits: torch.Tensor, base: int) -> None:
    """ValueError (a UserError too) naming the digit unless every digit is in [0, base): a digit 9 in base 7 was
    summed into the id of other digits ((1, 9, 0) gave 112, the id of (2, 2, 0)) without a word (issue 30 round 29,
    W793; ``to_digits`` checks its ids, W791). A read of the values, skipped inside compiled graphs."""
    from ..errors import ArgumentValueError

    if digits.numel() == 0 or torch.compiler.is_compiling():
        return
    lo, hi = int(digits.min()), int(digits.max())
    if lo < 0 or hi >= base:
        bad = lo if lo < 0 else hi
        raise ArgumentValueError(f"from_digits: digit {bad} is outside [0, {base}) (base {base}); pass the digits "
                                 f"of ids in base {base} (to_digits(ids, {base}, k) gives them)")


def codebook_sum(ids: torch.Tensor, codebooks: torch.Tensor) -> torch.Tensor:
    """Steps 1-2: ids (N,) -> z (N, d_s) = C_1[i_1] + ... + C_k[i_k], codebooks (k, b, d_s).

    One ``embedding_bag`` over the flattened (k b, d_s) table: digit j of an id selects row j b + i_j.
    Ids are not range-checked here (callers check once per batch with ``check_ids``).
    """
    k, base, seed_dim = codebooks.shape
    digits = to_digits(ids, base, k, check=False)  # (N, k)
    offsets = torch.arange(k, device=ids.device) * base  # first row of codebook j in the flat table
    return F.embedding_bag(digits + offsets, codebooks.reshape(k * base, seed_dim), mode="sum")  # (N, d_s)
