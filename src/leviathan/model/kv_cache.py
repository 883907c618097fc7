"""``KVCache``: the native key/value cache of incremental decoding, with the Hugging Face ``Cache.update`` signature.

    cache = KVCache()
    logits, _ = model(prompt_ids, cache=cache)       # fills one (B, Hkv, T, d) key and value tensor per layer
    logits, _ = model(next_ids[:, None], cache=cache)  # appends one position per layer

Footguns: a cache holds the positions of one batch of sequences of one model. Another batch size (or another model's
head shapes) ended in torch's "Sizes of tensors must match" from deep in the attention (issue 30 round 21, P413, P419);
another model of the same shapes was continued silently, its logits computed from the first model's keys (round 22,
S234): the first model that fills a cache claims it (``claim_cache``, a weak reference) and any other is refused.
``update`` is public (the attention calls it) and checks what a caller passes, in O(1) (shapes, dtypes, devices, the
layer index; never values): keys and values of other shapes, 3-D tensors, a first call at layer 5, layer -1 or 'a'
were stored silently or ended in IndexError / TypeError (round 22, S588-S594). Start a new ``KVCache()`` (or
``Decoder.prefill``) for another batch or model.
"""

from __future__ import annotations

import weakref

import torch

from ..integers import is_integer

_FIX = "a cache serves one batch of one model: start a new KVCache() (or Decoder.prefill) for another batch or model"


class KVCache:
    """Minimal key/value cache with the Hugging Face ``Cache.update`` signature (see the module docstring)."""

    def __init__(self):
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self._owner: weakref.ref | None = None  # the model that filled it (claim_cache)

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, cache_kwargs=None):
        """key, value (B, Hkv, T, d) appended after the cached (B, Hkv, S, d) of ``layer_idx``; both returned.
        ``layer_idx`` is a layer already cached or the next new one (layers fill in order, as the attention calls)."""
        self._check_layer(layer_idx)
        _check_pair(key, value)
        if layer_idx < len(self.keys):
            self._check_continues(key, layer_idx)
        if layer_idx == len(self.keys):
            self.keys.append(key)
            self.values.append(value)
        else:
            self.keys[layer_idx] = torch.cat([self.keys[layer_idx], key], dim=-2)
            self.values[layer_idx] = torch.cat([self.values[layer_idx], value], dim=-2)
        return self.keys[layer_idx], self.values[layer_idx]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        """The positions cached at ``layer_idx`` (0 for a layer not cached yet). 'a' was Python's "'<' not supported"
        TypeError, and -1 read the last layer's (issue 30 round 22, the S593 kind)."""
        if not is_integer(layer_idx) or layer_idx < 0:
            raise TypeError(f"KVCache.get_seq_length: layer_idx must be a whole number >= 0 (a layer's index), got "
                            f"{type(layer_idx).__name__} {layer_idx!r:.40}")
        return self.keys[layer_idx].shape[-2] if layer_idx < len(self.keys) else 0

    def _check_layer(self, layer_idx) -> None:
        """TypeError / ValueError unless ``layer_idx`` is a whole number in [0, layers held] (S589, S590, S593)."""
        if not is_integer(layer_idx):
            raise TypeError(f"KVCache.update: layer_idx must be a whole number (the layer's index), got "
                            f"{type(layer_idx).__name__} {layer_idx!r:.40}")
        if not 0 <= layer_idx <= len(self.keys):
            held = f"layers 0 to {len(self.keys) - 1} are cached" if self.keys else "no layer is cached yet"
            raise ValueError(f"KVCache.update: layer_idx must be in [0, {len(self.keys)}] (a cached layer, or the "
                             f"next new one: {held}), got {layer_idx}; layers fill in order from 0, as the model's "
                             f"attention calls update")

    def _check_continues(self, key: torch.Tensor, layer_idx: int) -> None:
        """ValueError unless ``key`` continues the cached sequences: the same batch, heads, head size and device."""
        held = self.keys[layer_idx]
        if key.shape[:2] != held.shape[:2] or key.shape[-1] != held.shape[-1]:
            raise ValueError(
                f"this KV cache holds {held.shape[0]} sequence(s) of {held.shape[1]} key/value heads of size "
                f"{held.shape[-1]}, and the input continues {key.shape[0]} sequence(s) of {key.shape[1]} heads of "
                f"size {key.shape[-1]}; {_FIX}")
        if key.device != held.device:
            raise ValueError(f"this KV cache holds keys on {held.device}, and the input continues on {key.device}; "
                             f"{_FIX}")
        if key.dtype != held.dtype:  # model.half() between two calls: torch's "Expected query, key, and value to have
            from ..errors import ArgumentValueError  # the same dtype" from the attention (round 25, Y118)

            raise ArgumentValueError(f"this KV cache holds keys in {held.dtype}, and the input continues in "
                                     f"{key.dtype} (the model's dtype changed since the cache was filled, e.g. by "
                                     f"model.half()); {_FIX}, or after changing the dtype")


def _check_pair(key, value) -> None:
    """TypeError / ValueError unless ``key`` and ``value`` are tensors of one shape (B, Hkv, T, d), dtype and device:
    a (1, 2, 3, 4) key with a (1, 2, 3, 5) or (1, 2, 5, 4) value, and 3-D tensors, were stored silently (S588, S591,
    S594)."""
    for name, tensor in (("key", key), ("value", value)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"KVCache.update: {name} must be a tensor (B, Hkv, T, d), got {type(tensor).__name__}")
        if tensor.dim() != 4:
            raise ValueError(f"KVCache.update: {name} must be a 4-D tensor (batch, key/value heads, positions, head "
                             f"size), got shape {tuple(tensor.shape)}")
    if key.shape != value.shape or key.dtype != value.dtype or key.device != value.device:
        raise ValueError(f"KVCache.update: key and value must be of one shape, dtype and device (the attention's "
                         f"k and v of the same positions), got key {tuple(key.shape)} {key.dtype} on {key.device} "
                         f"and value {tuple(value.shape)} {value.dtype} on {value.device}")


def claim_cache(cache, model) -> None:
    """Record ``model`` as the one filling ``cache`` (a ``KVCache``; other caches are left alone), or ValueError when
    another model filled it: same-shaped keys of another model were continued without a word (issue 30 round 22,
    S234). A weak reference: the cache keeps no model alive, and one whose filler is gone serves no other."""
    if not isinstance(cache, KVCache):
        return
    if not cache.keys:
        cache._owner = weakref.ref(model)
        return
    owner = cache._owner() if cache._owner is not None else model  # filled by update() alone: the first model claims
    if owner is not model:
        raise ValueError(f"this KV cache holds the keys and values of another model (its first forward filled it), "
                         f"and continuing them with this model mixes two models' states; {_FIX}")
    if cache._owner is None:
        cache._owner = weakref.ref(model)
