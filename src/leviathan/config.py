"""Typed configuration: dataclasses on the inside, YAML on disk, dotted overrides on the command line.

This module turns plain dictionaries (YAML, JSON, ``key.sub=value`` overrides) into the package's config
dataclasses and back, and rejects bad input with one message naming the key, the problem and the fix
(``codec.decode`` is the tolerant reading of files the package wrote itself):

    >>> from_dict(ModelConfig, {"hiden_size": 64})
    ConfigError: unknown key 'hiden_size' in ModelConfig; did you mean 'hidden_size'?

Footguns handled here: YAML reads ``1e-3`` as a string (converted when the field is a number); ``bool`` is an
``int`` in Python (``hidden_size: true`` is rejected, not read as 1); ``Optional[int]`` accepts ``null``/``none``.
A number in quotes (``lr: "0.5"``, the override ``'optim.lr="0.5"'``) is text and refused by number and switch
fields (``strict_yaml.QuotedText``, round 16 C135); a shell drops unescaped quotes, so ``optim.lr="0.5"`` typed
plainly arrives as ``optim.lr=0.5``, a number. A whole number written as a float (``max_steps: 2.0``) is the integer.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
import math
import numbers
import os
import types
import typing
import warnings
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence, TypeVar, get_args, get_origin

import yaml

from .codec import NotJsonError, encode
from .errors import ArgumentTypeError, ConfigError, UserError, missing
from .float_text import FLOAT_SIZES, float_lost
from .data.binary import not_text_fix, other_encoding
from .settings_kind import not_settings
from .strict_yaml import (AliasLoopError, AmbiguousNumberError, DuplicateKeyError, QuotedText, TooDeepError,
                          TooManyValuesError, load_strict, parse as parse_yaml)

T = TypeVar("T")


# --------------------------------------------------------------------------------------------
# dict -> dataclass


def _type_name(tp: Any) -> str:
    if get_origin(tp) is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    return getattr(tp, "__name__", str(tp).replace("typing.", ""))


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """Convert ``value`` to type ``tp`` or raise ConfigError naming ``where``."""
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        return _coerce_union(value, tp, where)
    if origin is Literal:
        return _coerce_literal(value, tp, where)
    if origin in (list, tuple, Sequence) or tp in (list, tuple):
        return _coerce_list(value, tp, where)
    if origin in (dict, Mapping) or tp is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return dict(value)
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a section of keys for {tp.__name__}, got {value!r}")
        return from_dict(tp, value, prefix=where + ".")
    if tp in _SCALARS:
        return _SCALARS[tp](value, where)
    return value


def _coerce_union(value: Any, tp: Any, where: str) -> Any:
    """``Optional[X]`` / ``X | Y``: None (also "none"/"null") when allowed, else the first member that accepts it."""
    args = get_args(tp)
    if value is None or (isinstance(value, str) and not isinstance(value, QuotedText)
                         and value.lower() in ("none", "null")):
        if type(None) in args:
            return None
    errors = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _coerce(value, arg, where)
        except ConfigError as e:
            errors.append(str(e))
    raise ConfigError(errors[0] if errors else f"{where}: got {value!r}, expected {_type_name(tp)}")


def _coerce_literal(value: Any, tp: Any, where: str) -> Any:
    choices = get_args(tp)
    if value in choices:
        return value
    hint = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
    extra = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ConfigError(f"{where}: {value!r} is not one of {', '.join(map(repr, choices))}{extra}")


def _coerce_list(value: Any, tp: Any, where: str) -> list | tuple:
    """A list (or tuple) of the item type; a string is split at commas (``a,b`` on the command line)."""
    origin = get_origin(tp)
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()] if value else []
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where}: expected a list, got {value!r}")
    (item_tp,) = get_args(tp)[:1] or (Any,)
    out = [_coerce(v, item_tp, f"{where}[{i}]") for i, v in enumerate(value)]
    return tuple(out) if (origin is tuple or tp is tuple) else out


def refuse_quoted(value: Any, where: str, kind: str) -> None:
    """ConfigError for text the YAML quoted (``strict_yaml.QuotedText``) given to a number or switch setting: a quoted
    number is text, and was converted without a word (issue 30 round 16, C135: ``optim: {lr: "0.5"}``,
    ``max_steps: "3"``, the override ``'optim.lr="0.5"'``). One rule for files, grids and overrides: a number or a
    switch is written bare; text is what quotes make."""
    if isinstance(value, QuotedText):
        raise ConfigError(f"{where}: {str(value)!r} is in quotes{value.where()}, which makes it text, not {kind}; "
                          f"remove the quotes (write {value} bare)")


def _coerce_bool(value: Any, where: str) -> bool:
    from .value_rules import switch_problem

    refuse_quoted(value, where, "true or false")
    if switch_problem(value) is None:  # numpy's bool too, as numpy's ints are integers below: a dict's np.True_ was
        return bool(value)  # "expected true or false, got np.True_" (issue 30 round 28, U19's kind)
    if isinstance(value, str) and value.lower() in ("true", "yes", "1", "on", "false", "no", "0", "off"):
        return value.lower() in ("true", "yes", "1", "on")
    raise ConfigError(f"{where}: expected true or false, got {value!r}")


_INT64 = 2**63


def _coerce_int(value: Any, where: str) -> int:
    refuse_quoted(value, where, "an integer")
    if isinstance(value, bool):  # bool is an int subclass: ``hidden_size: true`` is a mistake, not 1
        raise ConfigError(f"{where}: expected an integer, got {value!r}")
    if isinstance(value, numbers.Integral):  # numpy integers too (round 9, P2)
        return _fits(int(value), where)
    if isinstance(value, float) and value.is_integer():
        return _fits(int(value), where)
    if isinstance(value, str):
        try:
            f = float(value.replace("_", ""))
        except ValueError:
            f = None
        if f is not None and f.is_integer():
            return _fits(int(f), where)
    raise ConfigError(f"{where}: expected an integer, got {value!r}")


def _fits(value: int, where: str) -> int:
    """``value`` if numpy and torch can hold it (64 bits): ``max_steps: 1000000000000000000000000000000`` trained
    toward a step no run reaches, without a word (issue 30 round 6), where 1e400 was refused."""
    if not -_INT64 <= value < _INT64:
        raise ConfigError(f"{where}: {value} does not fit in 64 bits (integers of a config lie in [-2^63, 2^63)); "
                          f"write the number meant")
    return value


def _coerce_float(value: Any, where: str) -> float:
    refuse_quoted(value, where, "a number")
    if isinstance(value, bool):
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, numbers.Real):  # numpy's numbers too (round 9)
        return _finite(float(value), where)
    if isinstance(value, str):  # YAML reads 1e-3 as a string
        try:
            number = float(value)
        except ValueError:
            number = None
        if (lost := float_lost(value, number)) is not None:  # 1e-400 was "must be positive, got 0.0" (round 26, P30)
            raise ConfigError(f"{where}: {value!r} {lost}; {FLOAT_SIZES}")
        if number is not None:
            return _finite(number, where)
    raise ConfigError(f"{where}: expected a number, got {value!r}")


def _coerce_str(value: Any, where: str) -> str:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    raise ConfigError(f"{where}: expected a string, got {value!r}")


_SCALARS = {bool: _coerce_bool, int: _coerce_int, float: _coerce_float, str: _coerce_str}


def from_dict(cls: type[T], data: Mapping[str, Any], prefix: str = "") -> T:
    """Build dataclass ``cls`` from ``data``, checking every key and type.

    Unknown keys raise ConfigError with the closest valid name, except the keys ``cls.RETIRED_KEYS``
    lists (fields older versions had): those are dropped with a ``UserWarning`` so old files still
    load. The dataclass's own ``__post_init__`` runs last and validates values.
    """
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{prefix.rstrip('.') or cls.__name__}: expected a mapping of keys, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls)
    retired = getattr(cls, "RETIRED_KEYS", {})
    kwargs = {}
    for key, value in data.items():
        if key not in fields and key in retired:
            warn_retired(f"{prefix}{key}", retired[key])
            continue
        if key not in fields and isinstance(key, str) and "." in key and key.split(".", 1)[0] in fields:
            head, rest = key.split(".", 1)  # round 15 (B199): the dotted key was "unknown", with no word of nesting
            raise ConfigError(f"key '{prefix}{key}': a dotted key is for an override on the command line (or a grid's "
                              f"run: mapping), not a file's key; nest it in the file: {head}: {{{rest}: ...}}")
        if key not in fields:
            hint = difflib.get_close_matches(str(key), list(fields), n=1, cutoff=0.6)  # `1: 2`: a TypeError (round 6)
            extra = f"; did you mean '{prefix}{hint[0]}'?" if hint else f"; valid keys: {', '.join(sorted(fields))}"
            raise ConfigError(f"unknown key '{prefix}{key}' in {cls.__name__}{extra}")
        if value is None:
            _refuse_null(fields[key], hints[key], f"{prefix}{key}")
        kwargs[key] = _coerce(value, hints[key], f"{prefix}{key}")
    try:
        return cls(**kwargs)
    except ConfigError as e:
        if prefix and not str(e).startswith(prefix):
            raise ConfigError(f"{prefix}{e}") from None
        raise


def _refuse_null(f: dataclasses.Field, tp: Any, where: str) -> None:
    """ConfigError for null (``~``, an empty value) given to a setting that has a default and no null: ``device: ~``
    was "device: expected a string, got None", with no value to write and no word that deleting the key gives the
    default (issue 30 round 17, E11)."""
    if f.default is dataclasses.MISSING or not (tp in _SCALARS or get_origin(tp) is Literal) or None in get_args(tp):
        return  # a section (null: its defaults) or a setting that takes null: ``_coerce`` decides
    choices = f" (one of {', '.join(map(str, get_args(tp)))})" if get_origin(tp) is Literal else ""
    raise ConfigError(f"{where}: null (~, or nothing after the colon) is not a value of it; write a value{choices}, "
                      f"or delete the key to take its default ({f.default})")


def warn_retired(key: str, reason: str) -> None:
    """The warning for a key an older version wrote and this one ignores."""
    warnings.warn(f"ignoring '{key}' (written by an older leviathan): {reason}; it can be deleted from the file",
                  UserWarning, stacklevel=3)


def to_dict(obj: Any) -> Any:
    """Dataclass (nested) -> plain dict of YAML-safe values (``codec.encode``: a config has no optional or inline
    fields, so every field is a key)."""
    return encode(obj)


# --------------------------------------------------------------------------------------------
# overrides and files


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"model.hidden_size=256"`` -> (["model", "hidden_size"], 256). Values are parsed as YAML; an override that
    is not a text is a ConfigError (``parse_override(5)`` was "argument of type 'int' is not iterable", round 22)."""
    if not isinstance(text, str):
        raise ConfigError(f"override {text!r:.60} ({type(text).__name__}) is not a 'key=value' text; write it as "
                          f"one, e.g. 'max_steps=100'")
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key=value (for example model.hidden_size=256)")
    key, raw = text.split("=", 1)
    key = key.strip().lstrip("-")
    if not key:
        raise ConfigError(f"override {text!r} has an empty key; write key=value")
    if "" in key.split("."):  # `optim..lr=1` was "unknown key 'optim.'", `lr.=1` "expected a number, got {'': 1}"
        raise ConfigError(f"override {text!r}: its key {key!r} has an empty part (two dots in a row, or a dot at "
                          f"an end); write the key's parts with one dot between them (for example optim.lr=1e-3)")
    try:
        value = parse_yaml(raw) if raw.strip() else ""
    except DuplicateKeyError as e:
        raise ConfigError(f"override {text!r}: key {e.key!r} is given twice{e.how} in its value; keep one") from None
    except AmbiguousNumberError as e:
        raise ConfigError(f"override {text!r}: {e.advice()}") from None
    except TooDeepError as e:
        raise ConfigError(f"override {text[:40]!r}...: {e}; write it flatter") from None
    except TooManyValuesError as e:  # round 28, T36's kind in an override
        raise ConfigError(f"override {text[:40]!r}...: {e}; write the values out or alias less") from None
    except AliasLoopError as e:  # round 30, X114's kind in an override: was named as depth
        raise ConfigError(f"override {text[:40]!r}...: {e}; write the value out") from None
    except yaml.YAMLError as e:
        _refuse_broken_collection(text, key, raw, e)
        value = raw  # '@x', 'a: b: c': YAML has no reading of it, so it is the text the user typed
    if isinstance(value, QuotedText):  # 'optim.lr="0.5"' (the shell keeps quotes only escaped): text, as in a file
        value = QuotedText(value)  # (C135); its "line 1" is no line of any file
    return key.split("."), value


