"""The fields of a results row that this version does not know, named by its readers, never read without a word.

    note = unknown_field_note("s1/results.jsonl", [("line 2", row)])   # None where every field is known

A row is a typed record (``results.ResultRow`` and its parts); a key none of them has is kept in the record's
``extra`` and written back as read, so rows of a later leviathan survive a copy. But nothing reads it: a misspelt or
foreign field ("extra_key": {"x": 1}, ``final_val_los``) was copied by collect_results.py and taken by report and
analyze without a word, exit 0, while a NaN, a wrong run_dir or an edited loss are refused (issue 30 round 25, X43).
Each reader now prints one note per file naming the rows and the fields; the rows are kept, as a later version's
would be.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ...codec import EXTRA

SHOWN = 5  # rows named in the note; the rest counted


def unknown_fields(record: Any, prefix: str = "") -> list[str]:
    """Dotted names of the keys ``record`` (a decoded dataclass) and its nested records keep as unknown."""
    out: list[str] = []
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.metadata.get(EXTRA):
            out += [f"{prefix}{key}" for key in value]
            continue
        for key, item in value.items() if isinstance(value, dict) else [(None, value)]:
            if dataclasses.is_dataclass(item) and not isinstance(item, type):
                out += unknown_fields(item, f"{prefix}{f.name}." + ("" if key is None else f"{key}."))
    return out


def unknown_field_note(path: str | os.PathLike, rows: list[tuple[str, Any]]) -> str | None:
    """The note for the rows of ``path`` (``(where, row)``, where as "line N") that hold unknown fields, or None."""
    found = [(where, row.name, fields) for where, row in rows if (fields := unknown_fields(row))]
    if not found:
        return None
    shown = "; ".join(f"{where} (run {name!r}): {', '.join(repr(f) for f in fields)}" for where, name, fields in
                      found[:SHOWN]) + (f"; and {len(found) - SHOWN} more rows" if len(found) > SHOWN else "")
    return (f"note: {str(path)!r} has rows with fields no reader of this version knows ({shown}): kept as written but "
            f"read by nothing; if one is misspelt or does not belong, correct or delete it (a later leviathan's field "
            f"is read by that version)")
