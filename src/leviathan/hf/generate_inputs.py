"""What ``generate`` is handed besides its settings: the prompt (ids or embeddings), its mask, a cache and the
callables, held to what a generation can use in both of leviathan's HF classes, once per call.

    check_generate_inputs(model, "LeviathanForCausalLM.generate", inputs, kwargs)
    # ArgumentValueError: LeviathanForCausalLM.generate: inputs holds no ids (shape (1, 0)); pass at least one ...

Issue 30 round 32: an empty prompt or a batch of 0 ended in transformers' or torch's raw IndexError / RuntimeError
(AC73, AC74, AC100, AC101); an attention_mask longer than the prompt or hiding every id was taken and ids generated
from nothing (AC76, AC77, AC103, AC104), a mask of halves blamed on position_ids the caller never passed (AC78); a
float prompt was a plain TypeError from the model's forward (AC98), the prompt given as ``inputs`` and ``input_ids``
transformers' raw ValueError (AC417); ``inputs_embeds`` holding a NaN generated without a word, float64 or of the wrong
width ended in torch's raw errors (AC125, AC126, AC127); a ``streamer``, ``logits_processor``, ``stopping_criteria``
or ``past_key_values`` of the wrong kind were an AttributeError / TypeError from inside the decoding loop (AC88-AC90,
AC115-AC117, AC134, AC138). Issue 30 round 33: a list mask (AE321), a list or numpy negative prompt (AE60, AE397),
ids and embeddings of different shapes (AE68, AE69), a class in place of a streamer, processor or criterion (AE306 -
AE308); a cache of another model, batch or length is ``generate_cache``'s.

Footgun: the mask's and the embeddings' values are read here, one scan each (one device sync per ``generate`` call,
never per token); the callables are checked by their kind, not called.
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentTypeError, ArgumentValueError


def check_generate_inputs(model: Any, api: str, inputs: Any, kwargs: dict, guidance: Any = None,
                          new_tokens: Any = None, expand: int = 1) -> None:
    """A UserError (``ArgumentValueError`` / ``ArgumentTypeError``) naming the first of ``generate``'s inputs (the
    module docstring's findings) no generation can use."""
    from .flex_cpu import check_flex_cpu_generate
    from .generate_cache import check_generate_cache

    _check_prompt(api, inputs, kwargs)
    _check_embeds(model, api, kwargs.get("inputs_embeds"))
    _check_beside_embeds(api, inputs, kwargs)
    _check_negative_prompt(model, api, inputs, kwargs, guidance, new_tokens)
    _check_mask(api, inputs, kwargs)
    check_flex_cpu_generate(model, api, kwargs)  # a padded mask under flex on the CPU (round 35, AI402)
    _check_positions(api, inputs, kwargs)
    _check_cache(api, kwargs)
    # another model's, batch's or longer (round 33); against the rows beams make (round 34)
    check_generate_cache(model, api, inputs, kwargs, new_tokens, expand)
    _check_callables(api, kwargs)


def _check_beside_embeds(api: str, inputs: Any, kwargs: dict) -> None:
    """Ids given beside ``inputs_embeds`` (transformers takes both: the ids are returned before the new ones) name the
    same (batch, length): ids of 3 beside embeddings of 5, or of 1 row beside 2, were torch's raw size errors (issue 30
    round 33, AE68, AE69)."""
    embeds = kwargs.get("inputs_embeds")
    ids = inputs if inputs is not None else kwargs.get("input_ids")
    if not isinstance(embeds, torch.Tensor) or not isinstance(ids, torch.Tensor) or embeds.dim() != 3 or \
            ids.dim() != 2 or tuple(ids.shape) == tuple(embeds.shape[:2]):
        return
    raise ArgumentValueError(f"{api}: the ids given beside inputs_embeds are {tuple(ids.shape)} (batch, length), and "
                             f"the embeddings {tuple(embeds.shape[:2])}; pass the ids the embeddings were made from "
                             f"(the same batch and length), or only inputs_embeds")


