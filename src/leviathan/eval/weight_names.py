"""Whether a Hugging Face folder's weight files hold exactly the tensors the model its config.json builds takes.

    check_weight_names(Path("exports/run"))   # UserError naming the tensors it lacks and the ones it does not use

transformers loads a folder whose weights do not fit its config with a warning only: the tensors the model lacks
are drawn at random and the ones it has no place for are dropped. ``lm-eval`` then scores a model that was never
trained. An export whose config.json was edited from ``embedding: leviathan`` to ``dense_tied`` (its digest
recomputed in the marker, so the export's own fingerprints agree) was scored that way: the generator's six tensors
dropped, the table drawn at random (issue 30 round 13, W30). The harness checks the names first.

The model is built on the ``meta`` device (no memory, no weights read): only its ``state_dict`` names count, less
the tied ones (``all_tied_weights_keys``: a tied head is not saved) and the patterns the class says to ignore.
A folder whose tensors carry no ``base_model_prefix`` (a bare ``LlamaModel`` saved) is matched with the prefix added,
as transformers loads it.

Footgun: a name check cannot see a tensor of the right name from another model; the export's marker fingerprints do.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import UserError
from .hflm import offline_env

_SHOWN = 4  # tensor names listed in the error


def weight_files(folder: Path, variant: str | None = None) -> list[Path]:
    """The safetensors files transformers loads from ``folder`` for ``variant``: the shards its index
    (``model.safetensors.index[.V].json``) names, else its whole ``model[.V].safetensors``; when it holds neither,
    every ``*.safetensors`` there (a damaged or unusual save, named by the checks that read them). A user's own
    ``model-mine.safetensors`` beside a save is no part of it (the savers keep it, S485): it was read, and its
    "header too small" made the folder fail to load, with an advice to save again that kept it (issue 30 round 33,
    AE11, AE20)."""
    import json

    from ..hf.weights_variant import variant_problem, with_variant

    if variant_problem(variant) is not None:  # named by the loaders' own variant check
        return sorted(folder.glob("*.safetensors"))
    index = folder / with_variant("model.safetensors.index.json", variant)
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
        except (OSError, ValueError, AttributeError):
            weight_map = None  # a damaged index: shard_index.check_shards names it
        if isinstance(weight_map, dict) and all(isinstance(v, str) for v in weight_map.values()):
            return sorted({folder / name for name in weight_map.values() if os.path.lexists(folder / name)})
    whole = folder / with_variant("model.safetensors", variant)
    if os.path.lexists(whole):
        return [whole]
    return sorted(folder.glob("*.safetensors"))


def saved_names(folder: Path, fix: str = "export the checkpoint again", variant: str | None = None) -> set[str] | None:
    """Every tensor name in the safetensors files the folder's load reads (``weight_files``, for ``variant``); None
    when it has none (transformers then reads
    ``pytorch_model.bin``, whose names need the whole file loaded: left to transformers). A file that is not one is a
    UserError ending in ``fix`` (``load_adopted``'s: save the model again; round 18, G378, G380), and so is a folder
    (or a device) in a weights file's place, which safetensors named "No such device (os error 19)" (round 22, S528)."""
    from safetensors import safe_open

    from ..errors import not_a_file

    files = weight_files(folder, variant)
    if not files:
        return None
    names: set[str] = set()
    for f in files:
        if (what := not_a_file(f)) is not None:
            raise UserError(f"{str(f)!r} {what}, where the model's weights file should be; move it away, then {fix}")
        try:
            with safe_open(str(f), framework="pt") as handle:
                names |= set(handle.keys())
        except Exception as e:  # noqa: BLE001 - safetensors raises its own error type for a damaged file
            raise UserError(f"{str(f)!r} does not read as a safetensors file ({e}); {fix}") from None
    return names


def expected_names(folder: Path) -> tuple[set[str], str, list[str]] | None:
    """(the names the config's model saves, its base_model_prefix, the patterns it ignores) for the folder's
    config.json, built on the meta device; None when transformers cannot build it (its own load names why)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from .. import hf  # noqa: F401 - registers model_type "leviathan" with the Auto classes

    try:
        with offline_env():
            config = AutoConfig.from_pretrained(str(folder))
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
    except Exception:  # noqa: BLE001 - a config transformers cannot build is named by the harness's own load
        return None
    tied = set(getattr(model, "all_tied_weights_keys", None) or {})
    names = set(model.state_dict()) - tied
    ignored = [p for attr in ("_keys_to_ignore_on_load_unexpected", "_keys_to_ignore_on_load_missing")
               for p in (getattr(model, attr, None) or ())]
    return names, model.base_model_prefix, ignored


def check_weight_names(folder: Path, variant: str | None = None) -> None:
    """UserError unless the folder's safetensors tensors (of ``variant``'s files) are exactly the names its config's
    model takes (module docstring); a folder without safetensors files or a config transformers cannot build is left
    to its load."""
    saved = saved_names(folder, variant=variant)
    built = expected_names(folder) if saved is not None else None
    if built is None:
        return
    expected, prefix, ignored = built
    if prefix and saved and not any(n.startswith(prefix + ".") for n in saved):
        saved = {f"{prefix}.{n}" if f"{prefix}.{n}" in expected else n for n in saved}  # a bare base model saved

    def kept(names):
        return sorted(n for n in names if not any(re.search(p, n) for p in ignored))

    lacks, unused = kept(expected - saved), kept(saved - expected)
    if not lacks and not unused:
        return
    parts = []
    if lacks:
        parts.append(f"lack {len(lacks)} tensor(s) its model needs ({shown_names(lacks)}), which would be drawn at "
                     f"random")
    if unused:
        parts.append(f"hold {len(unused)} its model has no place for ({shown_names(unused)}), which would be dropped")
    raise UserError(f"the weights of {str(folder)!r} are not the model its config.json describes: they "
                    f"{' and '.join(parts)}; config.json was edited or comes from another model: export the "
                    f"checkpoint again (leviathan export RUN OUT), or put the model's own config.json in the folder")


def sizes_refused(error: RuntimeError, folder, fix: str) -> UserError | None:
    """transformers' "You set `ignore_mismatched_sizes` to `False`" (weights of another size than config.json gives,
    after its LOAD REPORT table) as one UserError ending in ``fix``; None for any other error. ``load_adopted``'s
    (round 8) and, since round 20 (M175, M178, M179: head_dim, vocab_size or num_key_value_heads edited),
    ``LeviathanForCausalLM.from_pretrained``'s, which ended in the RuntimeError's traceback."""
    if "ignore_mismatched_sizes" not in str(error):
        return None
    return UserError(f"the weights in {folder} do not fit the sizes its config.json gives (transformers' report "
                     f"above names the tensors): config.json was edited or comes from another model; {fix}")


def shown_names(names: list[str]) -> str:
    """The first few of ``names`` and how many more: the tensors a refusal lists (also ``hf.save_folder``'s and
    ``hf.adoption``'s)."""
    shown = ", ".join(names[:_SHOWN])
    return shown + (f", ... ({len(names) - _SHOWN} more)" if len(names) > _SHOWN else "")
