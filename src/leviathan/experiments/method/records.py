"""Typed numbers of the analyses, and the JSON they are written as: their fields, in order.

    stat = t_interval([-0.21, -0.2, -0.19])     # paired.TInterval, a Record
    stat.mean, stat.verdict                       # what the report's tables and figures read
    stat.as_dict()                                # {"diffs": [...], "n": 3, "mean": -0.2, ...}: what analysis.json holds

Every analysis of a sweep returns dataclasses deriving from ``Record``: the Markdown and the figures read their
attributes; analysis.json, ablations.json and ``leviathan analyze --json`` hold ``as_dict()``, the ``codec``'s JSON
(one key per field in declaration order; ``optional()`` and ``inline()`` fields where a key is not always there). A
record whose JSON depends on more than one field overrides ``as_dict``; ``Record.from_dict`` reads analysis.json
back into the same types, so the demo and the report read attributes, never keys. Footgun: ``as_dict`` keeps
numbers as they are (numpy scalars, inf, nan); ``results.json_safe`` turns them into strict JSON.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ...codec import DROP, decode, encode, encode_fields, inline, optional
from ... import json_text

__all__ = ["Record", "inline", "optional", "plain"]

R = TypeVar("R", bound="Record")


class Record:
    """Base of the analyses' dataclasses: ``as_dict()`` is the JSON of their fields, ``from_dict`` reads it back
    (both ``codec``'s; see the module docstring)."""

    def as_dict(self) -> dict:
        """The record's JSON: one key per field, in order (see ``optional``, ``inline``)."""
        return encode_fields(self)

    @classmethod
    def from_dict(cls: type[R], data: Any) -> R:
        """The record of its JSON (``codec.decode``: nested records typed, unknown keys dropped)."""
        return decode(cls, data, DROP)

    @classmethod
    def read_file(cls: type[R], path, name: str) -> R:
        """The record a JSON file ``name`` holds (``path``: its folder or the file): the one reader of a record file.
        A missing, unreadable or foreign file is an OSError / ValueError for the caller to judge."""
        import json
        from pathlib import Path

        path = Path(path)
        raw = json_text.read_file(path / name if path.is_dir() else path, object_pairs_hook=json_text.no_repeats)
        if not isinstance(raw, dict):
            raise ValueError(f"{path} is not an {name} object")
        try:
            return cls.from_dict(raw)
        except TypeError as e:
            raise ValueError(f"{path} is not an {name} leviathan wrote ({e})") from None


def plain(value: Any) -> Any:
    """``value`` with every record in it (at any depth of lists, tuples and dicts) as its ``as_dict()``."""
    return encode(value)