def _check_negative_prompt(model: Any, api: str, inputs: Any, kwargs: dict, guidance: Any = None,
                           new_tokens: Any = None) -> None:
    """``negative_prompt_ids`` (and its mask), read with ``guidance_scale``: a (batch, length) tensor of ids; a list
    or a numpy array was torch's raw "ones_like(): argument 'input' must be Tensor" at the first token (issue 30
    round 33, AE60, AE397)."""
    for name in ("negative_prompt_ids", "negative_prompt_attention_mask"):
        value = kwargs.get(name)
        if value is None:
            continue
        if not isinstance(value, torch.Tensor) or value.dim() != 2 or value.dtype.is_floating_point:
            shown = f"a {value.dim()}-D {value.dtype} tensor" if isinstance(value, torch.Tensor) else \
                f"{type(value).__name__} {value!r:.40}"
            raise ArgumentTypeError(f"{api}: {name} must be a (batch, length) integer tensor, got {shown}; pass "
                                    f"torch.tensor([[...]]) (one row per prompt), or leave it out")
    _check_negative_use(model, api, inputs, kwargs, guidance, new_tokens)


def _check_negative_mask(api: str, negative: torch.Tensor, mask: Any) -> None:
    """``negative_prompt_attention_mask`` of the negative prompt's shape, 0/1, no row all 0 (issue 30 round 34): a mask
    of 5 for 2 ids was refused by the forward as the caller's attention_mask, naming no class (AG426); a row all 0 ran
    the unconditional branch from nothing without a word (AG427; the same row of the main mask is refused, AG297).
    One read of the mask, only when given."""
    from ..model.attention_inputs import check_mask_values

    if not isinstance(mask, torch.Tensor) or mask.is_meta:
        return
    if tuple(mask.shape) != tuple(negative.shape):
        raise ArgumentValueError(f"{api}: negative_prompt_attention_mask has shape {tuple(mask.shape)}, and "
                                 f"negative_prompt_ids {tuple(negative.shape)}; pass a mask of the negative prompt's "
                                 f"shape (1 for each id to attend, 0 for padding), or leave it out")
    try:
        check_mask_values(mask)
    except ArgumentValueError as e:
        raise ArgumentValueError(f"{api}: negative_prompt_{e}") from None
    if bool((mask.sum(dim=-1) == 0).any()):
        raise ArgumentValueError(f"{api}: negative_prompt_attention_mask has a row of only 0, which hides every id of "
                                 f"that negative prompt; mark at least one id 1 in each row, or leave the mask out")


def _check_negative_use(model: Any, api: str, inputs: Any, kwargs: dict, guidance: Any, new_tokens: Any) -> None:
    """A negative prompt transformers would drop or fail on at the first token (issue 30 round 34): without a
    ``guidance_scale`` other than 1 it was dropped without a word (AG190); of other rows than the prompt (AG187),
    empty (AG191) or on meta (AG189, a line naming the forward's input_ids) torch's raw errors; long enough to run
    past the positions, the forward's line about positions (AG192). Shapes and the device only, no value read."""
    from ..positions import model_positions

    negative = kwargs.get("negative_prompt_ids")
    if not isinstance(negative, torch.Tensor):
        return
    if guidance is None or guidance == 1:
        raise ArgumentValueError(f"{api}: negative_prompt_ids is read only by classifier-free guidance, and "
                                 f"guidance_scale is {guidance!r} (off); pass guidance_scale=<a number other than 1>, "
                                 f"or leave negative_prompt_ids out")
    prompt = inputs if inputs is not None else kwargs.get("input_ids")
    rows = prompt.shape[0] if isinstance(prompt, torch.Tensor) and prompt.dim() == 2 else None
    if negative.is_meta:
        raise ArgumentValueError(f"{api}: negative_prompt_ids is on the meta device (shapes, no values); pass it with "
                                 f"values, on the model's device")
    if negative.shape[1] == 0 or (rows is not None and negative.shape[0] != rows):
        raise ArgumentValueError(f"{api}: negative_prompt_ids has shape {tuple(negative.shape)}, and the prompt has "
                                 f"{rows} row(s); pass one non-empty row of ids per prompt row, or leave it out")
    _check_negative_mask(api, negative, kwargs.get("negative_prompt_attention_mask"))
    positions = model_positions(model)
    new = new_tokens if isinstance(new_tokens, int) else 0
    if isinstance(positions, int) and negative.shape[1] + new > positions:
        raise ArgumentValueError(f"{api}: negative_prompt_ids holds {negative.shape[1]} ids, which with "
                                 f"{new} new token(s) reaches past the model's {positions} positions "
                                 f"(max_position_embeddings); pass a negative prompt of at most {positions - new} ids")


