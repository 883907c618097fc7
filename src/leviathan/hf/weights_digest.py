"""An adopted model's whole-file save held to its config.json: the sha256 of its weights file, recorded in config.json.

    record_weights(folder)                 # save_whole: config.json's leviathan_weights_sha256 = {file: sha256}
    check_weights(folder, raw, variant)    # load_adopted: UserError for a weights file that is not the saved one

A sharded save's index records its shards (``shard_index``, round 25); a whole-file adopted save recorded nothing, so
the model.safetensors of another save of the same settings (another seed, another step) loaded under this
config.json, its generator settings digest and generation_config.json without a word, and gave that model's logits
(issue 30 round 27, S475; round 25 had judged a whole-file swap by design, W316, as the name and size checks see
it). ``save_whole`` now records the digest in config.json, beside transformers' keys, and ``load_adopted`` checks it
after transformers' load, as the catch-all (weights that are no model's, or do not fit the config, are named first by
the sharper checks before it); the key is taken off the loaded config, so it is never carried into a later save or a
baked model stale.

Footgun: a whole-file adopted save without the record (written by transformers alone, or by a leviathan before
round 27) is refused, as settings without their digest (round 21, P305) and an index without its record are: taking
it would switch the check off for anyone who deletes the key. Only adopted folders (config.json holding
``leviathan_generator``) get it: ``LeviathanConfig`` takes no key it does not know. Reading the weights costs one pass
per load, as the export's digests do.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import UserError, not_a_file
from ..io import sha256_file

RECORD = "leviathan_weights_sha256"  # config.json: {weights file name: sha256}
_WHOLE = re.compile(r"^(?:model|pytorch_model)(?:\.[^.-]+)?\.(?:safetensors|bin)$")  # a variant's too, no shard
_FIX = "restore the folder from a copy, or save the model again (model.save_pretrained(DIR))"


def _whole_files(folder: Path) -> list[str]:
    """The whole-file weights in ``folder``, of every variant (a sharded save's shards are recorded in its index,
    ``shard_index``; a whole file beside another variant's index is still recorded here: skipping every whole file
    of a folder that held any index left the default weights unchecked beside a sharded variant, round 32)."""
    return sorted(n for n in os.listdir(folder) if _WHOLE.match(n))


def record_weights(folder: str | os.PathLike) -> None:
    """Write into ``folder``'s config.json (a save's temporary folder) the sha256 of each whole weights file, when it
    is an adopted model's (its config.json holds ``leviathan_generator``); any other folder is left as it is."""
    folder = Path(folder)
    config = folder / "config.json"
    if not config.is_file():
        return
    content = json.loads(config.read_text())
    files = _whole_files(folder)
    if "leviathan_generator" not in content or not files:
        return
    content[RECORD] = {name: sha256_file(folder / name) for name in files}
    config.write_text(json.dumps(content, indent=2, sort_keys=True) + "\n")


