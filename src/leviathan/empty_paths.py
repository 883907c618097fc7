"""An empty path given on the command line is refused, never read as the current folder (nor a file's path typed
as a folder's, ``--json bx/``, read as the file bx).

    refuse_empty_paths(parser, args)        # UserError naming the option, after a verb's arguments are parsed
    refuse_empty_path("", "--dest")         # the same for one value (scripts/collect_results.py)
    refuse_folder_spelling("bx/", "--json", "bench.json")  # a FILE option typed as a folder ('bx/', 'bx/..'): refused
    refuse_file_typed_as_folder("g.yaml/", "--grid")  # a file's path typed with a '/': refused, input or output
    refuse_up_through_nothing("tr/x/..", "--run-dir")  # a '..' out of a folder that does not exist: refused
    refuse_folder_above("t/a/..", "save_pretrained")  # a model's output folder ending in '..': refused

``Path("")`` is ``Path(".")``: ``collect_results.py --rewrite ""`` rewrote every results.jsonl, grid.json and
lm_eval.json under the folder it ran in, and ``--dest ""`` wrote its grid's folder there (issue 30 round 15, B186,
B185); ``leviathan eval ""`` read the current folder as the run. An empty value is a shell variable that was not set
(``--out "$OUT"``) far more often than a wish for '.', which stays the way to name the current folder. Footgun: only
options that take a path are checked (``PATH_DESTS``): an empty ``--prompt`` is a prompt.
"""

from __future__ import annotations

import argparse
import os

from .errors import UserError, not_a_folder_there

# the argparse ``dest`` of every option or positional of the verbs that takes a file or folder
PATH_DESTS = frozenset({"out", "out_dir", "dest", "run_dir", "checkpoint", "source", "results", "paths", "data",
                        "data_root", "data_dir", "config", "val_source", "text", "sweep", "runs", "model", "reference",
                        "resume", "lr_sweep", "cache_dir", "grid", "rewrite", "sweeps", "tokenizer", "json_out", "reuse",
                        "presweep", "fair_shot"})  # fair_shot: round 19 (H206), the API's line named write_report


# options that take a name or a path: their empty value is neither, and '.' (a folder) is no fix for them (train
# --config '' was told to pass '.'; issue 30 round 29, V7)
NAME_OR_PATH = {"--config": "a packaged configuration's name (tiny, cpu-small, paper-109m) or a config file's path",
                "--tokenizer": "a built-in tokenizer's name (o200k_base, cl100k_base, or bpe:VOCAB to train one), a "
                               "tokenizer.json's path or a folder holding one"}


def refuse_empty_path(value, option: str) -> None:
    """UserError when ``value`` (a path as typed, or a list of them) is the empty string, or a file's path typed as
    a folder's (``refuse_file_typed_as_folder``): the rules on a path as typed, which every verb's path options and
    every script's pass."""
    values = value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(v, str) and v == "" for v in values) and option in NAME_OR_PATH:
        raise UserError(f"{option} is empty (\"\"): an unset shell variable?; nothing was done; give "
                        f"{NAME_OR_PATH[option]}")
    if any(isinstance(v, str) and v == "" for v in values):
        raise UserError(f"{option} is an empty path (\"\"), which would be read as the current folder; nothing was "
                        f"done; pass the path itself (an unset shell variable?), or '.' for the current folder")
    for v in values:
        refuse_file_typed_as_folder(v, option)


def refuse_file_typed_as_folder(value, option: str) -> None:
    """UserError when ``value``, a path as typed, ends in '/' (or '/.') but what it names is a file: the system
    refuses such a path (ENOTDIR), and ``Path('c5.txt/')`` is ``Path('c5.txt')``, so ``prepare --val-source c5.txt/``,
    ``--tokenizer tok.json/``, ``sweep --grid g.yaml/`` and ``train --config g.yaml/`` read the file without a word
    while ``eval --text b1.txt/`` said the file "does not exist" (issue 30 round 27, R1, R2). One rule for every path
    option, input or output: the slash is named as the fault. A path that names nothing is left to the option's
    own check (a folder to be made, a file that does not exist)."""
    if not isinstance(value, str) or not value.endswith(("/", "/.")):
        return
    base = value
    while base.endswith(("/", "/.")) and base.strip("/") not in ("", "."):
        base = base[:-1] if base.endswith("/") else base[:-2]
    if os.path.lexists(base) and not os.path.isdir(base):
        ending = value[len(base):]
        what = not_a_folder_there(base).removesuffix(", not a folder")  # a pipe was "a file" (round 30, X26's kind)
        raise UserError(f"{option} {value!r} ends in {ending!r}, which names a folder, but {base!r} {what}; drop "
                        f"the {ending!r} and give {base!r}")


