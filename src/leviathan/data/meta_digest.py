"""meta.json's digest of its own fields: an edit after prepare wrote it is caught, and the field is named (issue 30
round 14, A25, A26).

    meta["field_digests"] = field_digests(meta)       # prepare, the last thing before meta.json is written
    edited_field(raw)                                  # read_meta: None, or the top-level field that differs

Before, ``splits.val.bytes`` edited to 10x (or a third of) what prepare counted passed every range check (a token is
1 to ~128 bytes of text) and changed eval's bits per byte without a word. No rule on the counts alone can catch that:
only what prepare wrote can. Each top-level field's canonical JSON (sorted keys, no spaces) is hashed (sha256, its
first 16 hex digits: a guard against edits, not against forgery). Older meta.json files (no ``field_digests``) are
read as before; the data fingerprint is not touched (it hashes the text, not meta.json).

A meta.json that prepare wrote with digests but that lost them was read as one of before, so removing the field
switched the check off: ``splits.val.bytes`` edited as well gave a wrong bits per byte, exit 0 (issue 30 round 21,
P512). Nothing else in the file tells the two apart (the width round's folder, prepared an hour before the digests,
has fingerprint_version 2 and every other field: round 19, H214), but its ``created`` time does: a meta.json created
at or after ``DIGESTS_SINCE`` (the commit that added them, c22a60e) without digests lost them. One whose ``created``
was removed or edited as well reads as one of before: a deliberate removal of the guard, not an accident.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

DIGESTS = "field_digests"
DIGESTS_SINCE = datetime.fromisoformat("2026-12-04T23:48:32+00:00")  # every prepare since writes them (c22a60e)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def field_digests(meta: dict) -> dict[str, str]:
    """{field: digest} of every top-level field of ``meta`` but the digests themselves."""
    return {key: _digest(value) for key, value in meta.items() if key != DIGESTS}


def edited_field(raw: dict) -> tuple[str, str] | None:
    """(field, what happened to it) for the first field of ``raw`` that is not what prepare recorded; None when every
    field agrees or ``raw`` records no digests and was created before prepare wrote them (round 14; round 21, P512)."""
    recorded = raw.get(DIGESTS)
    if recorded is None:
        created = _created(raw)
        if created is None or created < DIGESTS_SINCE:
            return None
        return DIGESTS, (f"is missing, but every prepare since {DIGESTS_SINCE:%Y-%m-%d %H:%M} UTC writes it, and this "
                         f"meta.json was created {raw['created']}")
    if not isinstance(recorded, dict) or not all(isinstance(v, str) for v in recorded.values()):
        return DIGESTS, f"is {str(recorded)[:40]!r}, expected the digest of each field as prepare writes it"
    now = field_digests(raw)
    for key in sorted(set(recorded) | set(now)):
        if key not in now:
            return key, "is missing, but prepare wrote it"
        if key not in recorded:  # not "was added": its digest alone may be gone (issue 30 round 29, W705: 'format')
            return key, (f"has no digest in {DIGESTS}, where prepare records one of every field it writes (the "
                         f"digest was removed from {DIGESTS}, or the field added after prepare wrote meta.json)")
        if recorded[key] != now[key]:
            return key, f"is not the value prepare wrote (its digest is {now[key]}, {DIGESTS} records {recorded[key]})"
    return None


def _created(raw: dict) -> datetime | None:
    """When prepare wrote ``raw`` (its ``created`` field, an ISO time with its zone), or None where it records none."""
    created = raw.get("created")
    try:
        when = datetime.fromisoformat(created) if isinstance(created, str) else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None
