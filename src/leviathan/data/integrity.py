"""A prepared data folder's meta.json checked against what it describes: its tokenizer (and, in the loader, its ids).

    check_meta_tokenizer(data_dir, tokenizer)   # UserError if meta.json's vocab_size / eot_id are not the tokenizer's
    recorded_tokenizer_name(folder)             # the name in a folder's leviathan_tokenizer.json, or None

meta.json decides the model's vocabulary and the end-of-text id; the tokenizer files beside it decide what ids text
gets. A meta.json edited by hand or copied from another preparation would otherwise train a model of the wrong size
without a word (a head 16 times too large, most of it never trained). The token files' ids are checked against
meta.json's vocab_size by ``data.loader.TokenDataset``. meta.json's tokenizer name is checked against the folder's
leviathan_tokenizer.json (a name they contradict was taken as it stood, issue 30 round 6), as a step's state.json is
(``checkpoint.state``). Cheap: meta.json is read once more (``read_meta``), the
tokenizer is being loaded anyway. A folder without a meta.json (a step folder, an export) is not checked, nor one
whose meta.json is damaged: the loader reports that with its own fix.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from .companions import check_file
from .meta import META_FILE, read_meta
from .. import json_text


def check_meta_tokenizer(directory: str | Path, tokenizer) -> None:
    """UserError unless ``directory/meta.json`` (if it is a data folder's) records ``tokenizer``'s vocab_size and
    eot_id."""
    path = Path(directory) / META_FILE
    if not path.is_file():
        return
    try:
        meta = read_meta(directory)
    except UserError:
        return  # the loader reports a damaged meta.json with its own fix
    for name in ("tokenizer.json", "leviathan_tokenizer.json"):  # the tokenizer files prepared with this meta.json
        check_file(directory, meta.files, name)
    recorded = recorded_tokenizer_name(Path(directory))
    if recorded is not None and recorded != meta.tokenizer:
        raise UserError(f"{path} says tokenizer {meta.tokenizer!r} but the folder's leviathan_tokenizer.json is "
                        f"{recorded!r}: meta.json was edited or comes from another preparation; restore it, or re-run "
                        f"`leviathan prepare SOURCE --out {directory} --overwrite`")
    for key in ("vocab_size", "eot_id"):
        want, have = getattr(meta, key), getattr(tokenizer, key, None)
        if have is not None and want != have:
            raise UserError(f"{path} says {key} {want!r} but the tokenizer of {str(directory)!r} has {key} {have}: "
                            f"meta.json was edited or comes from another preparation; restore it, or re-run "
                            f"`leviathan prepare SOURCE --out {directory} --overwrite`")


def recorded_tokenizer_name(folder: Path) -> str | None:
    """The name in ``folder``'s leviathan_tokenizer.json (None when there is none or it is unreadable: the tokenizer's
    own reader names that problem)."""
    try:
        name = json_text.loads((Path(folder) / "leviathan_tokenizer.json").read_text(encoding="utf-8")).get("name")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None
