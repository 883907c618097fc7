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
from .empty_paths import refuse_folder_spelling
from .errors import UserError, file_above, not_a_folder_there
from .io import check_writable
from .ownership import CONTAINERS, check_not_inside, check_not_special


def check_json_target(path: str | Path, option: str, is_mine: Callable[[Any], bool], writer: str, by: str,
                      verb: str | None = None) -> None:
    """UserError unless ``option``'s ``path`` is free or holds an earlier result of ``writer`` (the command as the
    message names it; ``by``: its short name, "bench"); then the OSError of a folder it cannot be written in.
    ``verb``: the verb writing it, for ``ownership.check_not_inside`` (None for a script: the verbs' outputs around
    it are refused all the same)."""
    example = f"{by}.json" if by.isidentifier() else "result.json"  # not "the script.json" (round 26, P53)
    check_target(path, option, lambda found: holds_result(found, is_mine), f"an earlier {writer} result, so {by}",
                 example, verb=verb)


def check_target(path: str | Path, option: str, earlier: Callable[[Path], bool], refusal: str, example: str,
                 parents: bool = False, verb: str | None = None) -> None:
    """The rule itself, shared by ``check_json_target`` and the GPU check's ``--json`` / ``--md``
    (scripts/gpu_check_common.check_output, its twin until issue 30 round 25): UserError unless ``path`` is free or
    ``earlier(path)`` (an earlier output of the same kind; ``refusal``: "<what it is not>, so <who>" for the line that
    refuses it); a folder (``example``: a file name to suggest in it), a path under a file, a special file or a place
    inside another verb's output is refused; a missing folder above is refused, or created when ``parents``; then the
    OSError of a folder it cannot be written in, and a folder that takes no new files (``/proc/x.json`` was a
    FileNotFoundError traceback after `leviathan bench` measured, round 25) is refused."""
    from .value_rules import check_switches

    check_switches("check_target", parents=parents)  # 'no' was true (round 30, Y621's kind)
    refuse_folder_spelling(path, option, example)  # 'bx/' is Path('bx'): a FILE named bx (round 26, P3, P53)
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{option} {str(path)!r} is a folder; name the result's file (e.g. {path / example})")
    if (blocker := file_above(path)) is not None:  # "create it first (mkdir -p afile)" of a file (round 23, T1)
        raise UserError(f"{option} {str(path)!r} cannot be written: {blocker!r} {not_a_folder_there(blocker)}; "
                        f"choose another {option} path, or move that file away")
    if not parents and not path.parent.is_dir():
        raise UserError(f"{option} {str(path)!r}: the folder {str(path.parent)!r} does not exist; create it first "
                        f"(mkdir -p {path.parent}) or choose another {option} path")
    check_not_special(path, option)
    check_not_inside(path, option, ("train", "prepare", "export"), within=CONTAINERS, verb=verb)  # C251, D251
    if (path.exists() or path.is_symlink()) and not earlier(path):
        raise UserError(f"{option} {str(path)!r} exists and is not {refusal} will not write over it; choose "
                        f"another {option} path, or move the file away")
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        check_writable(path)
    except FileNotFoundError:  # the folder is there (checked above) but refuses a new file: /proc, /sys
        raise UserError(f"{option} {str(path)!r} cannot be written: the folder {str(path.parent)!r} takes no new "
                        f"files (a system folder such as /proc?); choose another {option} path") from None


def check_earlier_result(path: Path, option: str, is_mine: Callable[[Any], bool], writer: str, by: str) -> None:
    """UserError unless the file at ``path`` is an earlier result of ``writer`` (``is_mine`` of its JSON value); a file
    that does not parse, or is nested too deeply to read (round 22, G462), is not one."""
    if not holds_result(path, is_mine):
        raise UserError(f"{option} {str(path)!r} exists and is not an earlier {writer} result, so {by} will not "
                        f"write over it; choose another {option} path, or move the file away")


def holds_result(path: Path, is_mine: Callable[[Any], bool]) -> bool:
    """Whether the file at ``path`` parses as JSON that ``is_mine``; a file that does not parse, or is nested too deeply
    to read (round 22, G462), does not."""
    try:
        earlier = json_text.read_file(path)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return earlier is not None and is_mine(earlier)
