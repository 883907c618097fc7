"""``load_adopted``'s keywords that transformers would take raw: checked at leviathan's boundary, in one line naming the
keyword, its value and the fix.

    check_load_keywords(from_pretrained_kwargs, path)   # UserError for subfolder=, attn_implementation=, state_dict=
    check_transformers_keywords(kwargs, folder, "from_pretrained")   # all but subfolder=, for LeviathanForCausalLM

Round 24 closed this for ``config=`` and the config's settings (``adoption._check_load_options``); round 25 found the
same kind in from_pretrained's own options (issue 30, Y156, Y157, Y159):

- ``subfolder='nope'``: load_adopted reads config.json, the settings digest and the weights of the folder it is given,
  so a subfolder would load another folder's weights under this one's config; transformers then said "no file named
  model.safetensors ... in directory PATH", naming the parent folder, not the subfolder;
- ``attn_implementation='nope'``: transformers' raw ValueError from deep inside the model's ``__init__``;
- ``state_dict={}``: transformers' raw "`state_dict` cannot be passed together with a model name";
- ``dtype='int8'`` (or ``torch_dtype=``): transformers' raw "cannot be instantiated under `dtype=torch.int8` as it's
  not a floating-point dtype" (round 26, Q142), where the same dtype in config.json is one line (Y516): the keyword is
  held to config.json's rule (``config_file.dtype_problem``: a floating type the weights load in, or ``'auto'``).

``LeviathanForCausalLM.from_pretrained`` met the same two raw errors; it takes a subfolder (round 22, S607) and
``state_dict`` without a folder (``from_pretrained(None, config=..., state_dict=...)``, transformers' own use).

Footgun: an ``attn_implementation`` naming a hub kernel (``'org/repo'``) is left to transformers (it may fetch it);
only a plain name is held to the implementations this transformers knows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from .config_file import DTYPE_KEYS, LOADABLE_DTYPES, dtype_problem


def check_load_keywords(kwargs: dict, path: Path) -> None:
    """UserError for a ``load_adopted`` keyword that transformers would refuse raw or read elsewhere (module
    docstring)."""
    subfolder = kwargs.get("subfolder")
    if subfolder not in (None, ""):
        inner = str(path / subfolder) if isinstance(subfolder, str) else "PATH/SUBFOLDER"
        raise UserError(f"load_adopted: subfolder={subfolder!r:.60} is not taken: load_adopted reads the config.json, "
                        f"settings and weights of the folder it is given ({str(path)!r}); pass the subfolder itself: "
                        f"load_adopted({inner!r})")
    check_transformers_keywords(kwargs, path, "load_adopted")


def check_transformers_keywords(kwargs: dict, path: Any, who: str) -> None:
    """UserError for ``state_dict=`` beside the folder ``path`` (transformers takes one or the other), for an
    ``attn_implementation`` transformers does not know, and for a ``dtype`` / ``torch_dtype`` the weights do not load
    in, in ``who``'s words (``load_adopted``, and ``LeviathanForCausalLM.from_pretrained``, which met the same raw
    errors)."""
    if "state_dict" in kwargs and path is not None:
        raise UserError(f"{who}: state_dict= is not taken with a folder: {who} loads the weights saved in "
                        f"{str(path)!r}; leave it out, and load tensors of your own afterwards (model = {who}(...); "
                        f"model.load_state_dict(state_dict))")
    if "attn_implementation" in kwargs:
        _check_attention(kwargs["attn_implementation"], who)
    for key in DTYPE_KEYS:
        _check_dtype(kwargs.get(key), key, who)


def _check_dtype(value: Any, key: str, who: str) -> None:
    """UserError unless ``value`` is None, ``'auto'``, a floating type the weights load in (a ``torch.dtype`` or its
    name, as torch spells it: ``'float16'``, ``'half'``), or a dict of module -> one of those (transformers' older
    per-module form). ``'int8'`` was transformers' raw ValueError, ``'float8'`` its "can only be 'auto', or a string
    representation of a valid torch.dtype" (round 26, Q142)."""
    import torch

    places = value.items() if isinstance(value, dict) else [(None, value)]
    for module, one in places:
        if one is None or (isinstance(one, str) and one == "auto"):
            continue
        named = getattr(torch, one, None) if isinstance(one, str) else one
        if not isinstance(named, torch.dtype) or dtype_problem(named) is not None:
            shown = key if module is None else f"{key}[{module!r}]"
            raise UserError(f"{who}: {shown}={one!r:.40} is not a type the weights load in (one of "
                            f"{', '.join(LOADABLE_DTYPES)}); pass one of those (a floating type: quantize with "
                            f"quantization_config=, not with {key}), or leave it out")


def _check_attention(value: Any, who: str) -> None:
    """UserError unless ``value`` is None, a hub kernel's ``'org/repo'``, or an attention implementation this
    transformers knows (``eager``, and those of ``ALL_ATTENTION_FUNCTIONS``: sdpa, flash_attention_2, ...)."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if value is None or (isinstance(value, str) and "/" in value):
        return
    known = ["eager", *ALL_ATTENTION_FUNCTIONS.valid_keys()]
    name = value.removeprefix("paged|") if isinstance(value, str) else None
    if name not in known:
        raise UserError(f"{who}: attn_implementation={value!r:.60} is no attention implementation transformers "
                        f"knows; pass one of {', '.join(repr(k) for k in known)}, or leave it out (sdpa where the "
                        f"model supports it)")