def _refuse_broken_collection(text: str, key: str, raw: str, error: yaml.YAMLError) -> None:
    """ConfigError when an override's value opens a YAML list or mapping ('[' or '{') that does not parse: a missing
    bracket (``a=[1, 2``) was taken as the text '[1, 2' without a word (round 28, U504), which a str setting keeps and
    a list setting then refuses for its type, far from the typo. Text that starts so is written quoted (``a="[x"``)."""
    value = raw.strip()
    if not value.startswith(("[", "{")):
        return
    kind, closed = ("list", "[1, 2]") if value.startswith("[") else ("mapping", "{a: 1}")
    problem = getattr(error, "problem", None) or "not valid YAML"
    raise ConfigError(f"override {text[:60]!r}: its value {value[:40]!r} opens a YAML {kind} that does not parse "
                      f"({problem}); close it (e.g. {key}={closed}), or quote the value if it is text "
                      f"({key}=\"{value[:20]}\")")


def check_repeated_overrides(overrides: Sequence[str], prefix: str = "", where: str = "on the command line") -> None:
    """ConfigError when the user's overrides set one key twice (``sweep ... optim.lr=1 optim.lr=0.01``): only one
    value can hold, and which one was meant is the user's call (issue 30). Lists that layer overrides on purpose (a
    grid's base with the command line's, then a size's, then a variant's; the ``train`` lines ``sweep --commands``
    prints) go through ``apply_overrides`` without this check: the last value wins; a command-line key that a size or
    variant layer sets too is refused by the grid (``grid._check_command_line_reaches``). ``prefix`` is the section a
    key without it belongs to (``params``: ``hidden_size`` is ``model.hidden_size``); ``where`` names the place in the
    message (a grid's section flattened to overrides: ``optim.lr: 0.01`` beside ``optim: {lr: 0.02}``, issue 30 round
    7)."""
    seen: list[tuple[str, str]] = []  # (key, override) in order: one key may come twice, as two disjoint mappings
    for text in overrides:
        if "=" not in text:
            continue  # parse_override names the problem
        key = override_key(text)
        key = key if not prefix or key.startswith(prefix) or key == prefix.rstrip(".") else prefix + key
        # two mappings of one section merge key by key too (round 28, T74): 'data={path: d1}' 'data={seq_len: 64}'
        # were refused as "given twice ... keep one", which dropped a setting (issue 30 round 29, V22)
        same = next((t for k, t in seen if k == key and _collide(t, text, prefix)), None)
        if same is not None:
            raise ConfigError(f"{key} is given twice {where} ({same!r} and {text!r}), and only one value can "
                              f"hold; keep one")
        # a section and a key inside it (`optim.lr=1 optim={lr: 2}`): the later one replaced the earlier without a
        # word (issue 30 round 7); a mapping is merged key by key (round 28, T74), so only the keys it holds collide
        inside = next(((k, t) for k, t in seen if k != key and keys_overlap(k, key) and _collide(t, text, prefix)),
                      None)
        if inside is not None:
            outer, inner = (key, inside[0]) if inside[0].startswith(key + ".") else (inside[0], key)
            raise ConfigError(f"{inner} is set twice {where}: by {inside[1]!r} and by {text!r} (which "
                              f"{'sets' if outer == key else 'is inside'} the section {outer}), and only one "
                              f"value can hold; keep one")
        seen.append((key, text))


