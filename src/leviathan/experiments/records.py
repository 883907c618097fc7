"""Typed numbers of the analyses, and the JSON they are written as: their fields, in order.

    stat = t_interval([-0.21, -0.2, -0.19])     # paired.TInterval, a Record
    stat.mean, stat.verdict                       # what the report's tables and figures read
    stat.as_dict()                                # {"diffs": [...], "n": 3, "mean": -0.2, ...}: what analysis.json holds

Every analysis of a sweep (``paired``, ``efficiency``, ``frequency``, ``scaling``, the sections of ``report`` and
``ablation``) returns dataclasses deriving from ``Record``. The Markdown and the figures read their attributes;
analysis.json, ablations.json and ``leviathan analyze --json`` hold ``as_dict()``: one key per field in the
order the fields are declared, nested records (also inside lists and dicts) as objects.

Where a key is not always in the JSON, the field says so:

- ``optional()``: the key is left out while the field is None (a comparison's ``error``, present only when
  its curves could not be read);
- ``inline()``: a record whose keys are written into this one's at the field's place (left out while None).

A record whose JSON depends on more than one field overrides ``as_dict``. Footgun: ``as_dict`` keeps numbers
as they are (numpy scalars, inf, nan); ``results.json_safe`` turns them into strict JSON.
"""

from __future__ import annotations

import dataclasses
from typing import Any

OMIT_NONE = "omit_none"  # field metadata: no key while the value is None
INLINE = "inline"  # field metadata: the value's keys are written in place of the field


def optional(default: Any = None) -> Any:
    """A field whose key is left out of ``as_dict`` while it is None."""
    return dataclasses.field(default=default, metadata={OMIT_NONE: True})


def inline(default: Any = None) -> Any:
    """A record field whose keys ``as_dict`` writes into the enclosing record's, at the field's place."""
    return dataclasses.field(default=default, metadata={INLINE: True, OMIT_NONE: True})


class Record:
    """Base of the analyses' dataclasses: ``as_dict()`` is the JSON of their fields (see the module docstring)."""

    def as_dict(self) -> dict:
        """The record's JSON: one key per field, in order (see ``optional``, ``inline``)."""
        out: dict = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None and OMIT_NONE in f.metadata:
                continue
            if INLINE in f.metadata:
                out.update(plain(value))
            else:
                out[f.name] = plain(value)
        return out


def plain(value: Any) -> Any:
    """``value`` with every record in it (at any depth of lists, tuples and dicts) as its ``as_dict()``."""
    if isinstance(value, Record):
        return value.as_dict()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value
