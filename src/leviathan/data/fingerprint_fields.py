"""The fingerprint fields a meta.json, a results row's ``data`` or a grid.json records, checked when read back.

    problem = recorded_problem(meta.get("fingerprint"), meta.get("fingerprint_version"), meta.get("legacy_fingerprint"))

Apart from ``data.fingerprint`` (which computes them and needs the tokenizer) so that ``data.meta`` and the results
side read them without an import circle.
"""

from __future__ import annotations

from typing import Any

FINGERPRINT_VERSION = 2
LEGACY_VERSION = 1  # what a meta.json or results row without ``fingerprint_version`` holds


def recorded_problem(fingerprint: Any, version: Any, legacy: Any,
                     names: tuple[str, str, str] = ("fingerprint", "fingerprint_version", "legacy_fingerprint")
                     ) -> str | None:
    """Why a recorded fingerprint, its version and its version-1 twin (meta.json, a results row's ``data``,
    grid.json; ``names`` as that file calls them) cannot be what ``prepare`` wrote; None when they can. Each
    fingerprint is text (prepare writes a sha256; another text differs from the folder's and is refused there) or
    absent; the version is 1 or 2, or absent (version 1); a version-2
    record holds its fingerprint. Issue 30 round 8: meta.json's fingerprint edited to 42, "zz" or null was recorded
    into new rows beside the old ones, a version 3 was taken as version 1's loose match, and the sweep wrote a
    grid.json the report then refused."""
    for value, name in ((fingerprint, names[0]), (legacy, names[2])):
        if value is not None and not (isinstance(value, str) and value.strip()):
            return f"field {name!r} is {value!r:.40}, expected a digest (text, a sha256 as prepare writes) or null"
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)
                                or not LEGACY_VERSION <= version <= FINGERPRINT_VERSION):
        return f"field {names[1]!r} is {version!r}, expected {LEGACY_VERSION} or {FINGERPRINT_VERSION}"
    if version == FINGERPRINT_VERSION and fingerprint is None:
        return f"field {names[0]!r} is null beside {names[1]!r} {version}, which always records one"
    return None