def override_leaves(text: str) -> list[str]:
    """The dotted keys an override sets: its key, or for a mapping each key it holds (``'optim={lr: 1}'`` sets
    ``optim.lr`` alone, since ``apply_overrides`` merges it; an empty mapping sets nothing). An override that does not
    parse is its key (``parse_override`` names the problem)."""
    try:
        path, value = parse_override(text)
    except ConfigError:
        return [override_key(text)]

    def leaves(prefix: str, item: Any) -> list[str]:
        if not isinstance(item, dict):
            return [prefix]
        return [leaf for key, sub in item.items() for leaf in leaves(f"{prefix}.{key}", sub)]

    return leaves(".".join(path), value)


def _collide(a: str, b: str, prefix: str) -> bool:
    """Whether the overrides ``a`` and ``b`` set one setting (a key both set, or a value over a section the other
    sets keys in); ``prefix`` as ``check_repeated_overrides`` takes it."""
    def keys(text: str) -> list[str]:
        return [k if not prefix or k.startswith(prefix) or k == prefix.rstrip(".") else prefix + k
                for k in override_leaves(text)]

    return any(keys_overlap(x, y) for x in keys(a) for y in keys(b))


def override_key(text: str) -> str:
    """The dotted key of a 'key=value' override (the text itself when it has no '=': parse_override names that)."""
    return text.split("=", 1)[0].strip().lstrip("-")


