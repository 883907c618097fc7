"""meta.json's digest of its own fields: an edit after prepare wrote it is caught, and the field is named (issue 30
round 14, A25, A26).

    meta["field_digests"] = field_digests(meta)       # prepare, the last thing before meta.json is written
    edited_field(raw)                                  # read_meta: None, or the top-level field that differs

Before, ``splits.val.bytes`` edited to 10x (or a third of) what prepare counted passed every range check (a token is
1 to ~128 bytes of text) and changed eval's bits per byte without a word. No rule on the counts alone can catch that:
only what prepare wrote can. Each top-level field's canonical JSON (sorted keys, no spaces) is hashed (sha256, its
first 16 hex digits: a guard against edits, not against forgery). Older meta.json files (no ``field_digests``) are
read as before; the data fingerprint is not touched (it hashes the text, not meta.json).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

DIGESTS = "field_digests"


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def field_digests(meta: dict) -> dict[str, str]:
    """{field: digest} of every top-level field of ``meta`` but the digests themselves."""
    return {key: _digest(value) for key, value in meta.items() if key != DIGESTS}


def edited_field(raw: dict) -> tuple[str, str] | None:
    """(field, what happened to it) for the first field of ``raw`` that is not what prepare recorded; None when every
    field agrees or ``raw`` records no digests (a folder prepared before round 14)."""
    recorded = raw.get(DIGESTS)
    if recorded is None:
        return None
    if not isinstance(recorded, dict) or not all(isinstance(v, str) for v in recorded.values()):
        return DIGESTS, f"is {str(recorded)[:40]!r}, expected the digest of each field as prepare writes it"
    now = field_digests(raw)
    for key in sorted(set(recorded) | set(now)):
        if key not in now:
            return key, "is missing, but prepare wrote it"
        if key not in recorded:
            return key, "was added after prepare wrote meta.json"
        if recorded[key] != now[key]:
            return key, f"is not the value prepare wrote (its digest is {now[key]}, {DIGESTS} records {recorded[key]})"
    return None
