"""``logits_to_keep`` of a Hugging Face ``forward``, checked once for both of leviathan's HF classes.

    logits_to_keep = check_logits_to_keep(value, length, "LeviathanLlamaForCausalLM.forward")

transformers documents it as an int (keep the last N positions; 0 keeps every one) or a 1-D tensor of the positions
to keep. Its own ``forward`` indexes with whatever it is given: on an adopted model a float, a text or numpy's bool
was torch's raw IndexError / TypeError from inside transformers (issue 30 round 30, Y80, Y98, Y100), an index past
the sequence the same (Y99), -1 was read as ``slice(1, None)``, every position but the first (Y77), and True as 1
(Y97). ``LeviathanForCausalLM`` checked the count (round 27) but not the tensor. One rule now serves both: a whole
number >= 0 that is not a bool (numpy's ints returned as Python's: ``np.int64(1)`` was read as an index, round 29,
W504's kind), or a 1-D integer tensor whose indices lie inside the sequence's ``length`` positions. Of the integer
dtypes torch indexes with torch.long and torch.int32 only: int8 / int16 were its raw "tensors used as indices must be
long, int, byte or bool tensors" and uint8 was read as a mask (a raw IndexError about the mask's shape), in both
classes (issue 30 round 31, AA78, AA79, AA520, AA521). A loss needs the logits of every position: a count or index
tensor beside ``labels`` was torch's raw "Expected input batch_size (4) to match target batch_size (18)" (AA85,
AA86), and an index tensor of every position in another order a loss of the wrong pairs without a word
(``check_kept_for_loss``).
"""

from __future__ import annotations

from typing import Any

import torch

INDEX_DTYPES = (torch.int64, torch.int32)  # the integer dtypes torch indexes with (uint8 it reads as a mask)
FIX_COUNT = "pass e.g. 1 for the last position, 0 for all, or a 1-D tensor of the positions to keep"


def check_logits_to_keep(value: Any, length: int | None, api: str) -> int | torch.Tensor:
    """``value`` as ``forward`` may index with it: Python's int for a count, the tensor itself for indices. ``length``
    is the input's number of positions (None: not known here, the indices' range is left to the model). An
    ``ArgumentTypeError`` / ``ArgumentValueError`` (UserErrors) names ``api``, the value and the fix. The index scan
    reads the tensor once (one device sync), only when a tensor is given; none on the meta device or when compiling."""
    from ..errors import ArgumentTypeError, ArgumentValueError
    from ..integers import is_integer

    if isinstance(value, torch.Tensor):
        if value.dim() != 1 or value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
            raise ArgumentTypeError(f"{api}: logits_to_keep as a tensor must be a 1-D integer tensor of positions, "
                                    f"got a {value.dtype} tensor of shape {tuple(value.shape)}; {FIX_COUNT}")
        if value.dtype not in INDEX_DTYPES:  # AA78, AA79, AA520, AA521
            mask = ", and reads uint8 as a mask, not positions" if value.dtype == torch.uint8 else ""
            raise ArgumentTypeError(f"{api}: logits_to_keep as a tensor must hold torch.long (or torch.int32) "
                                    f"positions, got a {value.dtype} tensor (torch indexes with no other integer "
                                    f"dtype{mask}); pass logits_to_keep.long()")
        if length is None or value.is_meta or not value.numel() or torch.compiler.is_compiling():
            return value
        bad = (value < 0) | (value >= length)
        if bool(bad.any()):
            raise ArgumentValueError(f"{api}: logits_to_keep holds position {int(value[bad][0])}, outside the "
                                     f"input's {length:,} positions [0, {length:,}); pass indices from 0 to "
                                     f"{length - 1:,}, or a count (the last N positions)")
        return value
    if not is_integer(value):
        raise ArgumentTypeError(f"{api}: logits_to_keep must be a whole number of positions (or a 1-D index tensor), "
                                f"got {type(value).__name__} {value!r:.40}; {FIX_COUNT}")
    if value < 0:
        raise ArgumentValueError(f"{api}: logits_to_keep must be >= 0 (the last N positions; 0 keeps every one), got "
                                 f"{value}; pass a count >= 0, or a 1-D index tensor for other positions")
    return int(value)


def check_kept_for_loss(kept: int | torch.Tensor, labels: Any, length: int | None, api: str) -> None:
    """``errors.ArgumentValueError`` when ``labels`` are given beside a ``logits_to_keep`` (as ``check_logits_to_keep``
    returned it) that keeps fewer than every position, or names positions by a tensor: the loss pairs each label with
    the logits of its own position, so it needs them all; a count beside labels was torch's raw "Expected input
    batch_size (4) to match target batch_size (18)" in both classes (issue 30 round 31, AA85, AA86), and an index
    tensor of all the positions in another order a loss of the wrong pairs without a word. 0, or a count of at least
    ``length`` (every position), is taken."""
    from ..errors import ArgumentValueError

    if labels is None or (isinstance(kept, int) and (kept == 0 or (length is not None and kept >= length))):
        return
    shown = (f"a tensor of {kept.numel():,} position(s)" if isinstance(kept, torch.Tensor) else
             f"{kept} (the last {kept} of the input's {length if length is not None else '?'} positions)")
    raise ArgumentValueError(f"{api}: labels were given beside logits_to_keep={shown}, but the loss needs the logits "
                             f"of every position (each label is scored at its own); leave logits_to_keep out (0) when "
                             f"passing labels, or compute the loss from the kept logits yourself")


def input_length(input_ids: Any, inputs_embeds: Any = None) -> int | None:
    """The number of positions of a forward's input (``input_ids`` (B, T), or ``inputs_embeds`` (B, T, D)); None when
    neither is such a tensor (the model names that itself)."""
    for value, dims in ((input_ids, 2), (inputs_embeds, 3)):
        if isinstance(value, torch.Tensor) and value.dim() == dims:
            return int(value.shape[1])
    return None