def keys_overlap(a: str, b: str) -> bool:
    """Whether the dotted keys ``a`` and ``b`` reach one setting: the same key, or a section and a key inside it
    (``optim`` and ``optim.lr``; not ``optim`` and ``optimizer``). The test of every rule that one value must not be
    set twice (``check_repeated_overrides``, the grid's ``_check_not_grid_owned`` and ``_check_command_line_reaches``)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def layered_overrides(overrides: Sequence[str]) -> list[str]:
    """``overrides`` applied in order (a grid's base, a size's, a variant's, the run's own) as one list with each key
    once: an override whose key is set again later, or that lies inside a section set later, is dropped, which is
    what applying them in order did. The ``train`` lines ``sweep --commands`` prints are this list, since ``train``
    refuses a key given twice (issue 30 round 18, G186). A later key inside an earlier whole-section override
    (``optim={lr: 1}`` then ``optim.lr=2``) cannot be merged by dropping one; both stay. A mapping is merged
    (``apply_overrides``): an earlier override is dropped only when later ones set every key it sets."""
    leaves = [override_leaves(text) for text in overrides]  # a mapping merges (round 28, T74): its keys alone
    kept = []
    for i, text in enumerate(overrides):
        later = {leaf for after in leaves[i + 1:] for leaf in after}
        if not leaves[i] or not all(any(leaf == k or leaf.startswith(k + ".") for k in later) for leaf in leaves[i]):
            kept.append(text)
    return kept


def override_list(overrides) -> list[str]:
    """``overrides`` as a list of 'key=value' strings (None: none), or a TypeError saying it must be one: a dict was
    read as its keys ("override 'max_steps' must look like key=value", round 8) and a string as its letters ("override
    'm' ...": ``load_run_config`` since round 8, ``load_grid`` until round 17, E62)."""
    overrides = () if overrides is None else overrides  # None: no overrides (was "'NoneType' object is not iterable")
    listed = list(overrides) if isinstance(overrides, Iterable) else None
    if isinstance(overrides, (str, bytes, Mapping)) or listed is None or not all(isinstance(o, str) for o in listed):
        raise ArgumentTypeError(f"overrides must be a list of 'key=value' strings, e.g. ['max_steps=100'], got "
                        f"{type(overrides).__name__} {overrides!r:.60}")
    return listed


def apply_overrides(data: dict, overrides: Sequence[str]) -> dict:
    """Apply ``a.b=c`` overrides to a nested dict (in place) and return it. ``overrides`` is a list
    (``override_list``): a text was read letter by letter, "override 'm' must look like key=value" (round 22).

    A mapping given for a section (``'data={path: d1}'``) is merged into it, key by key, as the dotted overrides
    ``data.path=d1`` would set it: it replaced the section, so tiny's ``data.seq_len`` 128 fell back to the code's
    512 and the refusal named ``data.seq_len=512``, a value the user never gave (issue 30 round 28, T74)."""
    if not isinstance(data, dict):
        raise ConfigError(f"apply_overrides: data must be a dict of settings, got {type(data).__name__}; pass the "
                          f"settings read from a config (load_yaml)")
    for text in override_list(overrides):
        path, value = parse_override(text)
        node = data
        for part in path[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):  # round 10 (Q35b): the value, and where it came from, were not named
                raise ConfigError(f"override {text!r}: '{part}' is the value {child!r:.60}, set by the config file or "
                                  f"an earlier override, not a section of keys; make it a section there, or drop this "
                                  f"override")
            node = child
        node[path[-1]] = _merged(node.get(path[-1]), value)
    return data


def _merged(section: Any, value: Any) -> Any:
    """``value`` set over ``section``: a mapping over a mapping key by key (a copy: the override's own dict is not
    changed), anything else replacing it."""
    if not isinstance(section, dict) or not isinstance(value, dict):
        return value
    return {**section, **{key: _merged(section.get(key), item) for key, item in value.items()}}


def load_yaml(path: str | os.PathLike) -> dict:
    """Read a YAML mapping; a missing or malformed file, or a key given twice (``strict_yaml``), is a ConfigError
    that names it (and the line); a ``path`` that is not one is a UserError naming it (``load_yaml(None)`` was
    os.fspath's TypeError, round 22)."""
    from .value_rules import check_read_path

    check_read_path("load_yaml", "path", path, "pass the path of a YAML file")
    path = Path(path)
    if path.is_dir():  # it was "does not exist" (issue 30 round 29, W275): a run folder given for its config.yaml
        inside = path / "config.yaml"
        fix = (f"pass the file in it, {str(inside)!r}" if inside.is_file() else
               "pass the path of a YAML file (a run folder's config.yaml, a grid file)")
        raise ConfigError(f"config file {str(path)!r} is a folder, not a YAML file; {fix}")
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} {missing(path)}; pass the path of a YAML file")
    data = path.read_bytes()
    if (encoding := other_encoding(data)) is not None:  # "pass a YAML file" for YAML in UTF-16 (round 35, AH34, AH35)
        raise ConfigError(f"config file {str(path)!r} is {encoding}, and settings are read as UTF-8; "
                          f"{not_text_fix(encoding)}")
    other = not_settings(data)  # a results.jsonl, a checkpoint's weights, ... (issue 30 round 9, M116)
    if other is not None:
        raise ConfigError(f"config file {str(path)!r} {other}, not YAML settings; pass a YAML file of settings "
                          f"(for train a run config, such as `--config tiny` or a run folder's config.yaml; for sweep "
                          f"a grid file)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"config file {str(path)!r} is not UTF-8 text ({e.reason} at byte {e.start}); pass a YAML "
                          f"file") from None
    data = load_strict(text, f"config file {str(path)!r}")
    if data is None:  # read as the defaults before (issue 30 round 5): an empty or truncated file said nothing
        raise ConfigError(f"config file {str(path)!r} is empty (it holds no settings, only blank lines or comments); "
                          f"write its settings, or leave the file out")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} holds a {type(data).__name__} at the top level, not settings; "
                          f"write one `key: value` line per setting (for example max_steps: 1000)")
    return data


