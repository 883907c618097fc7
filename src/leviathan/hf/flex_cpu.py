"""Which inputs torch's FlexAttention kernel on the CPU cannot run, refused before it runs (issue 30 round 35).

    check_flex_cpu_forward(model, api, mask, cache)   # an adopted model's forward (the only class that takes flex)
    check_flex_cpu_generate(model, api, kwargs)       # generate of either HF class, before the first token

``set_attn_implementation('flex_attention')`` (or ``load_adopted(..., attn_implementation='flex_attention')``) is
taken on the CPU, where it runs under ``torch.no_grad()`` (round 33, AE187, ``load_keywords._check_flex_backward``).
But torch's CPU flex kernel (torch 2.13, measured in a subprocess per case, scratch-b/flex/case.py) aborts the whole
process on a 4-D mask ("double free or corruption", "corrupted double-linked list": SIGABRT, exit 134, no Python line;
AI380, AI400), also after a cache (an inductor "index out of bounds" then the abort, AI403); and a 2-D mask holding a
0 (padding) once a cache holds positions fails to compile (``InductorError: CppCompileError``, a page of g++ output),
which ``generate`` with a left-padded prompt reaches at its second token (AI402). Measured to run: no mask, a 2-D mask
of ones or padded without a cache, a cache with a mask of ones, ``generate`` without padding. Those stay taken; the
rest is refused. On a GPU nothing here applies (a model whose weights are not on the CPU).

Footgun: the rule is measured, not derived; a torch whose CPU kernel is fixed still sees the refusal (rerun the
case script and narrow it), and one that breaks another case is not seen. Costs one attribute read per forward when
flex is not set; with flex on the CPU, one scan of a 2-D mask when a cache is filled (a device-free read).
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentValueError

_FIX = "set_attn_implementation('sdpa') (or 'eager') to run it on the CPU, or move the model to a GPU"


def _flex_on_cpu(model: Any) -> bool:
    """Whether ``model`` runs transformers' flex_attention with its weights on the CPU: some on the CPU and none on
    an accelerator (weights offloaded to disk by a device_map are on meta until their hook loads them onto the CPU;
    judging by the first weight alone, an offloaded generator let a 4-D mask abort the process, round 36, AK140)."""
    if getattr(getattr(model, "config", None), "_attn_implementation", None) != "flex_attention":
        return False
    devices = {p.device.type for p in model.parameters()}
    return "cpu" in devices and devices <= {"cpu", "meta"}


def _cached(cache: Any) -> int:
    """How many positions ``cache`` holds (0 for none, or a cache that cannot say)."""
    length = getattr(cache, "get_seq_length", None)
    return int(length()) if callable(length) else 0


def check_flex_cpu_forward(model: Any, api: str, mask: Any, cache: Any) -> None:
    """ArgumentValueError when ``model`` runs flex_attention on the CPU and ``mask`` is one its kernel aborts or fails
    on (the module docstring): a 4-D mask (AI380, AI400, AI403), or a 2-D mask holding a 0 while ``cache`` holds
    positions."""
    if not isinstance(mask, torch.Tensor) or mask.is_meta or not _flex_on_cpu(model):
        return
    if mask.dim() == 4:
        raise ArgumentValueError(f"{api}: a 4-D attention_mask under attn_implementation 'flex_attention' on the CPU "
                                 f"aborts the process in torch's CPU FlexAttention kernel (heap corruption, no "
                                 f"error line); pass a 2-D (batch, length) mask of 0 and 1, or {_FIX}")
    if mask.dim() == 2 and _cached(cache) > 0 and bool((mask == 0).any()):
        raise ArgumentValueError(f"{api}: a padded attention_mask (it holds 0) beside a filled cache under "
                                 f"attn_implementation 'flex_attention' on the CPU fails in torch's kernel compiler "
                                 f"(a C++ compile error); pass rows without padding, or {_FIX}")


def check_flex_cpu_generate(model: Any, api: str, kwargs: dict) -> None:
    """ArgumentValueError when ``generate`` on a model running flex_attention on the CPU is given a padded
    attention_mask: its second token reads the mask beside the cache, which torch fails to compile (AI402), after
    the first token ran. Checked before anything runs."""
    mask = kwargs.get("attention_mask")
    if not isinstance(mask, torch.Tensor) or mask.is_meta or mask.dim() != 2 or not _flex_on_cpu(model):
        return
    if bool((mask == 0).any()):
        raise ArgumentValueError(f"{api}: a padded attention_mask (it holds 0) under attn_implementation "
                                 f"'flex_attention' on the CPU fails from the second token on in torch's kernel "
                                 f"compiler (a C++ compile error, the cache beside a padded mask); generate the rows "
                                 f"one at a time without padding, or {_FIX}")
