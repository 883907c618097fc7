"""Whether a line of a results file holds the provenance the sweep writes as one piece.

    provenance_problem(d)   # why the line's config / code / data are not what the sweep writes together (None: fine)

The sweep writes a row's ``config``, ``code`` and ``data`` together (``provenance.RunProvenance.row_fields``, since
provenance came in): ``code`` an object, ``data`` an object that always names its folder (``data.dir``), ``config``
the run folder's config.yaml (``null`` only when that file could not be read). A row is held to this when it records
its ``code``: rows written before provenance carry no code (a ``config`` alone, or nothing), and rows built by hand
or in Python may record ``data`` alone; they read as before. Footgun: so a row whose code was removed beside its data
reads as such a row.

A row whose data object was removed or emptied was reported without a word (issue 30 round 30, X75). Round 31 found
the rest of the kind: a row whose ``config`` was removed or set to {} beside its code and data was read as a row
"written before rows carried one", so the sweep skipped its drift check and rewrote grid.json with a learning rate
its runs never trained with (Z76), and report, analyze and collect_results.py read it without a word (Z75, Z145, Z146,
Z155); ``code`` set to {} beside its data, and ``data.dir`` set to null (Z74), were taken as well, and so was a
code whose commit was emptied and versions removed (round 32, AB24, AB43: ``_code_problem``). Such a line is
now named and skipped like any damaged line (``read_results``), so the sweep trains or evaluates its run again from
its folder, whose checkpoint config is checked against the grid before grid.json is written.
"""

from __future__ import annotations

import re
from typing import Any

WHY = "which the sweep always records together (the field was removed or emptied)"


def _shown(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def provenance_problem(d: dict) -> str | None:
    """Why line ``d`` of a results file records its code but not the rest of its provenance, or a part emptied (None
    when it records config, code and data as the sweep writes them, or no code: an older or hand-made row)."""
    if d.get("code") is None:  # before provenance (no code: a config alone or nothing), or a row built by hand or in
        return None  # Python (the tests' rows of data alone): read as before
    if d.get("code") is not None and not d.get("data"):  # X75, its wording kept
        shown = "no data" if d.get("data") is None else f"data {_shown(d['data'])}"
        return f"has {shown} beside its code, {WHY}"
    if not isinstance(d["code"], dict) or not d["code"]:  # Z75: code {} beside its data
        return f"has code {_shown(d['code'])} beside its data, {WHY}"
    if (problem := _code_problem(d["code"])) is not None:  # round 32, AB24, AB43: code {"commit": ""}
        return problem
    if "config" not in d or d["config"] == {}:  # Z75, Z76: config removed or {} (null: config.yaml was unreadable)
        shown = "no config" if "config" not in d else "config {}"
        return f"has {shown} beside its code and data, {WHY}"
    if isinstance(d["data"], dict) and not d["data"].get("dir"):  # Z74: the sweep names the data folder always
        return f"has data.dir {_shown(d['data'].get('dir'))}, where the sweep always records its data folder"
    return None


CODE_FIELDS = ("commit", "leviathan", "torch")  # what the sweep writes as a row's code (``CodeProvenance``)

COMMIT = re.compile(r"[0-9a-f]{4,64}(-dirty)?")  # ``metrics.git_revision``: ``git rev-parse HEAD``[-dirty]
# A package's ``__version__`` as PEP 440 writes it normalised ('0.1.0', '2.5.1+cpu', '2.6.0.dev20241112+cu121',
# '0.1.0.dev0'): release numbers joined by single dots, at least major.minor (no torch or leviathan release was ever
# one number), then an optional pre-release, post and dev part and one local label after a single '+'. Round 35
# (AH14, AH15, AH18, AH20, AH22, AH286): the earlier pattern took any text of 64 characters that began with a digit,
# so '2.13.0+cpu+cpu', '0..1' and 64 nines were read and copied as a row's provenance without a word.
_NUMBER = r"(?:0|[1-9][0-9]*)"
VERSION = re.compile(rf"(?=.{{1,64}}$)(?:{_NUMBER}!)?{_NUMBER}(?:\.{_NUMBER})+(?:(?:a|b|rc){_NUMBER})?"
                     rf"(?:\.post{_NUMBER})?(?:\.dev{_NUMBER})?(?:\+[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?")
_FORMATS = {"commit": (COMMIT, "a git commit (the hex digits `git rev-parse HEAD` prints, '-dirty' after them when "
                               "the tree had changes)"),
            "leviathan": (VERSION, "a version (such as '0.1.0': numbers joined by dots, PEP 440)"),
            "torch": (VERSION, "a version (such as '2.5.1+cpu': numbers joined by dots, PEP 440)")}


def code_field_problem(key: str, value: Any) -> str | None:
    """Why ``value`` is not what the sweep records as a row's ``code.<key>`` (None: text of its format, or null).
    Round 33 (AD3, AD7, AD17): only an empty commit was refused, so 'zzz not a sha', a NUL or 800 characters were
    read by report and analyze and copied by collect_results.py as the row's provenance without a word."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        return (f"has code.{key} {_shown(value)}, where the sweep records the run's {key} as text, or null where its "
                f"versions.json does not say (the field was emptied or edited)")
    pattern, what = _FORMATS[key]
    if pattern.fullmatch(value) is None:
        return f"has code.{key} {_shown(value)}, not {what} as the sweep records it (the field was edited)"
    return None


def _code_problem(code: dict) -> str | None:
    """Why a row's ``code`` object is not one the sweep writes: a commit or version emptied to '' or not text, or
    none of them left. The sweep writes commit, leviathan and torch every time, each the text of the run's
    versions.json or null where it does not say; ``{"commit": ""}`` (the commit emptied, the versions removed) was
    read by report and copied by collect_results.py as provenance without a word (issue 30 round 32, AB24, AB43).
    Round 33: each value is held to its format (``code_field_problem``: AD3, AD7, AD17), and a code that lost one of
    the three fields while keeping the others is named as well (AD8, AD11: code.torch removed passed)."""
    for key in CODE_FIELDS:
        if key in code and (problem := code_field_problem(key, code[key])) is not None:
            return problem
    if not any(key in code for key in CODE_FIELDS):
        return f"has code {_shown(code)} with no commit and no leviathan or torch version, {WHY}"
    missing = [key for key in CODE_FIELDS if key not in code]
    if missing:
        return (f"has no code.{missing[0]} beside its code.{next(k for k in CODE_FIELDS if k in code)}, where the "
                f"sweep records commit, leviathan and torch together (null where the run's versions.json does not "
                f"say): the field was removed")
    return None
