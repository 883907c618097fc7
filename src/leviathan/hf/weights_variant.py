"""A weights ``variant`` (``save_pretrained(variant='v1')`` writes ``model.v1.safetensors``), checked where it is given:
a plain name, and, for a load, one whose weights the folder holds.

    variant_problem(variant)                          # why it is no plain name ('../x', 5, ''), or None
    check_weights_variant("load_adopted", variant, folder)   # UserError: no name, or no weights of it in the folder

transformers puts the variant inside the weight files' names and, for a load, said only "Error no file named
model.fp16.safetensors, or pytorch_model.fp16.bin, found in directory D" when the folder holds none of that variant
(issue 30 round 30: Y736 through ``LeviathanForCausalLM.from_pretrained``; Y739, Y740 for another variant of an
adopted save, whole or sharded), when the variant is a path (Y737: ``'../x'``, its error naming
``model.../x.safetensors``) and when it is no name at all (Y738: ``variant=5``, read as ``'5'``). A folder saved with
variant 'v1' asked for 'v2' through ``load_adopted`` was told it "holds config.json but no weights ... the folder is
incomplete" (Y732), a fix that does not apply. Each is one line naming the variant asked for and the ones the folder
holds. The same holds when no variant is given and the folder holds only a variant's weights (round 20, M9, once
``adoption._check_variant``; ``LeviathanForCausalLM.from_pretrained`` met it too). ``save_folder.check_variant``
holds a save's variant to ``variant_problem`` (round 22, S421).

Footgun: the variants a folder holds are read from its weight files' names (``model.V.safetensors``,
``model.V-00001-of-00002.safetensors``, the index ``model.safetensors.index.V.json``, and the pickled
``pytorch_model`` forms); a folder holding no weight file at all is left to the loaders' own line for it
(``model_path.weights_failure``), and a hub name (no local folder) to transformers.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import UserError

_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
# a variant's weight file: model.V.safetensors, model.V-00001-of-00002.safetensors, model.safetensors.index.V.json
_OF_VARIANT = re.compile(r"^(?:model|pytorch_model)\.(?:(?:safetensors|bin)\.index\.(?P<index>.+)\.json|"
                         r"(?P<name>.+?)(?:-\d+-of-\d+)?\.(?:safetensors|bin))$")


def variant_problem(variant: Any) -> str | None:
    """Why ``variant`` is no plain name transformers can put inside a weight file's name (None when it is one, or is
    None): not a str (``5``, Y738), empty, ``'.'`` / ``'..'``, or holding a path separator or NUL (``'../x'``, Y737;
    round 22, S421)."""
    if variant is None or (isinstance(variant, str) and variant not in ("", ".", "..")
                           and not any(c in variant for c in "/\\\0")):
        return None
    shown = f"{variant!r:.60}" if isinstance(variant, str) else f"{variant!r:.40} (of type {type(variant).__name__})"
    return f"must be a plain name such as 'fp16' (no '/', not '..' or empty), got {shown}"


def with_variant(name: str, variant: str | None) -> str:
    """transformers' ``_add_variant``: ``model.safetensors`` -> ``model.V.safetensors``,
    ``model.safetensors.index.json`` -> ``model.safetensors.index.V.json``; ``name`` itself for None."""
    if variant is None:
        return name
    stem, suffix = name.rsplit(".", 1)
    return f"{stem}.{variant}.{suffix}"


def held_variants(folder: Path) -> tuple[bool, list[str]]:
    """(whether ``folder`` holds weights saved without a variant, the variants it holds weights of, sorted)."""
    names = os.listdir(folder)
    plain = any(name in _WEIGHTS or re.match(r"^(?:model|pytorch_model)-\d+-of-\d+\.", name) for name in names)
    variants = {m.group("index") or m.group("name") for name in names
                if name not in _WEIGHTS and (m := _OF_VARIANT.match(name))}
    return plain, sorted(variants)


def _holds(folder: Path, variant: str) -> bool:
    """Whether ``folder`` holds a weight file (or a shard) transformers reads for ``variant``."""
    if any(os.path.lexists(folder / with_variant(name, variant)) for name in _WEIGHTS):
        return True
    return any(name.startswith((f"model.{variant}-", f"pytorch_model.{variant}-")) for name in os.listdir(folder))


def check_weights_variant(who: str, variant: Any, folder: Path | None) -> None:
    """UserError, in ``who``'s words, when ``variant`` is no plain name (``variant_problem``), or when the local
    ``folder`` (None: a hub name, left to transformers) holds weights but none of ``variant`` (none saved without a
    variant, when ``variant`` is None): module docstring (Y732, Y736-Y740; M9)."""
    if (problem := variant_problem(variant)) is not None:
        raise UserError(f"{who}: variant {problem}; pass the variant the folder's weights were saved with "
                        f"(save_pretrained(variant=...)), or leave variant out")
    if folder is None or not os.path.isdir(folder):
        return
    plain, variants = held_variants(folder)
    if not plain and not variants:
        return  # no weights at all: model_path.weights_failure's line
    if variant is None:
        if plain or not variants:
            return
        # every variant named: a folder of v1 and v2 was said to hold v1 alone (issue 30 round 31, AA752)
        held = " and ".join(f"variant={v!r}" for v in variants)
        loads = " or ".join(f"{who}({str(folder)!r}, variant={v!r})" for v in variants)
        raise UserError(f"{who}: {str(folder)!r} holds weights saved with {held} (save_pretrained(variant=...)) and "
                        f"none without; load {'one of them' if len(variants) > 1 else 'them'} with {loads}")
    if _holds(folder, variant):
        return
    held = [f"variant {v!r}" for v in variants] + (["weights saved without a variant"] if plain else [])
    fixes = [f"pass variant={v!r}" for v in variants] + (["leave variant out"] if plain else [])
    raise UserError(f"{who}: variant={variant!r} names no weights in {str(folder)!r} (no "
                    f"{with_variant('model.safetensors', variant)} or its shards): it holds {', '.join(held)}; "
                    f"{' or '.join(fixes)}")
