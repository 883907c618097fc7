"""A cache handed to ``generate`` (``past_key_values=`` / ``cache=``) held to the model and the prompt it continues, in
both of leviathan's Hugging Face classes, by its tensors' shapes (no value read, no device sync).

    check_generate_cache(model, "LeviathanForCausalLM.generate", inputs, kwargs)
    # ArgumentValueError: LeviathanForCausalLM.generate: past_key_values holds 2 kv head(s) of width 16 per layer,
    # and this model's attention has 4 of width 8: it is another model's cache; pass this model's own ...

Issue 30 round 33: another model's cache (4 kv heads against 2, AE63), a cache of 2 rows with a prompt of 1 (AE64,
AE65) were torch's raw "Sizes of tensors must match" from the cache's update; a cache longer than the prompt (6
cached positions, 3 ids: transformers counts the ids past the cache as the new ones, here none) was Llama's raw
"cannot reshape tensor of 0 elements" (AE66) or a line about position_ids never passed (AE67). transformers reads the
prompt as the cached ids and the new ones; a cache of as many positions as the prompt was taken, and transformers
ran the whole prompt again after it (issue 30 round 34, AG447, AG448: refused); taken is a prompt of the new ids only
with a mask covering the cache and them (round 31, AA105). Embeddings are read as the whole sequence whatever the
mask: as many as the cache or fewer were torch's raw reshape error (round 34, AG308: refused).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch

from ..errors import ArgumentValueError

_FIX = "pass the past_key_values this model returned for the same prompt rows, or leave it out"


def check_generate_cache(model: Any, api: str, inputs: Any, kwargs: dict, new_tokens: Any = None,
                         expand: int = 1) -> None:
    """``ArgumentValueError`` naming the cache when its layers are not this model's (more layers, other kv heads or
    head width), its rows are not the prompt's, or it holds more positions than the prompt's ids. ``expand``: the
    rows transformers makes of each prompt row (``max(num_beams, num_return_sequences)``); a cache of the prompt's
    rows against 2 beams or 2 returned sequences was torch's raw "Sizes of tensors must match" at the first forward,
    the prompt expanded and the cache not (issue 30 round 34, AG413-AG415, AG419, AG420): its rows must be the
    expanded ones (``cache.batch_repeat_interleave(expand)``)."""
    from transformers import Cache

    name = "past_key_values" if kwargs.get("past_key_values") is not None else "cache"
    cache = kwargs.get(name)
    if not isinstance(cache, Cache):
        return  # none, or of another kind (``generate_inputs`` names it)
    keys = [layer.keys for layer in getattr(cache, "layers", ()) if isinstance(getattr(layer, "keys", None),
                                                                                 torch.Tensor)]
    _check_room(api, name, cache, inputs if inputs is not None else kwargs.get("input_ids"), new_tokens)
    keys = [k for k in keys if k.dim() == 4 and k.numel() > 0]
    if not keys:
        return  # an empty cache: the generation fills it
    _check_layers(model, api, name, len(keys), tuple(keys[0].shape))
    _check_values(model, api, name, cache)
    ids = inputs if inputs is not None else kwargs.get("input_ids")
    prompt = ids if isinstance(ids, torch.Tensor) and ids.dim() == 2 else kwargs.get("inputs_embeds")
    if not isinstance(prompt, torch.Tensor) or prompt.dim() < 2:
        return
    rows, cached = keys[0].shape[0], cache.get_seq_length()
    if expand > 1 and rows != prompt.shape[0] * expand:
        raise ArgumentValueError(f"{api}: {name} was made for {rows} row(s), and the prompt's {prompt.shape[0]} "
                                 f"row(s) run as {prompt.shape[0] * expand} (num_beams / num_return_sequences "
                                 f"{expand} each); pass the cache repeated for them "
                                 f"({name}.batch_repeat_interleave({expand}) on the prompt's own cache), or leave "
                                 f"{name} out")
    if expand == 1 and rows != prompt.shape[0]:
        raise ArgumentValueError(f"{api}: {name} was made for {rows} row(s), and the prompt has "
                                 f"{prompt.shape[0]}; {_FIX}")
    mask = kwargs.get("attention_mask")
    new_only = isinstance(mask, torch.Tensor) and mask.dim() == 2 and mask.shape[1] == cached + ids.shape[1] \
        if prompt is ids else True  # the new ids only, the mask covering the cache too (round 31, AA105): taken
    if prompt is not ids and isinstance(cached, int) and cached >= prompt.shape[1]:
        # transformers reads embeddings after a cache as the whole sequence: torch's raw "cannot reshape tensor of 0
        # elements" inside the attention, whatever the mask (issue 30 round 34, AG308)
        raise ArgumentValueError(f"{api}: {name} holds {cached} position(s), and inputs_embeds only "
                                 f"{prompt.shape[1]}: after a cache, transformers reads inputs_embeds as the whole "
                                 f"sequence, the cached positions first, and runs only those past them; pass the "
                                 f"embeddings of the cached positions followed by at least one new one, or leave "
                                 f"{name} out")
    if prompt is ids and not new_only and isinstance(cached, int) and cached > ids.shape[1]:
        raise ArgumentValueError(f"{api}: {name} holds {cached} position(s), and the prompt only "
                                 f"{ids.shape[1]} id(s); pass the prompt as the cached ids followed by the new ones "
                                 f"(at least {cached} ids), or leave {name} out")
    if prompt is ids and not new_only and isinstance(cached, int) and cached == ids.shape[1]:
        # transformers ran all the prompt's ids again after the cached ones (issue 30 round 34, AG447, AG448)
        raise ArgumentValueError(f"{api}: {name} holds {cached} position(s), as many as the prompt's ids, so "
                                 f"transformers would run the whole prompt again after them (the prompt said "
                                 f"twice); pass the cached ids followed by at least one new id, or leave {name} out")


def _check_layers(model: Any, api: str, name: str, layers: int, shape: tuple) -> None:
    """The cache's layers against the model's: no more layers than it has, its kv heads and head width."""
    config = getattr(model, "config", None)
    heads = getattr(config, "num_key_value_heads", None) or getattr(config, "num_attention_heads", None)
    attention = getattr(config, "num_attention_heads", None)
    width = getattr(config, "head_dim", None)
    if width is None and isinstance(attention, int) and attention > 0 and isinstance(getattr(config, "hidden_size",
                                                                                                   None), int):
        width = config.hidden_size // attention
    count = getattr(config, "num_hidden_layers", None)
    if isinstance(count, int) and layers > count:
        raise ArgumentValueError(f"{api}: {name} holds {layers} layers, and this model has {count}: it is "
                                 f"another model's cache; {_FIX}")
    if isinstance(heads, int) and isinstance(width, int) and (shape[1], shape[3]) != (heads, width):
        raise ArgumentValueError(f"{api}: {name} holds {shape[1]} kv head(s) of width {shape[3]} per layer, "
                                 f"and this model's attention has {heads} of width {width}: it is another model's "
                                 f"cache; {_FIX}")


def _check_values(model: Any, api: str, name: str, cache: Any) -> None:
    """The cache's tensors against the model's dtype and device, and finite (issue 30 round 34): float64 keys were
    torch's raw dtype error inside the attention (AG27, AG28), keys on meta its raw device error (AG29), NaN keys
    taken, the argmax of NaN scores emitted as id 0 (AG30); a fixed-size cache filled under ``torch.inference_mode()``
    reused outside it, torch's raw "Inplace update to inference tensor outside InferenceMode" (AG340). One pass over
    the cache and one device sync per call."""
    tensors = [t for layer in getattr(cache, "layers", ()) for t in (getattr(layer, "keys", None),
                                                                      getattr(layer, "values", None))
               if isinstance(t, torch.Tensor) and t.numel() > 0]
    dtype, device = getattr(model, "dtype", None), getattr(model, "device", None)
    for tensor in tensors:
        if tensor.is_meta:
            raise ArgumentValueError(f"{api}: {name} holds tensors on the meta device (shapes, no values); {_FIX}")
        if getattr(cache, "is_compileable", False) and tensor.is_inference() and \
                not torch.is_inference_mode_enabled():  # AG340: torch's raw in-place error at the first update
            raise ArgumentValueError(f"{api}: {name} is a fixed-size cache filled under torch.inference_mode(), whose "
                                     f"tensors cannot be updated outside it; generate under torch.inference_mode() "
                                     f"again, or pass a cache filled outside it")
        if isinstance(dtype, torch.dtype) and tensor.dtype != dtype:
            raise ArgumentValueError(f"{api}: {name} holds {tensor.dtype} tensors, and the model computes in {dtype}; "
                                     f"{_FIX}")
        if isinstance(device, torch.device) and tensor.device != device:
            raise ArgumentValueError(f"{api}: {name} is on {tensor.device}, and the model on {device}; {_FIX}")
    if tensors and not bool(torch.stack([torch.isfinite(t).all() for t in tensors]).all()):
        raise ArgumentValueError(f"{api}: {name} holds NaN or infinite keys or values (a diverged run's); {_FIX}")


def _check_room(api: str, name: str, cache: Any, ids: Any, new_tokens: Any) -> None:
    """A fixed-size cache (``StaticCache(max_cache_len=4)``) too short for the prompt and the new tokens: transformers'
    raw IndexError at the first forward (issue 30 round 34, AG31)."""
    lengths = [getattr(layer, "max_cache_len", None) for layer in getattr(cache, "layers", ())]
    length = min(lengths) if lengths and all(isinstance(n, int) for n in lengths) else None
    if not getattr(cache, "is_compileable", False) or not isinstance(length, int) or \
            not isinstance(ids, torch.Tensor) or ids.dim() != 2:
        return
    need = ids.shape[1] + (new_tokens if isinstance(new_tokens, int) else 0)
    if need > length:
        raise ArgumentValueError(f"{api}: {name} is a fixed-size cache of {length} positions, and the prompt's "
                                 f"{ids.shape[1]} ids and {need - ids.shape[1]} new token(s) need {need}; pass one of "
                                 f"max_cache_len >= {need}, or leave {name} out")


@contextlib.contextmanager
def cache_kept_on_refusal(kwargs: dict) -> Iterator[None]:
    """The caller's cache (``past_key_values`` / ``cache``) cut back to the positions it held when ``generate`` ends
    in an error: a refusal at the first token (a processor's NaN scores, a prefix function allowing nothing, a
    criterion's text) came after the first forward had grown it, so a retry ran on a cache of the wrong length
    (issue 30 round 34, damage AG268, AG269, AG270, AG375; AG285, AG286). A length read before, a ``crop`` after an
    error only; a cache without ``crop`` (a fixed-size one) is left as it is."""
    cache = kwargs.get("past_key_values")
    cache = cache if cache is not None else kwargs.get("cache")
    length = cache.get_seq_length() if callable(getattr(cache, "crop", None)) and \
        callable(getattr(cache, "get_seq_length", None)) else None
    try:
        yield
    except BaseException:
        if isinstance(length, int) and (grown := cache.get_seq_length() - length) > 0:
            cache.crop(-grown)  # transformers 5: a negative count of positions to remove
        raise
