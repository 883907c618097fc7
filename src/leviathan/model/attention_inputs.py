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
    integers (or (1, T), shared by the batch), ``attention_mask`` (B, past + T) (or (1, past + T)) of 0 and 1
    (``check_mask_values``); None is fine. On the meta device either is a UserError: the mask's value check was
    torch's raw "Tensor.item() cannot be called on meta tensors", positions its "Tensor on device cpu is not on the
    expected device meta" (issue 30 round 29, W744's kind). The type and shape lines are ``errors.ArgumentTypeError`` /
    ``ArgumentValueError``, UserErrors that are still the TypeError / ValueError they were: an adopted model's forward
    holds its 2-D mask to this rule too (issue 30 round 31, AA630), and the API's bad input ends in a UserError."""
    from ..errors import ArgumentTypeError, ArgumentValueError
    from ..meta_device import refuse_meta

    for name, value, width in (("position_ids", position_ids, length), ("attention_mask", attention_mask,
                                                                         past + length)):
        if value is None:
            continue
        if not isinstance(value, torch.Tensor):
            raise ArgumentTypeError(f"{name} must be a tensor (batch, {_what(name)}) or None, got "
                                    f"{type(value).__name__} {value!r:.40}")
        if value.dim() != 2 or value.shape[0] not in (1, batch) or value.shape[1] != width:
            raise ArgumentValueError(f"{name} must have shape ({batch}, {width}) ({_what(name)}: the input's {batch} "
                                     f"sequence(s) of {length} ids after {past} cached position(s)), got "
                                     f"{tuple(value.shape)}")
        refuse_meta(value, name, "pass it with values (on the input_ids' device), or leave it out")
    if position_ids is not None and (position_ids.dtype.is_floating_point or position_ids.dtype.is_complex
                                     or position_ids.dtype == torch.bool):
        raise ArgumentTypeError(f"position_ids must be integer positions, got a {position_ids.dtype} tensor; pass "
                                f"torch.long positions (or none: the model counts them from 0)")
    if attention_mask is not None:
        check_mask_values(attention_mask)  # a NaN was taken as 1 (round 25, Y45)


def check_mask_dims(attention_mask, api: str, dims: tuple[int, ...] = (2,)) -> None:
    """ArgumentValueError (a UserError that is still the ValueError it was) unless ``attention_mask`` is None, no tensor
    (named by ``check_attention_inputs``), or of one of ``dims`` dimensions: a 2-D (batch, keys) mask, and where an
    adopted model's original reads them ``dims=(2, 4)``, transformers' 4-D custom masks. A 3-D (2, 1, 9) mask was taken
    by an adopted model without a word
    and refused by ``LeviathanForCausalLM`` in a plain ValueError with no fix, about static caches (issue 30 round 32,
    AC171, AC207). Both Hugging Face classes ask this one line. Reads the shape only."""
    from ..errors import ArgumentValueError

    if not isinstance(attention_mask, torch.Tensor) or attention_mask.dim() in dims:
        return
    raise ArgumentValueError(f"{api}: attention_mask must be 2-D (batch, keys: 1 for each key to attend, 0 for "
                             f"padding, cached keys first), got shape {tuple(attention_mask.shape)}; pass a (batch, "
                             f"keys) mask (mask.reshape(batch, -1) for one of shape (batch, 1, keys)), or leave it out")


def check_custom_mask_shape(attention_mask, api: str, *, batch: int, length: int, past: int, heads: int,
                            keys: tuple[int, ...] = ()) -> None:
    """ArgumentValueError unless a 4-D (custom) ``attention_mask`` broadcasts to the attention's (batch, heads,
    queries, keys) = (``batch``, ``heads``, ``length``, ``past`` + ``length``): each of its first three sizes that
    size or 1, its last the number of keys (or one of ``keys``: a static cache's length). A (2, 1, 9, 5) mask for 9
    ids was torch's raw "The size of tensor a (9) must match the size of tensor b (5) at non-singleton dimension 3"
    from inside transformers' attention (issue 30 round 33, AE170), as were other batch and query sizes. Reads the
    shape only; a mask of other dimensions is ``check_mask_dims``' to name."""
    from ..errors import ArgumentValueError

    if not isinstance(attention_mask, torch.Tensor) or attention_mask.dim() != 4:
        return
    want = (batch, heads, length, past + length)
    got = tuple(attention_mask.shape)
    if all(g in (1, w) for g, w in zip(got[:3], want[:3])) and got[3] in (want[3], *keys):
        return
    raise ArgumentValueError(f"{api}: a 4-D attention_mask must broadcast to (batch, heads, queries, keys) = {want} "
                             f"(the input's {batch} sequence(s) of {length} ids after {past} cached position(s)), got "
                             f"shape {got}; pass a ({batch}, 1, {length}, {past + length}) mask, or a 2-D "
                             f"({batch}, {past + length}) one")


def check_mask_values(attention_mask: torch.Tensor) -> None:
    """ValueError (a UserError too) naming the first value of a (non-bool) ``attention_mask`` other than 0 or 1: a
    NaN was read as 1 (attend) without a word, as was any other non-zero (0.5, -inf of an additive mask), because the
    mask is taken as ``.bool()`` (issue 30 round 25, Y45). One scan, as the ``.all()`` the model makes anyway."""
    from ..errors import ArgumentValueError

    if attention_mask.dtype == torch.bool:
        return
    bad = (attention_mask != 0) & (attention_mask != 1)
    if bool(bad.any()):
        raise ArgumentValueError(f"attention_mask must hold 1 for each key to attend and 0 for padding, got "
                                 f"{attention_mask[bad][0].item()!r}; pass a 0/1 mask (an additive mask of 0 and "
                                 f"-inf is not one: use (mask == 0) to turn it into one)")


def check_position_values(position_ids, limit: int | None, api: str | None = None) -> None:
    """ValueError (a UserError too) naming the first of ``position_ids`` outside [0, ``limit``), the model's
    ``max_position_embeddings``: positions 60..68 of a 64-position model returned logits from rotary angles it was
    never trained on, and -1 ran too, without a word, where the same reach by ids is refused
    (``positions.check_within_positions``; issue 30 round 29, W525). TypeError (a UserError too) for positions that
    are not integers. One scan of the (B, T) positions, as ``check_mask_values`` makes of the mask; nothing to check
    for None (the model counts them itself), an unknown limit, or inside compiled graphs."""
    from ..errors import ArgumentTypeError, ArgumentValueError

    if not isinstance(position_ids, torch.Tensor) or limit is None or torch.compiler.is_compiling():
        return
    where = f"{api}: " if api else ""
    if position_ids.dtype.is_floating_point or position_ids.dtype.is_complex or position_ids.dtype == torch.bool:
        raise ArgumentTypeError(f"{where}position_ids must be integer positions, got a {position_ids.dtype} tensor; "
                                f"pass torch.long positions (or none: the model counts them from 0)")
    if position_ids.is_meta or not position_ids.numel():
        return  # a meta input is named by the model's own checks (meta_device)
    bad = (position_ids < 0) | (position_ids >= limit)
    if bool(bad.any()):
        raise ArgumentValueError(f"{where}position_ids holds position {int(position_ids[bad][0])}, outside the model's "
                                 f"positions [0, {limit:,}) (max_position_embeddings {limit:,}); pass positions from 0 "
                                 f"to {limit - 1:,}: crop the sequence, or score a long text in windows of at most "
                                 f"{limit:,} (leviathan.eval.perplexity.evaluate)")


def _what(name: str) -> str:
    return "one position per input id" if name == "position_ids" else "1 for each key to attend, cached ones first"
