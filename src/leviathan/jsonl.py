"""JSON-lines files read line by line, each line that is not a whole JSON value reported with its number.

    values, bad = read_json_lines("runs/cpu/results.jsonl")   # values: [(line number, value)]; bad: [(line number, why)]
    for line in bad_line_notes(path, bad, "row"): print(line)  # "warning: PATH:3: ..."

A line can be cut short (a killed write, a full disk), not be UTF-8 or not be JSON. Each line is decoded on its
own, so one bad line costs only itself and never raises: the caller decides whether to skip it quietly (the torn
last line of a metrics.jsonl after a kill) or to say so (a results.jsonl row is a finished run). Blank lines are
not values and not reported. A UTF-8 byte order mark before the first line (some editors save one) is read past. A
line whose object gives a key twice is a bad line (``REPEATED_KEY``), not the last value json would keep: no leviathan
writer repeats a key (issue 30 round 28, U455, as config.json and state.json refuse one, ``json_text.no_repeats``).
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any, Callable
from . import json_text


REPEATED_KEY = "gives the key"  # how a line holding an object with a key given twice is reported
CUT_SHORT = "is not a whole JSON value (cut short or damaged)"


class _RepeatedKey(json_text.NotJSON):
    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} appears twice", "", 0)
        self.key = key


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict:
    """``json_text.no_repeats`` raising ``_RepeatedKey`` (which ``json_text.loads`` lets through as the
    ``JSONDecodeError`` it is), so the line's report names the key rather than "not a whole JSON value"."""
    try:
        return json_text.no_repeats(pairs)
    except ValueError:
        seen: set = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _RepeatedKey(key) from None


def read_json_lines(path: str | os.PathLike) -> tuple[list[tuple[int, Any]], list[tuple[int, str]]]:
    """([(line number, value)] of the lines that parse, [(line number, what is wrong)] of the others); line numbers
    start at 1; blank lines are skipped. A file that cannot be read at all (none there, a folder, no permission) is
    ``errors.StorageError``'s one line, still the OSError it was: the raw FileNotFoundError or pathlib's TypeError
    of a path of None before (issue 30 round 25, Y339, Y340). A file of UTF-16 or UTF-32 text is a UserError that
    names its encoding and iconv's conversion: each of its lines was "cut short or damaged" (round 35, AH36-AH38)."""
    from .data.binary import not_text_fix, other_encoding
    from .errors import UserError, not_regular
    from .storage import read_failure
    from .value_rules import check_read_path

    fix = "pass the path of a JSON-lines file"
    check_read_path("read_json_lines", "path", path, fix)
    if (kind := not_regular(path)) is not None:  # reading it hung the verb (issue 30 round 12, T64, T72)
        raise UserError(f"{str(path)!r} {kind}; put the file itself there")
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise read_failure(e, path, fix) from None
    if (encoding := other_encoding(data)) is not None:  # each line "cut short or damaged" before (round 35, AH36-AH38)
        raise UserError(f"{str(path)!r} is {encoding}, and JSON lines are read as UTF-8 (none of its lines can be "
                        f"read); {not_text_fix(encoding)}")
    values, bad = [], []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if number == 1 and raw.startswith(codecs.BOM_UTF8):  # as some editors save UTF-8 (round 11, R52: the whole
            raw = raw[len(codecs.BOM_UTF8):]                  # first row was "cut short or damaged")
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            bad.append((number, f"is not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1})"))
            continue
        value, problem = line_value(text)
        if problem is None:
            values.append((number, value))
        else:
            bad.append((number, problem))
    return values, bad


def line_value(text: str) -> tuple[Any, str | None]:
    """(the JSON value of one line's ``text``, None), or (None, what is wrong with it: ``CUT_SHORT`` for text that is
    no whole JSON value, as a killed write leaves the last line). Also for a reader that keeps the lines' text (train's
    resume rewrites its log from them: a line giving "step" twice was kept, issue 30 round 29, W383)."""
    try:
        return json_text.loads(text, object_pairs_hook=_no_repeats), None
    except _RepeatedKey as e:  # json keeps the last without a word (round 28, U455); no writer repeats a key
        return None, f"{REPEATED_KEY} {e.key!r} twice, of which JSON would keep only the last"
    except json_text.NotJSON as e:  # thousands of '[' (a RecursionError traceback: round 17's fix18b, round 18)
        return None, f"is not a JSON value Python can hold ({e}), so it is no leviathan row"
    except ValueError:
        return None, CUT_SHORT


def bad_line_notes(path: str | os.PathLike, bad: list[tuple[int, str]], what: str,
                   consequence: str | Callable[[int], str], limit: int = 5) -> list[str]:
    """One ``warning: PATH:N: ...`` line per bad line (at most ``limit``, then a count of the rest). ``consequence``:
    what skipping a line means, or a function of its line number saying it for each line."""
    said = consequence if callable(consequence) else (lambda number: consequence)
    notes = [f"warning: {path}:{number}: line {number} {why}; skipped, {said(number)}" for number, why in bad[:limit]]
    if len(bad) > limit:
        notes.append(f"warning: {path}: {len(bad) - limit} more damaged {what} lines skipped")
    return notes
