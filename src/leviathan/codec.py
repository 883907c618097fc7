"""Dataclass <-> JSON: the one codec of every record this package writes into a file and reads back.

    encode(stat)                       # {"diffs": [...], "n": 3, "mean": -0.2, ...}: one key per field, in order
    decode(PairedComparison, raw)      # the dataclass again, nested records, lists and dicts of them typed
    decode(EvalResult, {"loss": 3.2, "new_key": 1})   # EvalResult(loss=3.2, extra={"new_key": 1})

Results rows, analysis.json, grid.json, metrics.jsonl, a row's provenance and the committed verdict are plain
dataclasses, so no record carries a hand-written codec. Field metadata says where a key is not always in the JSON:
``optional()`` (left out while None), ``inline()`` (a record whose keys are written into the enclosing one's) and
``extra_keys()`` (the keys this version does not know, kept as read and written back last: rewriting loses nothing).

``decode`` is tolerant, for files this package wrote (any earlier version): an unknown key goes into ``extra``, a
missing key takes the field's default (None without one), a null stays None. Values are kept as written (an integer
token count stays an integer), so numbers derived from old files do not change. A key that a record without an
``extra`` field does not know is refused (``ArgumentValueError`` naming the key and the record), as every config
file and override refuses one: ``decode(ModelConfig, {..., "extra": 1})`` dropped it without a word (issue 30 round
27, S532). A reader that means to drop such keys says so, ``unknown=DROP``: a results row's config read as a
``RunConfig`` (a retired key), grid.json's ``SweepGrid``, metrics.jsonl's rows, a row's hardware and the analysis
records. A user's configuration is read by ``config.from_dict`` instead, which checks every key and type and names
the fix.

Footguns: ``encode`` keeps numbers as they are (numpy scalars, inf, nan; ``experiments.machinery.results.json_safe``
makes strict JSON of them) but takes nothing else JSON does not hold (a numpy array, a range, a tuple key: round 29);
a class that defines ``as_dict`` is encoded through it; ``decode`` resolves annotations
with ``typing.get_type_hints``, so a record's field types must be importable names of its module.
"""

from __future__ import annotations

import dataclasses
import numbers
import sys
import types
import typing
from collections.abc import Mapping
from functools import lru_cache
from pathlib import PurePath
from typing import Any

from .errors import ArgumentTypeError, ArgumentValueError

OMIT_NONE = "omit_none"  # field metadata: no key while the value is None
INLINE = "inline"  # field metadata: the value's keys are written in place of the field
EXTRA = "extra"  # field metadata: unknown keys, kept as read
REFUSE, DROP = "refuse", "drop"  # decode's ``unknown``: what becomes of a key a record without ``extra`` does not know


def optional(default: Any = None) -> Any:
    """A field whose key is left out of the JSON while it is None."""
    return dataclasses.field(default=default, metadata={OMIT_NONE: True})


def inline(default: Any = None) -> Any:
    """A record field whose keys the JSON holds in the enclosing record's, at the field's place."""
    return dataclasses.field(default=default, metadata={INLINE: True, OMIT_NONE: True})


def extra_keys() -> Any:
    """The field that keeps the keys a reader does not know (written back after the known ones)."""
    return dataclasses.field(default_factory=dict, repr=False, compare=False, metadata={EXTRA: True})


# ---- encoding -----------------------------------------------------------------------------------
NOT_JSON = (set, frozenset, bytes, bytearray, memoryview, complex)  # no JSON value holds one (json.dumps refuses it)
PLAIN = (str, bool, float, numbers.Integral)  # kept as they are (numpy's ints too; numpy's bool and floats: _numpy)
KEYS = (str, numbers.Integral, float)  # a JSON object's keys: text, and numbers json writes as text (not True, None)


class NotJsonError(ArgumentTypeError):
    """A value no JSON file can hold, found by ``encode`` (issue 30 round 28, U526: ``encode({'a': {1, 2}})``
    returned the set, and the writer given it failed later in json's own words, far from the key). Each container
    on the way out puts its key in front of ``path``, so the one line names the whole key path."""

    def __init__(self, value: Any, key: bool = False) -> None:
        super().__init__()
        self.value, self.path, self.key = value, [], key

    def at(self, key: Any) -> "NotJsonError":
        self.path.insert(0, f"[{key}]" if isinstance(key, int) else f".{key}")
        return self

    def __str__(self) -> str:
        where = "".join(self.path).lstrip(".")
        if self.key:
            at = f" at {where}" if where else ""
            return (f"encode: the object{at} has the key {self.value!r:.40}, a {type(self.value).__name__}, which no "
                    f"JSON object holds as a key (its keys are texts; an int or float is written as one); give a text "
                    f"key there")
        return (f"encode: {where or 'the value'} is a {type(self.value).__name__} ({self.value!r:.40}), which JSON "
                f"cannot hold; give a list, a text or a number there")