def keep_earlier_variants(tmp: Path, out: Path, replaced: list[str]) -> None:
    """Carry into ``tmp``'s config.json (a save's temporary folder, after ``record_weights``) the records of the whole
    weights files already in ``out`` that this save neither writes nor replaces (another variant's), when ``out``'s
    config.json is this save's but for the record and each such file is the one it records; otherwise a UserError
    before anything in ``out`` changes. A second save with variant='v2' into a folder holding a variant='v1' save
    rewrote config.json's record to v2 only and left model.v1.safetensors, which load_adopted then refused as "added
    after the save": the earlier variant no longer loaded, and nothing was said (issue 30 round 31, AA751). A sharded
    save writes no record of its own (its index records its shards); the earlier whole files' are carried all the same
    (round 32, AC422's kind: the default weights beside a sharded variant).
    ``replaced``: the earlier save's own weights this save replaces (``save_folder._earlier_weights``)."""
    from .. import json_text

    config = tmp / "config.json"
    if not config.is_file() or not os.path.isdir(out):
        return
    content = json.loads(config.read_text())
    record = content.get(RECORD, {})  # none when this save is sharded: its index records its shards
    if "leviathan_generator" not in content or not isinstance(record, dict):
        return
    left = sorted(n for n in os.listdir(out) if _WHOLE.match(n) and n not in record and n not in replaced)
    if not left:
        return
    try:
        earlier = json_text.read_file(out / "config.json", object_pairs_hook=json_text.no_repeats)
    except (OSError, ValueError):
        earlier = None
    kept = earlier.get(RECORD) if isinstance(earlier, dict) else None
    same = isinstance(kept, dict) and ({k: v for k, v in earlier.items() if k != RECORD}
                                       == {k: v for k, v in content.items() if k != RECORD})
    if same and all(isinstance(kept.get(n), str) and (out / n).is_file() and sha256_file(out / n) == kept[n]
                    for n in left):
        content[RECORD] = {**record, **{n: kept[n] for n in left}}
        config.write_text(json.dumps(content, indent=2, sort_keys=True) + "\n")
        return
    shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
    raise UserError(f"save_pretrained: {str(out)!r} holds {shown}, weights of an earlier save that this save's "
                    f"config.json would not record (the earlier config.json is another model's or other settings', or "
                    f"does not record them as they are), so they would no longer load; nothing was written; save into "
                    f"another folder, or move {shown} out of {str(out)!r} first")


def check_weights(folder: Path, raw: dict, variant: str | None) -> None:
    """UserError unless each whole weights file transformers would read in ``folder`` (``variant``'s) is the one
    config.json (``raw``) records (module docstring)."""
    if variant is not None and not isinstance(variant, str):
        return  # left to transformers' own refusal
    suffix = f".{variant}" if variant else ""
    files = [n for n in _whole_files(folder) if n in (f"model{suffix}.safetensors", f"pytorch_model{suffix}.bin")]
    if not files:
        return
    config = str(folder / "config.json")
    record = raw.get(RECORD)
    if not isinstance(record, dict):
        raise UserError(f"{config!r} records no sha256 of its weights ({RECORD}), which an adopted model's "
                        f"save_pretrained writes with them, so weights of another save could not be told from its own: "
                        f"config.json was edited, or the folder was saved by transformers alone or before round 27; "
                        f"{_FIX}")
    _check_record_names(folder, record, config)
    for name in files:
        digest = record.get(name)
        if not isinstance(digest, str):
            raise UserError(f"{config!r} records no sha256 of {name} ({RECORD} lists {sorted(record)!r:.60}): the "
                            f"weights file is not the one saved with this config.json; {_FIX}")
        path = folder / name
        if (what := not_a_file(path)) is not None:
            raise UserError(f"{str(path)!r} {what}; {_FIX}")
        found = sha256_file(path)
        if found != digest:
            raise UserError(f"{str(path)!r} is not the weights file saved with {config!r} (sha256 {found[:12]}..., "
                            f"config.json records {digest[:12]}...): it comes from another save (another seed or "
                            f"step), or config.json's record was edited; {_FIX}")


def _check_record_names(folder: Path, record: dict, config: str) -> None:
    """UserError unless ``record`` names exactly the whole weights files ``folder`` holds: a record that also named a
    file the folder lacks (``extra.safetensors``) was taken, only the files there read against it (issue 30 round 28,
    U229): the record and the folder are then not one save, one of them edited or a file lost; and a weights file the
    record does not name is not the save's either."""
    there = sorted(n for n in os.listdir(folder) if _WHOLE.match(n))
    lost = sorted(set(record) - set(there), key=str)
    if lost:
        raise UserError(f"{config!r} records the sha256 of {lost[0]!r:.60}{' and more' if len(lost) > 1 else ''} "
                        f"({RECORD}), which {str(folder)!r} does not hold: the save's weights files are not all there, "
                        f"or config.json's record was edited; {_FIX}")
    if unrecorded := [n for n in there if n not in record]:
        raise UserError(f"{str(folder / unrecorded[0])!r} is a weights file {config!r} does not record ({RECORD} "
                        f"lists {sorted(record, key=str)!r:.60}): it was added after the save; move it out of the "
                        f"folder, or {_FIX}")
