"""Where a command writes its result as JSON (``--json FILE``): checked before the work, never over a user's file.

    check_json_target(path, "--json", is_mine, "`leviathan bench --json`", by="bench", verb="bench")  # before the work

The rule of ``leviathan bench --json`` (issue 30 round 5; round 23, T1, T3), shared with the scripts that write a
JSON result (scripts/bench_corpus_softmax.py wrote over a user's myb.json without a word, and a --json under a regular
file was a NotADirectoryError traceback after the measurement ran: issue 30 round 24, V40, V123). The path must be
free or hold an earlier result of the same command (``is_mine`` of its parsed JSON); a folder, a path under a file, a
missing folder, a special file or a place inside another verb's output is refused, and a folder the file cannot be
written in (read-only, no permission) is the ``OSError`` the write would meet, found before the work
(``io.check_writable``), which the command line prints as one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import json_text
from .errors import UserError, file_above
from .io import check_writable
from .ownership import CONTAINERS, check_not_inside, check_not_special


def check_json_target(path: str | Path, option: str, is_mine: Callable[[Any], bool], writer: str, by: str,
                      verb: str | None = None) -> None:
    """UserError unless ``option``'s ``path`` is free or holds an earlier result of ``writer`` (the command as the
    message names it; ``by``: its short name, "bench"); then the OSError of a folder it cannot be written in.
    ``verb``: the verb writing it, for ``ownership.check_not_inside`` (None for a script: the verbs' outputs around
    it are refused all the same)."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{option} {str(path)!r} is a folder; name the result's file (e.g. {path}/{by}.json)")
    if (blocker := file_above(path)) is not None:  # "create it first (mkdir -p afile)" of a file (round 23, T1)
        raise UserError(f"{option} {str(path)!r} cannot be written: {blocker!r} is a file, not a folder; choose "
                        f"another {option} path, or move that file away")
    if not path.parent.is_dir():
        raise UserError(f"{option} {str(path)!r}: the folder {str(path.parent)!r} does not exist; create it first "
                        f"(mkdir -p {path.parent}) or choose another {option} path")
    check_not_special(path, option)
    check_not_inside(path, option, ("train", "prepare", "export"), within=CONTAINERS, verb=verb)  # C251, D251
    if path.exists() or path.is_symlink():
        check_earlier_result(path, option, is_mine, writer, by)
    check_writable(path)


def check_earlier_result(path: Path, option: str, is_mine: Callable[[Any], bool], writer: str, by: str) -> None:
    """UserError unless the file at ``path`` is an earlier result of ``writer`` (``is_mine`` of its JSON value); a file
    that does not parse, or is nested too deeply to read (round 22, G462), is not one."""
    try:
        earlier = json_text.read_file(path)
    except (OSError, UnicodeDecodeError, ValueError):
        earlier = None
    if earlier is None or not is_mine(earlier):
        raise UserError(f"{option} {str(path)!r} exists and is not an earlier {writer} result, so {by} will not "
                        f"write over it; choose another {option} path, or move the file away")