def encode(value: Any) -> Any:
    """``value`` with every dataclass in it (at any depth of lists, tuples and dicts) as its JSON object. Only what
    JSON holds is taken: None, text, a bool, a number (numpy's scalars too, kept as they are), a path (as its text),
    lists and tuples (as lists), dicts keyed by text or numbers (numpy's as Python's), records. Anything else (a set,
    bytes, a complex number, a numpy array, a range, an object, a tuple or None key) is a ``NotJsonError`` (an
    ``ArgumentTypeError``) naming its key path: it was returned as it was, and json.dumps failed far from the key
    (round 28 U526; round 29 W248, W250, W251, W253)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        as_dict = getattr(value, "as_dict", None)
        return as_dict() if callable(as_dict) else encode_fields(value)
    if isinstance(value, (list, tuple)):
        return [_encode_at(i, v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {_key(k): _encode_at(k, v) for k, v in value.items()}
    if isinstance(value, PurePath):
        return str(value)
    if value is None or isinstance(value, PLAIN + _numpy()):
        return value
    raise NotJsonError(value)


def _key(key: Any) -> Any:
    """A dict's key as JSON writes it: text, or an int or float (numpy's as Python's, which json.dumps refuses)."""
    if isinstance(key, bool) or not isinstance(key, KEYS + _numpy()[1:]):
        raise NotJsonError(key, key=True)
    if isinstance(key, (str, int, float)):
        return key
    return int(key) if isinstance(key, numbers.Integral) else float(key)


def _numpy() -> tuple[type, ...]:
    """numpy's bool and float scalars when numpy is loaded (its ints are ``numbers.Integral``); not imported here,
    as ``value_rules._bools`` does not: the codec is read by scripts that run before numpy is installed."""
    numpy = sys.modules.get("numpy")
    return (numpy.bool_, numpy.floating) if numpy is not None else ()


def _encode_at(key: Any, value: Any) -> Any:
    """``encode(value)``, a refusal inside it naming ``key`` in its path."""
    try:
        return encode(value)
    except NotJsonError as e:
        raise e.at(key) from None


def encode_fields(record: Any) -> dict:
    """The JSON object of one dataclass: one key per field, in declaration order (``optional``, ``inline``,
    ``extra`` as the module docstring says). What a record's own ``as_dict`` calls."""
    out: dict = {}
    kept: dict = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if EXTRA in f.metadata:
            kept = encode(value)
        elif value is None and OMIT_NONE in f.metadata:
            continue
        elif INLINE in f.metadata:
            out.update(encode(value))
        else:
            out[f.name] = _encode_at(f.name, value)
    out.update(kept)
    return out


# ---- decoding -----------------------------------------------------------------------------------
def decode(tp: Any, value: Any, unknown: str = REFUSE) -> Any:
    """``value`` (parsed JSON) as type ``tp``: dataclasses built field by field (see the module docstring),
    ``list[X]`` and ``dict[str, X]`` element by element, anything else kept as written. A null where a record
    (a non-optional dataclass) belongs is a TypeError, not that record's defaults (``model: null``). ``unknown``:
    ``REFUSE`` (an ``ArgumentValueError`` naming a key a record without ``extra`` does not know) or ``DROP``
    (leave it out: for a file an earlier or later version wrote), at every depth."""
    if unknown not in (REFUSE, DROP):
        raise ArgumentValueError(f"decode: unknown must be {REFUSE!r} or {DROP!r}, got {unknown!r:.40}; pass "
                                 f"unknown={DROP!r} to leave out keys a record does not know")
    if value is None:
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            raise TypeError(f"expected a JSON object for {tp.__name__}, got null")
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(typing.get_args(tp), value, unknown)
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(tp) or (Any,)
        return [decode(item, v, unknown) for v in value]
    if origin is dict and isinstance(value, Mapping):
        _, item = typing.get_args(tp) or (Any, Any)
        return {k: decode(item, v, unknown) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return value if isinstance(value, tp) else _decode_record(tp, value, unknown)
    return value


def _decode_union(members: tuple, value: Any, unknown: str) -> Any:
    kinds = [m for m in members if m is not type(None)]
    if len(kinds) == 1:
        return decode(kinds[0], value, unknown)
    records = [m for m in kinds if isinstance(m, type) and dataclasses.is_dataclass(m)]
    if len(records) == 1 and isinstance(value, Mapping):
        return decode(records[0], value, unknown)
    return value  # e.g. ``dict | str``: kept as written


def _refuse_unknown(cls: type, data: Mapping, known: set[str]) -> None:
    """ArgumentValueError naming the first key of ``data`` that ``cls`` (a record without ``extra``) does not know."""
    import difflib

    strange = [k for k in data if k not in known]
    if strange:
        close = difflib.get_close_matches(str(strange[0]), sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ArgumentValueError(f"decode: unknown key {strange[0]!r:.60} in {cls.__name__}{hint}; remove it, or pass "
                                 f"unknown={DROP!r} to leave out the keys of a record another version wrote")


def _decode_record(cls: type, data: Any, unknown: str = REFUSE) -> Any:
    if not isinstance(data, Mapping):
        raise TypeError(f"expected a JSON object for {cls.__name__}, got {type(data).__name__}")
    hints = _hints(cls)
    kwargs: dict = {}
    known: set[str] = set()
    extra_field = None
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if EXTRA in f.metadata:
            extra_field = f.name
            continue
        if INLINE in f.metadata:
            kwargs[f.name] = decode(hints[f.name], data, DROP)  # the enclosing record's keys are its own
            known.update(_inline_keys(hints[f.name]))
            continue
        known.add(f.name)
        if f.name in data:
            kwargs[f.name] = decode(hints[f.name], data[f.name], unknown)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kwargs[f.name] = None  # a key an older writer left out, in a field without a default
    if extra_field is not None:
        kwargs[extra_field] = {k: v for k, v in data.items() if k not in known}
    elif unknown == REFUSE:
        _refuse_unknown(cls, data, known)
    return cls(**kwargs)


def _inline_keys(tp: Any) -> set[str]:
    kinds = [m for m in (typing.get_args(tp) or (tp,)) if isinstance(m, type) and dataclasses.is_dataclass(m)]
    return {f.name for k in kinds for f in dataclasses.fields(k)}


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)
