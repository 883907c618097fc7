"""``cache_position``, an argument transformers 5 no longer reads, taken only where it says what the model does.

    check_cache_position(cache_position, length, cache, "LeviathanForCausalLM.forward")

transformers 5 counts a forward's positions from its cache (``past_key_values.get_seq_length()``), and neither
Hugging Face class reads ``cache_position`` any more (``generate`` no longer passes it), yet both took it through
``**kwargs``: ``model(x, cache_position=torch.arange(60, 69))`` on a 64-position model returned the logits of positions
0..8 without a word, where ``position_ids`` past 64 are refused (issue 30 round 32, AC173, AC209). A cache_position
equal to the positions the model counts (past .. past + T - 1, the value older callers pass) is taken; any other is
refused, with the argument that does choose the positions (``position_ids``). Costs one comparison, and a device sync,
only when the argument is given.
"""

from __future__ import annotations

from typing import Any

import torch


def check_cache_position(cache_position: Any, length: int | None, cache: Any, api: str) -> None:
    """ArgumentTypeError / ArgumentValueError unless ``cache_position`` is None or the 1-D integer tensor of the
    positions the model counts for ``length`` ids after ``cache``'s cached ones (see the module)."""
    from ..errors import ArgumentTypeError, ArgumentValueError

    if cache_position is None or length is None or torch.compiler.is_compiling():
        return
    past = int(cache.get_seq_length()) if cache is not None and hasattr(cache, "get_seq_length") else 0
    counted = f"{past}..{past + length - 1}" if length else "none"
    fix = (f"leave cache_position out (transformers 5 does not read it: the model counts positions from the cache, "
           f"{counted} here), or pass position_ids for positions of your own")
    if not isinstance(cache_position, torch.Tensor) or cache_position.dtype.is_floating_point or \
            cache_position.dtype.is_complex or cache_position.dtype == torch.bool:
        shown = (f"a {cache_position.dtype} tensor" if isinstance(cache_position, torch.Tensor) else
                 f"{type(cache_position).__name__} {cache_position!r:.40}")
        raise ArgumentTypeError(f"{api}: cache_position must be a 1-D integer tensor, got {shown}; {fix}")
    if cache_position.is_meta:
        return  # named by refuse_meta_arguments, as every meta argument
    expected = torch.arange(past, past + length, device=cache_position.device)
    if cache_position.shape != expected.shape or not torch.equal(cache_position.to(expected.dtype), expected):
        shown = (f"positions {int(cache_position.min())}..{int(cache_position.max())}" if cache_position.dim() == 1
                 and cache_position.numel() else f"shape {tuple(cache_position.shape)}")
        raise ArgumentValueError(f"{api}: cache_position holds {shown}, but the model uses the positions it "
                                 f"counts ({counted}) whatever cache_position says; {fix}")