def dump_yaml(obj: Any, path: str | os.PathLike | None = None) -> str:
    """``obj`` (a config dataclass) as YAML text; written to ``path`` too when given, only where nothing or a config
    it wrote stands, atomically (``config_target.write_config``: a user's file or an export's config.json was written
    over, no word, issue 30 round 22, S281-S284). Anything but a dataclass or a dict of plain values is an
    ArgumentTypeError before a file is touched: ``object()`` was yaml's raw RepresenterError (round 24, W445); a NaN
    or infinity an ArgumentValueError naming where it lies (``_refuse_non_finite``, round 26, Q642)."""
    import dataclasses

    from .errors import ArgumentTypeError

    fix = "pass a config dataclass (RunConfig, ModelConfig, ...) or a dict of plain values"
    if not (dataclasses.is_dataclass(obj) and not isinstance(obj, type)) and not isinstance(obj, dict):
        raise ArgumentTypeError(f"dump_yaml: obj: expected a config, got {type(obj).__name__} {obj!r:.60}; {fix}")
    try:
        data = to_dict(obj)
    except NotJsonError as e:  # codec's own line said "encode: ... which JSON cannot hold" to a YAML call (round 29)
        where = "".join(e.path).lstrip(".")
        what = "the key" if e.key else "the value"
        raise ArgumentTypeError(f"dump_yaml: obj holds {type(e.value).__name__} {e.value!r:.60} ({what}"
                                f"{' at ' + where if where else ''}), which YAML settings cannot hold; {fix}") from None
    _refuse_non_finite(data, path)
    try:
        text = yaml.safe_dump(data, sort_keys=False)
    except yaml.representer.RepresenterError as e:
        value = e.args[1] if len(e.args) > 1 else None
        raise ArgumentTypeError(f"dump_yaml: obj holds {type(value).__name__} {value!r:.60}, which YAML settings "
                                f"cannot hold; {fix}") from None
    if path is not None:
        from .config_target import write_config

        write_config(path, data, text)
    return text


