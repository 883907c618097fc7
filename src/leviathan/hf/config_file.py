"""A saved folder's config.json, read and checked before transformers reads it.

    raw = read_config_json(folder / "config.json", "restore it from a copy, or save the model again")
    check_saved_dtype(raw, folder / "config.json", fix)   # dtype / torch_dtype: a floating type torch has

transformers' own reader ended a config.json nested 100,000 deep in a RecursionError traceback (issue 30 round 18,
G446) and a binary one in "OSError: It looks like the config file at ... is not a valid JSON file" with no fix (round
22, S118); a ``dtype`` (or the older ``torch_dtype``) of a name torch lacks, 'float8', in transformers' ``getattr(torch,
name)``: "AttributeError: module 'torch' has no attribute 'float8'" through ``LeviathanForCausalLM.from_pretrained``
and ``load_adopted`` (S108, S119). ``LeviathanConfig`` asks ``dtype_problem`` too, before transformers converts it.
"""

from __future__ import annotations

import os
from typing import Any

from .. import json_text
from ..errors import UserError

LOADABLE_DTYPES = ("float32", "bfloat16", "float16", "float64", "auto")
DTYPE_KEYS = ("dtype", "torch_dtype")  # transformers 5's name, and the one older folders (and the hub's) carry


def dtype_problem(value: Any) -> str | None:
    """Why ``value`` (a config's dtype: a name, or a ``torch.dtype``) names no type the weights load in; None when it
    names one, or is None."""
    if value is None:
        return None
    name = str(value).removeprefix("torch.")
    if name in LOADABLE_DTYPES:
        return None
    return f"{name!r:.40} is not a type the weights load in (one of {', '.join(LOADABLE_DTYPES)})"


def read_config_json(file: str | os.PathLike, fix: str) -> dict:
    """``file`` read as a JSON object; UserError naming it and ``fix`` unless Python can read one (see the module)."""
    try:
        raw = json_text.read_file(file)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UserError(f"{str(file)!r} is not readable JSON ({e}); {fix}") from None
    if not isinstance(raw, dict):
        raise UserError(f"{str(file)!r} is a JSON {type(raw).__name__}, not the object save_pretrained writes; {fix}")
    return raw


def check_saved_dtype(raw: dict, file: str | os.PathLike, fix: str) -> None:
    """UserError naming config.json's ``dtype`` / ``torch_dtype`` when it is no floating type torch loads weights in
    (S108, S119)."""
    for key in DTYPE_KEYS:
        if (problem := dtype_problem(raw.get(key))) is not None:
            raise UserError(f"{str(file)!r}: {key} {problem}; config.json was edited: write float32 (or another of "
                            f"those) as its {key}, or {fix}")
