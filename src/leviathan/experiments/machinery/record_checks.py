"""The numbers of an embeddings record read back checked: types, ranges, and agreement with each other.

    problem = record_problem(record)     # None, or "final[all].mean_cosine is 7, not a cosine in [-1, 1]"

``embedding_files.read_record`` refuses a record with a problem, naming the file and the field. Before, a record
edited by hand or damaged on disk went into the report as it was (issue 30 round 8: an RMS of -1, a mean cosine of
7, an effective rank of 500 for D = 16, a step past the run's schedule, neighbour ids outside the vocabulary, a
group left out, a count as text, zero buckets: all shown, exit 0). Every bound is one the analysis cannot break:
``embeddings.analyze_tables`` computes each number from a (V, D) table.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

SLACK = 1e-6  # float rounding of a cosine, a share or a rank computed in float64


def record_problem(record) -> str | None:
    """Why ``record`` (an ``EmbeddingRecord``) cannot be one ``leviathan analyze embeddings`` wrote; None if it can."""
    for check in (_header, _groups, _probes):
        problem = check(record)
        if problem is not None:
            return problem
    return None


def written_types_problem(cls: type, raw: Any, where: str = "") -> str | None:
    """Why the parsed JSON ``raw`` does not hold the types ``analyze embeddings`` writes for dataclass ``cls`` (None
    when it does): an integer field holds a JSON integer, a number field a JSON number, a name a JSON string. Checked
    on the JSON as read, because the dataclass is built by ``config.from_dict``, which reads a command line's text
    "300" as the number 300: a record's ``num_ids`` edited to the text "300" was read as 300 without a word (issue 30
    round 8, E4). A leviathan never writes a number as text into a record."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if isinstance(raw, dict) and f.name in raw:
            problem = _value_type_problem(hints[f.name], raw[f.name], f"{where}{f.name}")
            if problem is not None:
                return problem
    return None


def _value_type_problem(tp: Any, value: Any, where: str) -> str | None:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None and len(members) < len(typing.get_args(tp)):
            return None
        tp = members[0] if len(members) == 1 else Any
    if typing.get_origin(tp) is list and isinstance(value, list):
        (item,) = typing.get_args(tp) or (Any,)
        for i, v in enumerate(value):
            label = v.get("group") if isinstance(v, dict) and isinstance(v.get("group"), str) else i
            problem = _value_type_problem(item, v, f"{where}[{label}]")
            if problem is not None:
                return problem
        return None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, dict):
        return written_types_problem(tp, value, where + ".")
    kinds = {int: ((int,), "an integer"), float: ((int, float), "a number"), str: ((str,), "text")}
    if tp in kinds and (isinstance(value, bool) or not isinstance(value, kinds[tp][0])):
        return f"{where} is {value!r} ({_json_kind(value)}), not {kinds[tp][1]}"
    return None


def _json_kind(value: Any) -> str:
    names = {bool: "true/false", int: "an integer", float: "a number", str: "text", list: "a list", dict: "an object",
             type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _count(value: Any, low: int = 0, high: int | None = None) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool) and value >= low
            and (high is None or value <= high))


def _number(value: Any, low: float, high: float | None = None) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value >= low - SLACK and (high is None or value <= high + SLACK))


def _header(r) -> str | None:
    sizes = [("vocab_size", 1), ("hidden_size", 1), ("step", 0), ("total_steps", 0), ("num_buckets", 1),
             ("probes_per_group", 0), ("top_k", 1), ("seed", 0)]
    for name, low in sizes:
        if not _count(getattr(r, name), low):
            return f"{name} is {getattr(r, name)!r}, not an integer >= {low}"
    if r.tokens is not None and not _count(r.tokens):
        return f"tokens is {r.tokens!r}, not an integer >= 0"
    if r.step > r.total_steps:
        return f"step is {r.step}, past the run's {r.total_steps} steps (total_steps)"
    if not _count(r.num_candidates, 0, r.vocab_size):
        return f"num_candidates is {r.num_candidates!r}, not a count of ids in [0, {r.vocab_size}] (vocab_size)"
    if r.bucket_method not in ("mass", "log"):
        return f"bucket_method is {r.bucket_method!r}, not mass or log"
    return None


def _groups(r) -> str | None:
    wanted = {"all", "seen", "unseen", *(f"bucket {i}" for i in range(1, r.num_buckets + 1))}
    for when in ("init", "final"):
        stats = getattr(r, when)
        names = [getattr(g, "group", None) for g in stats]
        if len(set(names)) != len(names) or not {"all", "seen"} <= set(names) or not set(names) <= wanted:
            return (f"{when} holds the groups {names!r}, not all, seen, unseen and bucket 1 .. bucket "
                    f"{r.num_buckets} once each (num_buckets)")
        for g in stats:
            problem = _group(r, g)
            if problem is not None:
                return f"{when}[{g.group}].{problem}"
    if [g.group for g in r.init] != [g.group for g in r.final]:
        return "init and final hold different groups"
    return None


def _group(r, g) -> str | None:
    if not _count(g.num_ids, 0, r.vocab_size):
        return f"num_ids is {g.num_ids!r}, not a count of ids in [0, {r.vocab_size}] (vocab_size)"
    if not (_count(g.min_count) and _count(g.max_count)) or g.min_count > g.max_count:
        return f"min_count / max_count are {g.min_count!r} / {g.max_count!r}, not training counts with min <= max"
    bounds = {"rms": (0.0, None, "a root mean square >= 0"), "shared_share": (0.0, 1.0, "a share in [0, 1]"),
              "effective_rank": (1.0, float(r.hidden_size), f"a rank in [1, {r.hidden_size}] (hidden_size)"),
              "mean_cosine": (-1.0, 1.0, "a cosine in [-1, 1]")}
    for name, (low, high, what) in bounds.items():
        value = getattr(g, name)
        if value is not None and not _number(value, low, high):
            return f"{name} is {value!r}, not {what}"
    return None


def _probes(r) -> str | None:
    groups = {g.group for g in r.final}
    for i, p in enumerate(r.probes):
        if not _count(p.id, 0, r.vocab_size - 1) or not _count(p.count) or p.group not in groups:
            return f"probes[{i}] is id {p.id!r} (count {p.count!r}, group {p.group!r}), not an id of the " \
                   f"vocabulary in one of the record's groups"
        for when in ("init", "final"):
            ids = getattr(p, when)
            if not isinstance(ids, list) or len(ids) > r.top_k or not all(_count(x, 0, r.vocab_size - 1) for x in ids):
                return (f"probes[{i}].{when} is {ids!r:.60}, not at most {r.top_k} (top_k) ids in "
                        f"[0, {r.vocab_size})")
    return None