def _check_prompt(api: str, inputs: Any, kwargs: dict) -> None:
    """The ids: given once, of an integer dtype, at least one row of at least one id."""
    ids = kwargs.get("input_ids")
    if inputs is not None and ids is not None:
        raise ArgumentValueError(f"{api}: the prompt is given twice, as inputs and as input_ids; pass it once (either "
                                 f"generate(ids) or generate(input_ids=ids))")
    for name, value in (("inputs", inputs), ("input_ids", ids)):
        if not isinstance(value, torch.Tensor) or value.dim() != 2:
            continue  # no (batch, length) tensor: generate_arguments names it
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
            raise ArgumentTypeError(f"{api}: {name} must be token ids (an integer tensor, torch.long), got a "
                                    f"{value.dtype} tensor; convert them with .long() only if they hold whole ids")
        _refuse_empty(api, name, value, "ids")


def _refuse_empty(api: str, name: str, value: torch.Tensor, what: str) -> None:
    if value.shape[0] == 0 or value.shape[1] == 0:
        raise ArgumentValueError(f"{api}: {name} holds no {what} (shape {tuple(value.shape)}); pass at least one row "
                                 f"of at least one id (the tokenizer's bos id to start from nothing)")


def _check_embeds(model: Any, api: str, embeds: Any) -> None:
    """``inputs_embeds``: (batch, length, hidden) of the model's width and floating dtype, not empty, all finite."""
    if embeds is None:
        return
    width = getattr(getattr(model, "config", None), "hidden_size", None)
    if not isinstance(embeds, torch.Tensor) or embeds.dim() != 3:
        shown = f"a {embeds.dim()}-D tensor" if isinstance(embeds, torch.Tensor) else \
            f"{type(embeds).__name__} {embeds!r:.40}"
        raise ArgumentTypeError(f"{api}: inputs_embeds must be a (batch, length, {width}) tensor of embeddings, got "
                                f"{shown}; pass the input embeddings' output for the prompt ids")
    if isinstance(width, int) and embeds.shape[-1] != width:
        raise ArgumentValueError(f"{api}: inputs_embeds has width {embeds.shape[-1]}, and this model's hidden size is "
                                 f"{width}; pass embeddings of shape (batch, length, {width}), such as "
                                 f"model.get_input_embeddings()(ids)")
    dtype = getattr(model, "dtype", None)
    if isinstance(dtype, torch.dtype) and embeds.dtype != dtype:
        raise ArgumentTypeError(f"{api}: inputs_embeds is {embeds.dtype}, and the model computes in {dtype}; pass "
                                f"inputs_embeds.to({dtype})")
    _refuse_empty(api, "inputs_embeds", embeds, "embeddings")
    if not embeds.is_meta and not bool(torch.isfinite(embeds).all()):
        raise ArgumentValueError(f"{api}: inputs_embeds holds NaN or infinite values; pass finite embeddings (the "
                                 f"input embeddings' output, not a model's diverged state)")


