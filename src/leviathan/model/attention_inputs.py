"""``position_ids`` and ``attention_mask`` of a model call, checked by their type and shape (O(1), no value read).

    check_attention_inputs(position_ids, attention_mask, batch=B, length=T, past=cached_positions)

``LlamaModel.forward`` (so ``CausalLM`` and ``LeviathanForCausalLM``) takes both from a caller. A text was Python's
"string indices must be integers" or "'str' object has no attribute 'all'", and a mask or positions of another length
than the input (after the cached positions) torch's "The size of tensor a (2) must match the size of tensor b (3)"
from inside the attention (issue 30 round 22, the kind of S588-S594: the arguments of a public low-level function
taken unchecked). Their values (a mask of 0/1, positions in range) are not read here: this runs every decoding step.
"""

from __future__ import annotations

import torch


def check_attention_inputs(position_ids, attention_mask, *, batch: int, length: int, past: int) -> None:
    """ValueError / TypeError naming the argument, its shape and the one it must have: ``position_ids`` (B, T) of
    integers (or (1, T), shared by the batch), ``attention_mask`` (B, past + T) (or (1, past + T)); None is fine."""
    for name, value, width in (("position_ids", position_ids, length), ("attention_mask", attention_mask,
                                                                         past + length)):
        if value is None:
            continue
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a tensor (batch, {_what(name)}) or None, got {type(value).__name__} "
                            f"{value!r:.40}")
        if value.dim() != 2 or value.shape[0] not in (1, batch) or value.shape[1] != width:
            raise ValueError(f"{name} must have shape ({batch}, {width}) ({_what(name)}: the input's {batch} "
                             f"sequence(s) of {length} ids after {past} cached position(s)), got {tuple(value.shape)}")
    if position_ids is not None and (position_ids.dtype.is_floating_point or position_ids.dtype.is_complex
                                     or position_ids.dtype == torch.bool):
        raise TypeError(f"position_ids must be integer positions, got a {position_ids.dtype} tensor")


def _what(name: str) -> str:
    return "one position per input id" if name == "position_ids" else "1 for each key to attend, cached ones first"