def refuse_folder_spelling(value, option: str, example: str) -> None:
    """UserError when ``value``, the path of a FILE to write as typed, ends in '/' (or '/.'), which names a folder:
    ``Path('bx/')`` is ``Path('bx')``, so ``bench --json bx/``, ``analyze embeddings --out ae/`` and the scripts'
    ``--json newdir/`` wrote a FILE named bx (issue 30 round 26, P3, P53); or its last part is '.' or '..', which
    name a folder too: ``--out ae/..`` with no ae made the folder, computed, and then the rename onto 'ae/..' failed
    with EBUSY, a traceback (round 27, R3, R4). ``example``: a file name to suggest in it. Footgun: call it on the
    value as typed, before any ``Path()`` of it (a ``Path`` keeps a last '..', not a last '/'); an option that names a
    folder takes the slash."""
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):  # Path keeps a last '..' (not a '/')
        value = os.fspath(value) if os.path.basename(os.fspath(value)) in (".", "..") else None
    if not isinstance(value, str):
        return
    if value in (".", "..") or value.endswith("/.."):
        raise UserError(f"{option} {value!r} ends in {os.path.basename(value)!r}, which names a folder; give a file "
                        f"name, e.g. {os.path.join(value, example)}")
    if not value.endswith(("/", "/.")):
        return
    ending = "/." if value.endswith("/.") else "/"
    folder = value[:-len(ending)].rstrip("/") or "/"
    raise UserError(f"{option} {value!r} ends in {ending!r}, which names a folder; give a file name, e.g. "
                    f"{os.path.join(folder, example)}")


def refuse_up_through_nothing(value, option: str) -> None:
    """UserError when ``value``, a path as typed, goes up ('..') out of a folder that does not exist (or is a file).
    The system follows 'tr/x/..' only when tr/x is a folder, but ``os.path.abspath`` reads it as 'tr' and
    ``mkdir(parents=True)`` makes tr/x on the way: ``train --run-dir tr/x/..`` (tr new or empty) made x and then
    refused tr for holding "files it did not write: x", the wrong cause (issue 30 round 28, T2). Asked by the shared
    output check (``ownership.check_not_inside``) before anything is made. A '..' out of a folder that exists keeps the
    system's meaning; leading '..' and '.' parts name folders that exist."""
    if not isinstance(value, (str, os.PathLike)) or not isinstance(text := os.fspath(value), str):
        return
    parts = text.split("/")
    for i, part in enumerate(parts):
        if part != ".." or all(p in ("", ".", "..") for p in parts[:i]):
            continue
        above = "/".join(parts[:i])
        if not os.path.isdir(above):
            # a pipe was "is a file" (issue 30 round 30, X26's kind)
            what = (not_a_folder_there(above).removesuffix(", not a folder") if os.path.exists(above) else
                    "does not exist")
            raise UserError(f"{option} {text!r} goes up ('..') out of {above!r}, which {what}, so it names no folder "
                            f"the system can reach; nothing was made; give the folder by its own path, "
                            f"{os.path.normpath(text)!r}")


def refuse_folder_above(value, option: str) -> None:
    """UserError when ``value``, the output FOLDER of a model save or export as typed (a str or a Path: a Path keeps a
    last '..'), ends in '..': it names the folder above the one typed, most often a folder of the user's files.
    ``save_pretrained('t/a770/..')`` wrote config.json and the weights among t's 250 files without a word, where its
    own line asks for "a folder of its own" (issue 30 round 28, U770; ``refuse_folder_spelling``'s rule for a FILE
    option, round 27). A last '.' names the folder itself and is kept ('out/.'). A '..' out of a folder that does not
    exist is named as that first (``refuse_up_through_nothing``)."""
    refuse_up_through_nothing(value, option)
    if not isinstance(value, (str, os.PathLike)) or not isinstance(text := os.fspath(value), str):
        return
    if os.path.basename(text.rstrip("/")) == "..":
        above = os.path.dirname(text.rstrip("/")) or "."
        raise UserError(f"{option} {text!r} ends in '..', which names the folder above {above!r}, not a folder of its "
                        f"own; nothing was written; give the folder by its own path, {os.path.normpath(text)!r}, if "
                        f"its files are meant to go there")


def _option_name(parser: argparse.ArgumentParser, dest: str) -> str | None:
    """How the user typed the option whose ``dest`` is this (its long option, or the positional's name)."""
    for action in parser._actions:  # argparse keeps no public list; sub-commands' parsers are searched too
        if action.dest == dest:
            return max(action.option_strings, key=len) if action.option_strings else \
                f"the {action.metavar or dest} argument"
        for sub in (action.choices or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
            name = _option_name(sub, dest)
            if name is not None:
                return name
    return None


def refuse_empty_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """UserError naming the first path option of ``args`` given as "" (see the module docstring)."""
    for dest, value in vars(args).items():
        if dest in PATH_DESTS:
            refuse_empty_path(value, _option_name(parser, dest) or dest)