def _check_positions(api: str, inputs: Any, kwargs: dict) -> None:
    """``position_ids`` given to ``generate``: one row (or one per prompt row) of one position per prompt id (with a
    cached prefix: per id, or per new id). Positions for 2 of 3 ids were torch's raw "The size of tensor a (3) must
    match the size of tensor b (2)" in the adopted Llama's rotary step (issue 30 round 34, AG386); the native class's
    forward named them. Reads the shape only."""
    positions = kwargs.get("position_ids")
    prompt = inputs if inputs is not None else kwargs.get("input_ids")
    if prompt is None:
        prompt = kwargs.get("inputs_embeds")
    if not isinstance(positions, torch.Tensor) or not isinstance(prompt, torch.Tensor) or prompt.dim() < 2:
        return
    batch, length = prompt.shape[0], prompt.shape[1]
    cache = kwargs.get("past_key_values", kwargs.get("cache"))
    past = cache.get_seq_length() if hasattr(cache, "get_seq_length") else 0
    widths = sorted({length, length - past}) if isinstance(past, int) and 0 < past < length else [length]
    if positions.dim() != 2 or positions.shape[0] not in (1, batch) or positions.shape[1] not in widths:
        said = " or ".join(f"({batch}, {w})" for w in widths)
        raise ArgumentValueError(f"{api}: position_ids has shape {tuple(positions.shape)}, and the prompt is {batch} "
                                 f"row(s) of {length} (after {past} cached position(s)); pass positions of shape "
                                 f"{said} (one per id), or leave them out (the model counts them)")


def _check_mask(api: str, inputs: Any, kwargs: dict) -> None:
    """A 2-D ``attention_mask``: one row per prompt, as wide as the prompt (with a cached prefix: the prompt, or the
    cached positions and the new ids), 0/1 values (``attention_inputs.check_mask_values``) and no row all 0."""
    from ..model.attention_inputs import check_mask_values

    mask = kwargs.get("attention_mask")
    if mask is not None and not isinstance(mask, torch.Tensor):  # a list: transformers' raw AttributeError (AE321)
        raise ArgumentTypeError(f"{api}: attention_mask must be a (batch, length) tensor of 0 and 1, got "
                                f"{type(mask).__name__} {mask!r:.40}; pass torch.tensor(mask), or leave it out")
    if isinstance(mask, torch.Tensor) and mask.dtype.is_complex:  # cast to real with torch's warning (round 34, AG81)
        raise ArgumentTypeError(f"{api}: attention_mask is a {mask.dtype} tensor; pass a mask of 0 and 1 as integers "
                                f"or bools (torch.long / torch.bool), or leave it out")
    prompt = inputs if inputs is not None else kwargs.get("input_ids")
    if prompt is None:
        prompt = kwargs.get("inputs_embeds")
    if prompt is None and isinstance(mask, torch.Tensor) and (mask.dim() != 2 or mask.shape[-1] != 1):
        # a mask of 3 beside no prompt (generate starts from the one bos id) was taken (issue 30 round 34, AG241)
        raise ArgumentValueError(f"{api}: attention_mask has shape {tuple(mask.shape)}, and no prompt is given "
                                 f"(generate starts each row from the one bos_token_id); pass the prompt's ids "
                                 f"beside the mask, or leave the mask out")
    if not isinstance(mask, torch.Tensor) or not isinstance(prompt, torch.Tensor) or prompt.dim() < 2 or mask.is_meta:
        return  # no mask, or a prompt named before (a mask that is not 2-D is refused below, as transformers does)
    batch, length = prompt.shape[0], prompt.shape[1]
    cache = kwargs.get("past_key_values", kwargs.get("cache"))
    past = cache.get_seq_length() if hasattr(cache, "get_seq_length") else 0
    widths = sorted({length, past + length}) if isinstance(past, int) and past > 0 else [length]
    if mask.dim() != 2 or mask.shape[0] != batch or mask.shape[1] not in widths:
        said = " or ".join(f"({batch}, {w})" for w in widths)
        raise ArgumentValueError(f"{api}: attention_mask has shape {tuple(mask.shape)}, and the prompt is {batch} "
                                 f"row(s) of {length} (after {past} cached position(s)); pass a mask of shape {said}: "
                                 f"1 for each id to attend, 0 for padding")
    try:
        check_mask_values(mask)
    except ArgumentValueError as e:
        raise ArgumentValueError(f"{api}: {e}") from None
    empty = mask.sum(dim=-1) == 0
    if bool(empty.any()):
        row = int(empty.nonzero()[0, 0])
        raise ArgumentValueError(f"{api}: attention_mask row {row} is all 0, hiding every id of that prompt, so the "
                                 f"generation would start from nothing; give each row at least one 1 (its real ids)")


