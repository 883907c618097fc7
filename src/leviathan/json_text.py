"""The one way the product parses JSON text it reads back: every failure is a ``json.JSONDecodeError``.

    from leviathan.json_text import read_file
    try:
        raw = read_file(path)                  # or loads(text) for text in hand
    except ValueError as e:                    # json.JSONDecodeError is a ValueError: each reader keeps its own words
        raise UserError(f"{str(path)!r} is not readable JSON ({e}); ...")

The footgun (issue 30 round 18, G435-G447, G450, G460-G462): ``json.loads`` raises more than ``JSONDecodeError``.
A value nested 100,000 deep (``[[[[...]]]]``) raises ``RecursionError``, which no reader caught, so a meta.json,
results.jsonl, state.json, marker, grid.json, run.json, metrics.jsonl, embeddings record, config.json or
leviathan_tokenizer.json damaged that way ended the verb in a traceback; an integer of 5,000 digits raises a plain
``ValueError`` ("Exceeds the limit (4300 digits)"), which the readers that catch only ``JSONDecodeError`` (meta.json)
let through. Here both become the ``JSONDecodeError`` of broken JSON, so each reader's refusal for a damaged file
(already naming the file and the fix) covers them too. Likewise a file that is not UTF-8 text: ``read_text`` raised
``UnicodeDecodeError`` before any JSON was parsed, which the readers catching ``JSONDecodeError`` let through (a
meta.json or leviathan_tokenizer.json holding one Latin-1 byte ended train, eval and ``load_tokenizer`` in a
traceback; issue 30 round 21, P476, P487, P489): ``read_file`` reads the bytes and reports that as broken JSON too.

A key given twice in one object is taken by ``json`` as "the last one wins", without a word; a reader of a file
leviathan wrote (which never repeats a key) passes ``object_pairs_hook=no_repeats`` to refuse it as broken JSON
naming the key (state.json since round 10; config.json since issue 30 round 27, S89: a second ``leviathan_generator``
holding ``rank`` alone was blamed on its missing ``vocab_size``).
"""

from __future__ import annotations

import json
from typing import Any


class NotJSON(json.JSONDecodeError):
    """Text json read without a ``JSONDecodeError`` of its own; shown as the problem alone (no line and column:
    the whole text is at fault)."""

    def __str__(self) -> str:
        return self.msg


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)``, raising only ``json.JSONDecodeError`` for text that is not a JSON value
    Python can hold (too deeply nested, an integer over Python's digit limit, a hook's refusal, or broken JSON);
    ``text`` that is neither text nor bytes is ``errors.ArgumentTypeError`` (``loads(5)`` was json's raw TypeError,
    issue 30 round 26, Q372)."""
    if not isinstance(text, (str, bytes, bytearray)):
        from .errors import ArgumentTypeError

        raise ArgumentTypeError(f"json_text.loads: text must be a str or bytes of JSON, got {type(text).__name__} "
                                f"{text!r:.40}; pass the file's text (json_text.read_file reads a file)")
    try:
        return json.loads(text, **kwargs)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        problem = "its arrays or objects are nested too deeply to read (thousands of levels)"
    except ValueError as e:  # "Exceeds the limit (4300 digits) for integer string conversion; use ...", a hook's
        problem = str(e).split("; use sys.")[0]
    raise NotJSON(problem, text if isinstance(text, str) else "", 0) from None


def no_repeats(pairs: list[tuple[str, Any]]) -> dict:
    """An ``object_pairs_hook`` that refuses a key given twice in one object (``loads`` reports it as broken JSON:
    "key 'rank' appears twice"), where ``json`` keeps the last without a word."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice, of which JSON would keep only the last")
        out[key] = value
    return out


def repeated_key(value: Any, where: str, depth: int = 0) -> tuple[str, Any, Any, str] | None:
    """(where, one key, the other, the text of both) of the first object in ``value`` whose keys collide as JSON
    text, None when none does: the writers' side of ``no_repeats``. ``{1: 'x', '1': 'y'}`` was written as
    ``{"1": "x", "1": "y"}``, a file ``no_repeats`` refuses and ``json`` reads last-wins (issue 30 round 29, W209).
    Only an object with a key other than text can collide, so an all-text object costs one look at its keys."""
    if isinstance(value, dict) and not all(isinstance(key, str) for key in value):
        seen: dict[str, Any] = {}
        for key in value:
            text = key if isinstance(key, str) else json.dumps(key)  # 1 -> "1", True -> "true", None -> "null"
            if text in seen:
                return where, seen[text], key, text
            seen[text] = key
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items if depth < 100 else ():
        found = repeated_key(item, f"{where}[{key!r}]", depth + 1)
        if found:
            return found
    return None


def read_file(path, **kwargs: Any) -> Any:
    """The JSON value of the file at ``path`` (``loads`` of its text): ``OSError`` when it cannot be read,
    ``json.JSONDecodeError`` for anything else (bytes that are not UTF-8 text, or text that is not JSON, or a named
    pipe, socket or device in the file's place: reading a FIFO config.json waited forever, issue 30 round 23, U385,
    U411). The ``OSError`` is ``errors.StorageError``'s one line (a folder, nothing there, no permission), and a path
    that is not one a UserError: a direct call ended in the raw IsADirectoryError (issue 30 round 25, Y356)."""
    from pathlib import Path

    from .errors import not_regular
    from .storage import read_failure
    from .value_rules import check_read_path

    check_read_path("json_text.read_file", "path", path, "pass the path of a JSON file")
    if (kind := not_regular(path)) is not None:  # a named pipe's read waits for a writer forever (round 23, U385)
        raise NotJSON(f"it {kind}; leviathan reads its JSON files whole", "", 0)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise read_failure(e, path, "pass the path of a JSON file") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotJSON(f"it is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start:,}); JSON files "
                      f"leviathan writes are UTF-8", "", 0) from None
    return loads(text, **kwargs)
