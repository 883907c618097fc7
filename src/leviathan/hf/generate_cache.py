"""A cache handed to ``generate`` (``past_key_values=`` / ``cache=``) held to the model and the prompt it continues, in
both of leviathan's Hugging Face classes, by its tensors' shapes (no value read, no device sync).

    check_generate_cache(model, "LeviathanForCausalLM.generate", inputs, kwargs)
    # ArgumentValueError: LeviathanForCausalLM.generate: past_key_values holds 2 kv head(s) of width 16 per layer,
    # and this model's attention has 4 of width 8: it is another model's cache; pass this model's own ...

Issue 30 round 33: another model's cache (4 kv heads against 2, AE63), a cache of 2 rows with a prompt of 1 (AE64,
AE65) were torch's raw "Sizes of tensors must match" from the cache's update; a cache longer than the prompt (6
cached positions, 3 ids: transformers counts the ids past the cache as the new ones, here none) was Llama's raw
"cannot reshape tensor of 0 elements" (AE66) or a line about position_ids never passed (AE67). transformers reads the
prompt as the cached ids and the new ones, so a cache of as many positions as the prompt is taken (its last id runs
again); so is a prompt of the new ids only with a mask covering the cache and them (round 31, AA105).
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentValueError

_FIX = "pass the past_key_values this model returned for the same prompt rows, or leave it out"


def check_generate_cache(model: Any, api: str, inputs: Any, kwargs: dict) -> None:
    """``ArgumentValueError`` naming the cache when its layers are not this model's (more layers, other kv heads or
    head width), its rows are not the prompt's, or it holds more positions than the prompt's ids."""
    from transformers import Cache

    name = "past_key_values" if kwargs.get("past_key_values") is not None else "cache"
    cache = kwargs.get(name)
    if not isinstance(cache, Cache):
        return  # none, or of another kind (``generate_inputs`` names it)
    keys = [layer.keys for layer in getattr(cache, "layers", ()) if isinstance(getattr(layer, "keys", None),
                                                                                 torch.Tensor)]
    keys = [k for k in keys if k.dim() == 4 and k.numel() > 0]
    if not keys:
        return  # an empty cache: the generation fills it
    _check_layers(model, api, name, len(keys), tuple(keys[0].shape))
    ids = inputs if inputs is not None else kwargs.get("input_ids")
    prompt = ids if isinstance(ids, torch.Tensor) and ids.dim() == 2 else kwargs.get("inputs_embeds")
    if not isinstance(prompt, torch.Tensor) or prompt.dim() < 2:
        return
    rows, cached = keys[0].shape[0], cache.get_seq_length()
    if rows != prompt.shape[0]:
        raise ArgumentValueError(f"{api}: {name} was made for {rows} row(s), and the prompt has "
                                 f"{prompt.shape[0]}; {_FIX}")
    mask = kwargs.get("attention_mask")
    new_only = isinstance(mask, torch.Tensor) and mask.dim() == 2 and mask.shape[1] == cached + ids.shape[1] \
        if prompt is ids else True  # the new ids only, the mask covering the cache too (round 31, AA105): taken
    if prompt is ids and not new_only and isinstance(cached, int) and cached > ids.shape[1]:
        raise ArgumentValueError(f"{api}: {name} holds {cached} position(s), and the prompt only "
                                 f"{ids.shape[1]} id(s); pass the prompt as the cached ids followed by the new ones "
                                 f"(at least {cached} ids), or leave {name} out")


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
