"""A sharded save (an adopted model's, or a LeviathanForCausalLM's) held to what was saved, as a whole-file save is.

    record_shards(folder)              # save_whole: the sha256 of each shard and of the weight map, in the index
    check_shards(folder, variant)      # the loaders: UserError for an index or shard that is not the saved one

A whole-file save is one ``model.safetensors``: swapped whole, it is another model's weights file, which the loader's
name and size checks judge (by design, W316). A sharded save is several files and an index that transformers trusts
(issue 30 round 25): a shard copied in from another save of the same settings loaded a model that is neither (Y509),
an index that lost its ``lm_head.weight`` entry loaded a head drawn at random with only transformers' LOAD REPORT
(Y510), a missing shard was transformers' raw FileNotFoundError (Y511), and a shard named ``../other/...`` its raw
ValueError (Y512). ``save_folder.save_whole`` (every ``save_pretrained`` of an adopted model or a
``LeviathanForCausalLM``) now records, in the index's ``metadata``, the sha256 of every shard and of the weight map
(``leviathan_shards``); ``load_adopted`` and ``LeviathanForCausalLM.from_pretrained`` check them before transformers
reads a shard (the latter's name check, ``check_weight_names``, reads the shards' names, not the index).

Round 29 (W96, W129): a whole ``model.safetensors`` copied in beside a sharded save was loaded without a word
(transformers prefers the whole file, and both checks stepped aside: this one for the whole file, ``weights_digest``
for the index), another model's weights under this save's config and index. A folder holding both is refused
(``_refuse_whole_beside_index``): one save writes one or the other.

Footgun: an index without the record (written by transformers alone, or by a leviathan before round 25) is refused,
as settings without their digest are (round 21, P305): taking it would switch the check off for anyone who deletes it.
Reading every shard costs one pass over the weights per load, as the export's digests do.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..io import sha256_file
from .weights_variant import with_variant

RECORD = "leviathan_shards"  # index["metadata"][RECORD] = {"weight_map": sha256, "files": {shard: sha256}}
_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")  # transformers' order of preference
_WHOLE = ("model.safetensors", "pytorch_model.bin")  # the whole-file save each index stands for
_FIX = "restore the folder from a copy, or save the model again (model.save_pretrained(DIR))"
# a shard's name as transformers writes it: model[.VARIANT]-00001-of-00003.safetensors (or pytorch_model ... .bin)
_SHARD = re.compile(r"^(?:model|pytorch_model)(?:\.([^.-]+))?-\d+-of-\d+\.(safetensors|bin)$")


def _map_digest(weight_map: dict) -> str:
    return hashlib.sha256(json.dumps(weight_map, sort_keys=True).encode()).hexdigest()


def record_shards(folder: str | os.PathLike) -> None:
    """Write into each index of ``folder`` (a save's temporary folder) the digests of its weight map and shards; a
    folder without an index (a whole-file save, or a non-main process's: nothing written) is left as it is."""
    folder = Path(folder)
    for index in sorted(folder.glob("*.index*.json")):
        content = json.loads(index.read_text())
        weight_map = content.get("weight_map") or {}
        files = {name: sha256_file(folder / name) for name in sorted(set(weight_map.values()))}
        metadata = content.setdefault("metadata", {})
        metadata[RECORD] = {"weight_map": _map_digest(weight_map), "files": files,
                            "metadata": _map_digest(_other_metadata(metadata))}  # total_size too (round 35, AI29)
        index.write_text(json.dumps(content, indent=2, sort_keys=True) + "\n")


def check_shards(folder: Path, variant: str | None) -> None:
    """UserError unless the index transformers would read in ``folder`` (none: a whole-file save, not checked here)
    names only shards inside it that are there, and its weight map and shards are the ones ``record_shards`` recorded
    (module docstring). A ``variant`` that is no name is left to transformers' own refusal."""
    if variant is not None and not isinstance(variant, str):
        return
    _refuse_whole_beside_index(folder, variant)
    for index_name, whole in zip(_INDEXES, _WHOLE):
        index = folder / with_variant(index_name, variant)
        if os.path.isfile(folder / with_variant(whole, variant)) or not os.path.lexists(index):
            continue
        weight_map, record = _read_index(index)
        _check_names(index, weight_map, folder)
        _check_record(index, weight_map, record, folder)
        _check_metadata(index, record)
        return
    _refuse_lost_index(folder, variant)


def _refuse_whole_beside_index(folder: Path, variant: str | None) -> None:
    """UserError when ``folder`` holds a shard index and a whole weights file of one ``variant``: transformers loads
    the whole file and leaves the recorded shards unread, so a model.safetensors copied in from another save loaded
    that model's weights under this save's config.json and index, without a word (issue 30 round 29, W96, W129). A
    save (``save_folder.save_whole`` replaces the folder whole) writes one or the other, never both."""
    indexes = [name for name in (with_variant(n, variant) for n in _INDEXES) if os.path.lexists(folder / name)]
    wholes = [name for name in (with_variant(n, variant) for n in _WHOLE) if os.path.lexists(folder / name)]
    if indexes and wholes:
        raise UserError(f"{str(folder)!r} holds both the whole weights file {wholes[0]} and the shard index "
                        f"{indexes[0]} of a sharded save: a save writes one or the other, so one was added after it "
                        f"(transformers would load {wholes[0]} and leave the recorded shards unread); move the one "
                        f"that is not this save's out of the folder, or {_FIX}")


def _refuse_lost_index(folder: Path, variant: str | None) -> None:
    """UserError when ``folder`` holds a sharded save's shards (``variant``'s) but neither its index nor a whole
    weights file: the index deleted or left behind by a copy was transformers' raw "no file named
    model.safetensors, or pytorch_model.bin, found in directory" (issue 30 round 28, U274), blaming a file a sharded
    save never has and not naming the one lost."""
    if any(os.path.isfile(folder / with_variant(whole, variant)) for whole in _WHOLE):
        return
    names = os.listdir(folder)
    for index_name, whole in zip(_INDEXES, _WHOLE):
        kind = whole.rsplit(".", 1)[1]
        shards = sorted(n for n in names if (m := _SHARD.match(n)) and (m.group(1) or "") == (variant or "")
                        and m.group(2) == kind)
        if shards:
            index = with_variant(index_name, variant)
            raise UserError(f"{str(folder)!r} holds {len(shards)} shard(s) of a sharded save ({shards[0]}, ...) but "
                            f"not their index {index}, which names the shard each tensor is in, so they cannot be "
                            f"loaded: it was deleted, or not copied with them; restore {index} from a copy of the "
                            f"folder, or save the model again (model.save_pretrained(DIR))")


def _read_index(index: Path) -> tuple[dict, Any]:
    """(the weight map, the record) of ``index``; UserError for a file that is no index."""
    from .. import json_text

    try:
        content = json_text.read_file(index, object_pairs_hook=json_text.no_repeats)
    except (OSError, ValueError) as e:
        raise UserError(f"{str(index)!r} does not read as a shard index ({e}); {_FIX}") from None
    weight_map = content.get("weight_map") if isinstance(content, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise UserError(f"{str(index)!r} holds no weight_map of tensor names to shard files (the index was edited or "
                        f"damaged); {_FIX}")
    metadata = content.get("metadata")
    return weight_map, metadata.get(RECORD) if isinstance(metadata, dict) else None


def _other_metadata(metadata: Any) -> dict:
    """The index's ``metadata`` without the record itself (transformers' ``total_size``, ...)."""
    return {k: v for k, v in metadata.items() if k != RECORD} if isinstance(metadata, dict) else {}


def _check_metadata(index: Path, record: Any) -> None:
    """UserError when the index's ``metadata`` (its ``total_size``) is not what the save wrote: ``total_size`` -1 was
    taken without a word, nothing reading it (issue 30 round 35, AI29). A record written before round 35 holds no
    digest of it; there a ``total_size`` that is no byte count is still refused."""
    from .. import json_text

    metadata = json_text.read_file(index).get("metadata")
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    recorded = record.get("metadata") if isinstance(record, dict) else None
    if recorded is not None and recorded != _map_digest(_other_metadata(metadata)):
        raise UserError(f"{str(index)!r}: its metadata (total_size {total!r:.30}) is not the one saved (an entry was "
                        f"edited, added or removed); {_FIX}")
    if total is not None and (not isinstance(total, int) or isinstance(total, bool) or total < 0):
        raise UserError(f"{str(index)!r}: its metadata's total_size {total!r:.30} is no byte count (the index was "
                        f"edited or damaged); {_FIX}")


def _check_names(index: Path, weight_map: dict, folder: Path) -> None:
    """UserError for a shard named outside ``folder`` (Y512) or one that is not there (Y511)."""
    from ..errors import missing

    for name in sorted(set(weight_map.values())):
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise UserError(f"{str(index)!r} names the shard {name!r:.80}, outside its folder: a save's shards lie "
                            f"beside its index, so the index was edited; {_FIX}")
        if not os.path.isfile(folder / name):
            raise UserError(f"{str(folder / name)!r}, a shard of this save named by {index.name}, "
                            f"{missing(folder / name)}; {_FIX}")


def _check_record(index: Path, weight_map: dict, record: Any, folder: Path) -> None:
    """UserError unless the weight map and every shard hash to what ``record`` holds (Y509, Y510)."""
    files = record.get("files") if isinstance(record, dict) else None
    if not isinstance(files, dict):
        raise UserError(f"{str(index)!r} records no digests of its shards ({RECORD} in its metadata, which "
                        f"save_pretrained writes), so a shard from another save could not be told from this one's: "
                        f"the index was edited, or written without leviathan; {_FIX}")
    if record.get("weight_map") != _map_digest(weight_map) or set(files) != set(weight_map.values()):
        raise UserError(f"{str(index)!r}: its weight_map is not the one saved (an entry was edited, added or removed, "
                        f"so a tensor would be drawn at random or read from another shard); {_FIX}")
    for name, recorded in sorted(files.items()):
        if sha256_file(folder / name) != recorded:
            raise UserError(f"{str(folder / name)!r} is not the shard saved with {index.name} (its sha256 differs "
                            f"from the one recorded there): it was replaced, by a shard of another save or an edited "
                            f"file, and would load a model that is neither; {_FIX}")