def _check_cache(api: str, kwargs: dict) -> None:
    """``past_key_values`` (or ``cache``, its name in transformers 5: issue 30 round 33, a sibling of AE63): a
    transformers ``Cache`` (a DynamicCache of an earlier call) or None."""
    from transformers import Cache

    from transformers import EncoderDecoderCache

    if kwargs.get("past_key_values") is not None and kwargs.get("cache") is not None:  # one dropped (round 34, AG385)
        raise ArgumentValueError(f"{api}: a cache is given twice, as past_key_values and as cache; pass it once (cache="
                                 f"..., transformers 5's name)")
    for name in ("past_key_values", "cache"):
        value = kwargs.get(name)
        if isinstance(value, EncoderDecoderCache):  # an encoder-decoder model's: raw AttributeError (round 34, AG311)
            raise ArgumentTypeError(f"{api}: {name} is an EncoderDecoderCache, an encoder-decoder model's, and this "
                                    f"model is decoder-only; pass a DynamicCache (the past_key_values of an earlier "
                                    f"output), or leave it out")
        if value is not None and not isinstance(value, Cache):
            raise ArgumentTypeError(f"{api}: {name} must be a transformers Cache (the past_key_values of an earlier "
                                    f"output, or DynamicCache()), got {type(value).__name__} {value!r:.40}; pass one, "
                                    f"or leave it out")


def _check_callables(api: str, kwargs: dict) -> None:
    """``streamer`` (``put`` and ``end``), ``logits_processor`` / ``stopping_criteria`` (lists of callables) and
    ``prefix_allowed_tokens_fn`` (a callable), each None or of its kind; a class where an instance belongs is
    refused (``streamer=TextStreamer``: transformers' raw "put() missing 1 required positional argument", issue 30
    round 33, AE306)."""
    streamer = kwargs.get("streamer")
    if streamer is not None and (isinstance(streamer, type) or not (callable(getattr(streamer, "put", None)) and
                                                                    callable(getattr(streamer, "end", None)))):
        got = f"the class {streamer.__name__}, not an instance" if isinstance(streamer, type) else \
            f"{type(streamer).__name__} {streamer!r:.40}"
        raise ArgumentTypeError(f"{api}: streamer must be a transformers streamer (with put and end, such as "
                                f"TextStreamer(tokenizer)), got {got}; pass one, or leave it out")
    if streamer is not None and hasattr(streamer, "tokenizer") and not callable(getattr(streamer.tokenizer, "decode",
                                                                                       None)):
        # TextStreamer(None): transformers' raw AttributeError at its first put (issue 30 round 34, AG64)
        raise ArgumentTypeError(f"{api}: streamer {type(streamer).__name__} holds no tokenizer to decode with (got "
                                f"{type(streamer.tokenizer).__name__}); pass {type(streamer).__name__}(<the model's "
                                f"tokenizer>), or leave streamer out")
    for name, kind in (("logits_processor", "LogitsProcessorList"), ("stopping_criteria", "StoppingCriteriaList")):
        value = kwargs.get(name)
        if value is None:
            continue
        listed = isinstance(value, (list, tuple))
        bad = [item for item in value if not callable(item) or isinstance(item, type)] if listed else [value]
        if bad:  # a class (not an instance) is callable too: transformers' raw errors (round 33, AE307, AE308)
            if not listed:
                got = f"{type(value).__name__} {value!r:.40}"
            elif isinstance(bad[0], type):
                got = (f"{type(value).__name__} holding the class {bad[0].__name__}, not an instance "
                       f"({bad[0].__name__}(...))")
            else:
                got = f"{type(value).__name__} {value!r:.40} holding {type(bad[0]).__name__} {bad[0]!r:.20}"
            raise ArgumentTypeError(f"{api}: {name} must be a list of callables ({kind}([...])), got {got}; pass "
                                    f"{kind}([...]), or leave it out")
    function = kwargs.get("prefix_allowed_tokens_fn")
    if function is not None and not callable(function):
        raise ArgumentTypeError(f"{api}: prefix_allowed_tokens_fn must be a function (batch_id, ids) -> allowed ids, "
                                f"got {type(function).__name__} {function!r:.40}; pass one, or leave it out")