def _refuse_non_finite(data: Any, path: str | os.PathLike | None) -> None:
    """``ArgumentValueError`` naming where in ``data`` (``dump_yaml``'s) a NaN or infinity lies: yaml wrote '.nan' and
    '.inf', which every settings reader refuses (``_finite``: "nan and inf are not settings"), so ``dump_yaml`` wrote
    a text its own readers cannot take back (issue 30 round 26, Q642; ``io.atomic_write_json`` refuses them too)."""
    from .errors import ArgumentValueError
    from .io import _non_finite

    where = _non_finite(data, "obj")
    if where is not None:
        written = "" if path is None else f"; nothing was written to {str(path)!r}"
        raise ArgumentValueError(f"dump_yaml: {where[0]} is {where[1]!r}, which is not a setting (nan and inf are "
                                 f"not settings, and no settings reader takes them back){written}; write a finite "
                                 f"number, or None (null) to disable what can be disabled")


def _finite(value: float, where: str) -> float:
    """``value`` unless it is nan or inf, which parse as numbers but no setting means (issue 22)."""
    if not math.isfinite(value):
        raise ConfigError(f"{where}: expected a finite number, got {value!r}; nan and inf are not settings (null "
                          f"disables what can be disabled)")
    return value


# Set while a saved config is read back (a checkpoint's config.yaml): a setting's sensible range (``require_range``)
# is for what a run is started with; a run trained before the ranges (round 15) stays readable.
SAVED_CONFIG: contextvars.ContextVar[bool] = contextvars.ContextVar("SAVED_CONFIG", default=False)


@contextlib.contextmanager
def reading_saved_config():
    token = SAVED_CONFIG.set(True)
    try:
        yield
    finally:
        SAVED_CONFIG.reset(token)


def require_range(condition: bool, message: str) -> None:
    """``require``, except for a saved config being read back (``SAVED_CONFIG``): the sensible ranges of float
    settings (issue 30 round 15, A169-A181) refused to read a run trained before them."""
    if not SAVED_CONFIG.get():
        require(condition, message)


def require(condition: bool, message: str) -> None:
    """Raise ConfigError(message) unless ``condition``; used by __post_init__ validators."""
    if not condition:
        raise ConfigError(message)
