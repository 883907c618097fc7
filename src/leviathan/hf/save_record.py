"""A native save's record: ``leviathan_save.json`` holds the sha256 of its config.json and of every weights file.

    record_save(tmp, out, replaced)   # save_whole, in the save's temporary folder: the record of the folder as it
                                      # will be once moved in (this save's files and the earlier variants it keeps)
    check_save_record(folder)         # LeviathanForCausalLM.from_pretrained, after its load (the sharper checks
                                      # first): UserError for a recorded file changed,
                                      # or a config.json or weights file the save did not write

An adopted save records its weights' digest and its settings' digest in config.json (``weights_digest``,
``settings_digest``) and an export its files in its marker, but a ``LeviathanForCausalLM.save_pretrained`` folder
recorded nothing (``LeviathanConfig`` takes no key it does not know, and every reader of an export's config.json
would have to learn one): another native model's model.safetensors of the same shapes (another seed, a Trainer
checkpoint's) loaded under the folder's config.json, and so did a config.json edited to another rope_theta or
rms_norm_eps, each giving other logits without a word (issue 30 round 35, AI57, AI64, AI567, AI497, AI500, AI501).
The record is a file of its own beside them, written by the save and read by the load.

What is recorded: config.json and every weights file or index a loader reads (``save_place.LOADABLE``: every variant,
whole or the shard index, whose own record holds the shards' digests, ``shard_index``). generation_config.json is not:
``GenerationConfig.save_pretrained(folder)`` into a model's folder is how transformers' users change its generation
defaults, and it changes no logit (its values are checked on load, ``generation_file``).

Footguns: a folder without the record (saved before this, by transformers alone, or with the record deleted) loads
as before: the record proves the files belong together, it is not a signature. A setting changed on purpose is
loaded by passing it (``from_pretrained(DIR, rope_theta=...)``) and saved again, not by editing config.json. Costs
one sha256 pass over the weights at each save and each load (about 1 s per GB here).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UserError

RECORD = "leviathan_save.json"
FORMAT = "leviathan-save/1"
_FIX = "restore the folder from a copy, or save the model again (model.save_pretrained(DIR))"


def _recorded_names(folder: Path) -> list[str]:
    """The files of ``folder`` a record covers: config.json and every loadable weights file or index."""
    from .save_place import LOADABLE

    return sorted(n for n in os.listdir(folder)
                  if (n == "config.json" or LOADABLE.match(n)) and (folder / n).is_file())


def _is_native(folder: Path) -> bool:
    """Whether ``folder``'s config.json is a ``LeviathanConfig``'s (model_type 'leviathan'); an adopted model's
    (another model_type) has its digests in config.json."""
    from .. import json_text

    try:
        config = json_text.read_file(folder / "config.json")
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == "leviathan"


def record_save(tmp: Path, out: Path, replaced: list[str]) -> None:
    """Write ``tmp``/leviathan_save.json for a native save: the sha256 of each file this save wrote and of each
    earlier weights file of ``out`` it keeps (another variant's: ``replaced`` are the ones it replaces), the latter
    from ``out``'s earlier record where it lists them (so a kept file changed since its save is still caught), else
    as the file is now (a folder saved before records existed). Any other folder: nothing."""
    from ..io import atomic_write_json, sha256_file

    if not _is_native(tmp):
        return
    files = {name: sha256_file(tmp / name) for name in _recorded_names(tmp)}
    if os.path.isdir(out):
        earlier = _earlier_record(out)
        for name in _recorded_names(out):
            if name not in files and name not in replaced:
                files[name] = earlier.get(name) or sha256_file(out / name)
    atomic_write_json(tmp / RECORD, {"format": FORMAT, "files": dict(sorted(files.items()))})


def _earlier_record(out: Path) -> dict[str, str]:
    """``out``'s record's files, or {} when it has none or one that does not read (the new save replaces it)."""
    if not (out / RECORD).is_file():
        return {}
    try:
        return _read_record(out / RECORD)
    except UserError:
        return {}


def check_save_record(folder: str | os.PathLike) -> None:
    """UserError when ``folder`` holds a record and a file it lists is there but not the one saved (another model's
    weights, an edited config.json), or a config.json or weights file is there that the save did not write. A listed
    file that is gone is left to the loader (another variant's file is not this load's). No record: nothing."""
    from ..io import sha256_file

    folder = Path(folder)
    record = folder / RECORD
    if not os.path.lexists(record):
        return
    files = _read_record(record)
    for name in _recorded_names(folder):
        path = folder / name
        if name not in files:
            raise UserError(f"{str(path)!r} was not written by the save this folder holds ({RECORD} does not list "
                            f"it): it was copied in afterwards, and would load under a config.json it was not saved "
                            f"with; remove it, or {_FIX}")
        if (found := sha256_file(path)) != files[name]:
            what, fix = (("was edited or replaced, and the weights would load under settings they were not saved "
                          "with (other logits)", "restore config.json from a copy; to change a setting on purpose, "
                          "pass it to from_pretrained (from_pretrained(DIR, rope_theta=...)) and save the model again")
                         if name == "config.json" else
                         ("was replaced (another model's or another save's weights of the same shapes) and would load "
                          "under this config.json without a word", _FIX))
            raise UserError(f"{str(path)!r} is not the file this folder's save wrote ({RECORD} records sha256 "
                            f"{files[name][:16]}..., the file's is {found[:16]}...): it {what}; {fix}")


def _read_record(record: Path) -> dict[str, str]:
    """The record's ``files`` (name -> 64 hex digits), or a UserError naming what is wrong with the file."""
    from .digest_record import read_record

    return read_record(record, FORMAT, f"{str(record)!r} is not the record the model was saved with", _FIX,
                       nested=False)
