"""A saved folder's config.json, read and checked before transformers reads it.

    raw = read_config_json(folder / "config.json", "restore it from a copy, or save the model again")
    check_saved_dtype(raw, folder / "config.json", fix)   # dtype / torch_dtype: a floating type torch has
    config = saved_config(folder, raw, fix)                # transformers' AutoConfig, its strict checks in one line

transformers' own reader ended a config.json nested 100,000 deep in a RecursionError traceback (issue 30 round 18,
G446) and a binary one in "OSError: It looks like the config file at ... is not a valid JSON file" with no fix (round
22, S118); a ``dtype`` (or the older ``torch_dtype``) of a name torch lacks, 'float8', in transformers' ``getattr(torch,
name)``: "AttributeError: module 'torch' has no attribute 'float8'" through ``LeviathanForCausalLM.from_pretrained``
and ``load_adopted`` (S108, S119). ``LeviathanConfig`` asks ``dtype_problem`` too, before transformers converts it.
A key given twice was taken as "the last one wins" (round 27, S89: the line then blamed a setting the second copy
lacked), and a size transformers' strict config refuses (``vocab_size: 300.0``) its raw
StrictDataclassFieldValidationError (S90): ``read_config_json`` refuses the first (``json_text.no_repeats``),
``saved_config`` names the second's file and field.
"""

from __future__ import annotations

import os
import re
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
    """``file`` read as a JSON object; UserError naming it and ``fix`` unless Python can read one (see the module).
    ``fix`` is for a file whose text is damaged; a path that is no regular file (a pipe, a folder, nothing there, a
    path under a file) gets the storage line's own fix (issue 30 round 33, AE110-AE113, AE115: ``from_json_file``
    gave every cause the fix of a key given twice, "give each setting once (restore the file ...)")."""
    from ..errors import not_regular

    try:
        raw = json_text.read_file(file, object_pairs_hook=json_text.no_repeats)  # a key twice (S89)
    except OSError as e:  # its line names the path's problem and its fix (AE111, AE112)
        raise UserError(f"{str(file)!r} is not readable JSON ({e})") from None
    except (UnicodeDecodeError, ValueError) as e:
        if not_regular(file) is not None:  # a pipe in the file's place (AE110)
            fix = "pass the path of a regular file (config.json as save_pretrained writes it)"
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


def saved_config(folder: str | os.PathLike, raw: dict, fix: str) -> Any:
    """transformers' ``AutoConfig`` of ``folder``; a config.json (``raw``, as ``read_config_json`` read it) its strict
    dataclass refuses is one UserError naming the file, the field and its value, not huggingface_hub's raw
    StrictDataclassFieldValidationError (round 27, S90: ``vocab_size: 300.0``, "expected int, got float")."""
    from huggingface_hub.errors import StrictDataclassError
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(str(folder))
    except StrictDataclassError as e:
        file = os.path.join(os.fspath(folder), "config.json")
        said = " ".join(str(e).split())
        field = re.search(r"field '(\w+)'", said)
        if field is None:  # a check of the whole class: transformers' words, the file and the fix
            raise UserError(f"{file!r} holds settings transformers refuses ({said}); config.json was edited: {fix}") \
                from None
        name = field.group(1)
        cause = re.sub(r"\s*\(value: .*\)$", "", said.split(":", 1)[-1].strip())
        shown = f"is {raw[name]!r:.40}, which" if name in raw else "is missing, which"
        raise UserError(f"{file!r}: {name} {shown} transformers refuses ({cause}); config.json was edited: write "
                        f"{name} in the type named (an int as 300, not 300.0), or {fix}") from None
