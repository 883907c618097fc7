"""The one reader of a folder's digest record (``{"format": F, "files": {name: sha256}}``), as the save record
(``save_record``, leviathan_save.json) and the Trainer checkpoint record (``checkpoint_record``,
leviathan_checkpoint.json) write it with ``io.atomic_write_json``."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError


def read_record(record: Path, format: str, damaged: str, fix: str, nested: bool) -> dict[str, str]:
    """The record's ``files`` (name -> 64 hex digits), or a UserError ``"{damaged} (what is wrong); {fix}"``.
    ``nested``: names may hold '/' (a checkpoint's optimizer_0/ folder), never a leading '/' or a '..' part;
    otherwise a name is one file of the folder itself."""
    from .. import json_text

    try:
        raw = json_text.read_file(record, object_pairs_hook=json_text.no_repeats)
    except (OSError, ValueError) as e:
        raise UserError(f"{damaged} ({e}); {fix}") from None
    files = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(raw, dict) or raw.get("format") != format or not isinstance(files, dict):
        raise UserError(f"{damaged} (not an object with format {format!r} and a files mapping); {fix}")
    for name, digest in files.items():
        parts = name.split("/")
        bad_name = (name.startswith("/") or ".." in parts or "" in parts) if nested else (
            len(parts) > 1 or name in ("", ".", ".."))
        if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) \
                or bad_name:
            raise UserError(f"{damaged} (its entry {name!r:.60}: {digest!r:.70} is no file name with a sha256); {fix}")
    return files
