"""Errors a user can act on. The CLI prints their message (no traceback) and exits with status 2."""

from __future__ import annotations

import errno
import os
import re


class UserError(Exception):
    """Bad input: the message names the problem and the fix."""


class ConfigError(UserError, ValueError):
    """A configuration value a user must fix. The message names the key and the fix (``config`` raises it; it
    lives here so that ``strict_yaml``, below ``config``, can raise it too)."""


class ArgumentValueError(UserError, ValueError):
    """An argument of a lower-level Python function (the model's ``bake``, ``embed_unique``, ``linear_cross_entropy``,
    ...) outside its range: one line naming the argument, the value and the valid range. A UserError, so the CLI prints
    it as one line, and still the ValueError torch's convention (and every ``except ValueError``) expects. Those
    functions took the argument unchecked and ended in torch's own errors, or took a bool as 1 (issue 30 round 22,
    S225-S237, S480, S481, S517-S524)."""


class ArgumentTypeError(UserError, TypeError):
    """``ArgumentValueError``'s twin for an argument of the wrong type (float labels, a non-tensor, a bool as a
    count): a UserError that is still the TypeError torch's convention expects."""


class StorageError(UserError, OSError):
    """A storage failure of a Python API write (``bake_adopted``, ``Tokenizer.save``) in the verbs' words: one line
    naming the path, the problem and the fix (``storage_error_message``). A UserError, so the CLI prints it as one line,
    and still the OSError it was (errno and filename kept: ``except OSError`` catches it as before). They raised the raw
    OSError, "[Errno 30] Read-only file system", with no fix (issue 30 round 14, B260, B344)."""

    def __init__(self, message: str, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror, cause.filename)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # OSError's own pickles (errno, strerror) as the message: a --jobs worker's error
        return _storage_error, (self.message, self.errno, self.strerror, self.filename)


def _storage_error(message: str, number: int, strerror: str, filename) -> StorageError:
    return StorageError(message, OSError(number, strerror, filename))


class Stopped(BaseException):
    """A stop signal (SIGTERM, SIGHUP) that unwinds a verb like Ctrl-C does, so its ``finally`` blocks clean up: raised
    by the CLI's handler, and by ``train`` for a second stop during a step (issue 30 round 22, Q57). The CLI says
    which signal stopped what and exits 128 + ``signum``."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class ReportedInterrupt(KeyboardInterrupt):
    """Ctrl-C whose stop the verb has already said in its own line (``train``: "stopped by SIGINT at step N;
    checkpoint saved ..."): the CLI exits 130 without a second line."""


NO_SPACE = "no space left on device (the disk is full, or out of inodes: `df -h`, `df -i`)"

# OSErrors that are about the user's storage, not a bug: errno -> (problem, fix).
_STORAGE_ERRORS = {
    # the disk may have space but no inodes left (many small files): "the disk is full" sent the user to free
    # megabytes that were there (issue 30 round 20, M159, M160)
    errno.ENOSPC: (NO_SPACE,
                   "free disk space (delete old runs or checkpoints, or lower keep_last) or write to another "
                   "disk (--run-dir / --out)"),
    errno.EDQUOT: ("disk quota exceeded",
                   "free space within your quota (delete old runs or checkpoints, or lower keep_last) or write "
                   "to another disk (--run-dir / --out)"),
    # a read is refused too (an input the user cannot read): "make it writable" sent them the wrong way (round 6)
    errno.EACCES: ("permission denied", "give yourself access to it (chmod / chown: read, and write where the verb "
                                        "writes) or choose another location (--run-dir / --out)"),
    errno.EPERM: ("operation not permitted", "give yourself access to it (chmod / chown: read, and write where the "
                                             "verb writes) or choose another location (--run-dir / --out)"),
    errno.EROFS: ("read-only file system", "choose a location on a writable disk (--run-dir / --out)"),
    errno.EIO: ("input/output error (the disk or its file system failed a write)",
                "check the disk (free space, `dmesg`), or write to another disk (--run-dir / --out)"),
    errno.ENOTDIR: ("a file is in the way where a folder is expected",
                    "remove or rename that file, or choose another location (--run-dir / --out)"),
    errno.EEXIST: ("something is in the way: the path already exists (a file where a folder belongs?)",
                   "move it away, or choose another location (--run-dir / --out)"),
    errno.EISDIR: ("a folder is in the way where a file is expected",
                   "move that folder away, or name a file path instead"),
    errno.ENAMETOOLONG: ("the file name is too long for the file system",
                         "choose a shorter name or a less deeply nested location (--run-dir / --out)"),
    errno.EFBIG: ("a file grew past the size limit (the process's `ulimit -f`, or the largest file the file system "
                  "allows)", "raise the limit (ulimit -f unlimited) or write to a file system that allows larger files "
                  "(--run-dir / --out)"),
    errno.EMFILE: ("too many open files (the process's `ulimit -n`)", "raise the limit (ulimit -n 4096) and run again"),
    errno.ELOOP: ("too many levels of symbolic links (a link that leads back to itself)",
                  "remove or repair the link, or choose another location (--run-dir / --out)"),
}


# the errors of a process limit, not of the place written to: "make room there" or "write to another disk" does not
# lift them, and lm-eval's line under `ulimit -f 50` advised both (issue 30 round 14, B244)
_PROCESS_LIMITS = (errno.EFBIG, errno.EMFILE)


def process_limit_fix(e: BaseException) -> str | None:
    """The fix for a storage OSError that a process limit raised (``ulimit -f``, ``ulimit -n``: raise it), for lines
    that otherwise advise room or another place (lm-eval's temporary folder, a redirected standard output); None for
    any other error."""
    if isinstance(e, OSError) and e.errno in _PROCESS_LIMITS:
        return _STORAGE_ERRORS[e.errno][1].replace(" (--run-dir / --out)", "")
    return None


def temporary_storage_error(e: BaseException, work: str | os.PathLike, writes: str, command: str) -> UserError | None:
    """The line for a storage failure of a file in ``work``, a verb's folder in the temporary directory (None for any
    other error): the file, the problem, and the way out, TMPDIR, as "``writes`` into a temporary folder under /tmp:
    make room there, or point TMPDIR at a disk with room (TMPDIR=DIR ``command``)". lm-eval's said "(--run-dir /
    --out)", a flag that does not move it (issue 30 round 8, L5); collect_results' staging on a full $TMPDIR said
    "write to another disk (--dest)" while --dest had room (round 18, F19)."""
    import tempfile

    if not isinstance(e, OSError) or e.errno not in _STORAGE_ERRORS or e.filename is None:
        return None
    if not os.path.abspath(os.fsdecode(e.filename)).startswith(os.path.abspath(work) + os.sep):
        return None
    where = f"{writes} into a temporary folder under {tempfile.gettempdir()}"
    limit = process_limit_fix(e)  # `ulimit -f 50`: room is not the problem (round 14, B244)
    fix = (f"{limit} ({where}; TMPDIR=DIR moves it)" if limit else
           f"{where}: make room there, or point TMPDIR at a disk with room (TMPDIR=DIR {command})")
    return UserError(f"{os.fsdecode(e.filename)!r}: {_STORAGE_ERRORS[e.errno][0]}; {fix}")


# verb -> the option that chooses where it writes, named in a storage error's fix (None: the verb writes no output);
# every verb's line named "--run-dir / --out", and `export` has neither (issue 30 round 14, A52, A58)
OUTPUT_OPTIONS = {"train": "--run-dir", "demo": "--run-dir", "sweep": "--out", "prepare": "--out", "report": "--out",
                  "lm-eval": "--out", "analyze": "--out / --dest", "bench": "--json / --cache-dir",
                  "export": "export's OUT_DIR argument",
                  "collect_results": "--dest", "eval": None,
                  # --rewrite writes the folder in place: "--dest" named an option it does not take (round 15, B26)
                  "collect_results --rewrite": "--rewrite of a copy of the folder there",
                  "generate": None, "params": None,
                  "bench_corpus_softmax": "--json", "same_numbers": None,  # the scripts (round 24, V40, V32)
                  # gpu_check.py has no --out: every place it writes comes from one of these (round 25, X54)
                  "gpu_check": "--json, --md, --work / GPU_CHECK_WORK, or OUT",
                  # Python API writes (``storage.api_writes``): the argument that chooses the place (round 14, B260)
                  "bake_adopted": "out_dir", "Tokenizer.save": "its directory argument",
                  "write_hf_tokenizer": "directory",  # round 25 (Y629)
                  # and every other public write (``storage.api_write``; round 17, E145 ... E291)
                  "write_report": "out_dir", "train()": "run_dir", "prepare()": "out_dir", "run_sweep": "out_dir",
                  "to_hf": "out_dir", "to_plain_llama": "out_dir", "export_for_harness": "out_dir",
                  "write_ablation_report": "out", "write_record": "path", "write_sweep_records": "dest",
                  "append_result": "path", "save_pretrained": "save_directory",
                  "dump_yaml": "path",  # round 22 (S283, S284)  # round 19 (J54-J76)
                  # the low-level helpers (``storage.write_failure``, ``read_failure``; round 25, Y306-Y361)
                  "atomic_write_text": "path", "atomic_write_bytes": "path", "atomic_write_json": "path",
                  "atomic_write_together": "files", "folder_lock": "folder", "reading": None}
_WRITES_RUNS = ("train", "demo", "sweep", "train()", "run_sweep")  # the writers of checkpoints: _RUNS_HINT's
_GENERIC_OPTION = "(--run-dir / --out)"
_RUNS_HINT = " (delete old runs or checkpoints, or lower keep_last)"  # only verbs that write checkpoints
# a verb's temporary or replaced output beside the one asked for (prepare's `.d.tmp-PID-xxxx`, export's `.e.tmp-xxxx`,
# `.e.old-xxxx`) and its lock file (`.d.lock`): a line named them, not the folder the user gave (round 14, A55, A57)
_BESIDE = re.compile(r"^\.(?P<name>.+)\.(?:tmp|old)-[A-Za-z0-9_-]+$")
_LOCK = re.compile(r"^\.(?P<name>.+)\.lock$")


def storage_error_message(e: OSError, verb: str | None = None) -> str | None:
    """One line naming the path, the problem and the fix for a storage OSError (disk full, quota, permission denied,
    read-only, a file or folder in the way, a name too long, a file-size limit); None for any other error, which is a
    bug to report with its traceback. A permission error on a read-only file system is named as such (the kernel
    says EACCES for some of those writes). ``verb`` (the CLI's) chooses the option the fix names (``OUTPUT_OPTIONS``);
    a path inside a verb's temporary folder, or its lock file, is named as the output folder it was for."""
    if isinstance(e, FileNotFoundError) and str(e.strerror or "").startswith("No usable temporary directory"):
        # tempfile tried every candidate folder and could write in none (torch's import asks it for one): under
        # `ulimit -f 0` `leviathan eval` ended in a 30-frame traceback (issue 30 round 11, R90)
        return (f"no usable temporary directory ({e.strerror.removeprefix('No usable temporary directory found in ')}"
                f" all refused a small file: a full or read-only disk, or a file-size limit such as `ulimit -f 0`); "
                f"free space there, raise the limit, or set TMPDIR to a writable folder")
    if not isinstance(e, OSError) or e.errno not in _STORAGE_ERRORS:
        return None
    code = e.errno
    # a name given as bytes (TensorBoard's writer thread: b'run/tensorboard/events...') broke the line (round 18, F79)
    name = os.fsdecode(e.filename) if isinstance(e.filename, (str, bytes, os.PathLike)) else None
    if code in (errno.EACCES, errno.EPERM) and name and _read_only(name):
        code = errno.EROFS
    if code in (errno.EEXIST, errno.ENOTDIR, errno.ELOOP) and name:
        link = _broken_link(name)
        if link is not None:  # its fix names the verb's option too: collect_results' said "--run-dir / --out" (V98),
            return _cache_fix(link, name, verb, above=True) or _verbs_fix(link, verb)  # or the cache's setting (V10)
    problem, fix = _STORAGE_ERRORS[code]
    filename = _file_in_the_way(name) if code == errno.ENOTDIR and name else name
    special = _special_in_the_way(filename, code)
    if special is not None:  # a pipe was "a file is in the way" / "(a file where a folder belongs?)" (X25, X26, X100)
        where = f"{_shown_path(filename)} {special}; "
        fix = "remove or rename it, or choose another location (--run-dir / --out)"
        return f"{where}{_cache_fix(fix, name, verb) or _verbs_fix(fix, verb)}"
    where = f"{_shown_path(filename)}: " if filename else ""
    # the setting is found from the path the call named: the file in the way may be the cache's parent (T68)
    return f"{where}{problem}; {_cache_fix(fix, name, verb) or _verbs_fix(fix, verb)}"


def _cache_fix(fix: str, filename, verb: str | None, above: bool = False) -> str | None:
    """``fix`` naming the setting that chose the place, for a path in leviathan's cache (None elsewhere): bench's
    and demo's cache is where $LEVIATHAN_CACHE says, and their lines named "--json / --cache-dir" and "--run-dir",
    options not given (issue 30 round 27, R76). Bench's own --cache-dir moves its BPE too."""
    from .cache_place import cache_setting

    setting = cache_setting(filename, above) if filename else None
    if setting is None:
        return None
    also = ", or give --cache-dir" if verb == "bench" else ""
    return fix.replace(_GENERIC_OPTION, f"({setting}{also})").replace(_RUNS_HINT, "")


def _verbs_fix(fix: str, verb: str | None) -> str:
    """``fix`` with its generic "(--run-dir / --out)" replaced by the option ``verb`` chooses its output with
    (``OUTPUT_OPTIONS``; left out for a verb that writes none), and the checkpoint hint dropped for a verb that writes
    no runs; ``fix`` as it is without a verb. Every storage line goes through it: the dead-link line did not, and
    `collect_results.py --dest LINK` was told to choose "--run-dir / --out", options the script lacks (issue 30
    round 24, V98)."""
    if verb is None:
        return fix
    option = OUTPUT_OPTIONS.get(verb, "--out")
    fix = fix.replace(_GENERIC_OPTION, f"({option})") if option else fix.replace(f" {_GENERIC_OPTION}", "")
    return fix if verb in _WRITES_RUNS else fix.replace(_RUNS_HINT, "")


def _special_in_the_way(filename, code) -> str | None:
    """``not_a_folder_there``'s words ("is a named pipe (FIFO), not a folder", a socket, a device) for what stands in
    the way of a folder to make (ENOTDIR's blocker, mkdir's EEXIST) when it is neither a file nor a folder; None
    otherwise, where the line's "a file is in the way" holds. A pipe on the way to export's, prepare's, sweep's,
    report's, lm-eval's, demo's and collect_results.py's output was "a file is in the way where a folder is expected"
    or "something is in the way ... (a file where a folder belongs?)" (issue 30 round 30, X25, X26, X100, X105)."""
    if code not in (errno.ENOTDIR, errno.EEXIST) or not filename:
        return None
    return not_a_folder_there(filename) if not_regular(filename) is not None else None


def _file_in_the_way(filename):
    """The file on the way to ``filename`` that ENOTDIR is about: 'pf' for 'pf/c/tinyg' when pf is a file. The line
    named 'pf/c/tinyg' "a file ... in the way", a path that does not exist (issue 30 round 15, B224)."""
    import os

    path = os.fspath(filename)
    for parent in [path, *_parents(path)]:
        if os.path.lexists(parent) and not os.path.isdir(parent):
            return parent
    return filename


def _parents(path: str) -> list[str]:
    import os

    out = []
    while (parent := os.path.dirname(path)) not in ("", path):
        out.append(parent)
        path = parent
    return out


def _shown_path(filename) -> str:
    """``filename`` quoted, or, when it lies in a verb's temporary folder or is its lock file, the output folder it was
    for with what failed in brackets."""
    import os

    path = os.fspath(filename)
    parts = path.split(os.sep)
    for i, part in enumerate(parts):
        found = _BESIDE.match(part) or (_LOCK.match(part) if i == len(parts) - 1 else None)
        if found:
            out = os.sep.join(parts[:i] + [found.group("name")])
            inner = os.sep.join(parts[i + 1:])
            what = (f"its {inner}, written in the temporary folder {part!r}" if inner else
                    f"its lock file {part!r}" if part.endswith(".lock") else f"the temporary folder {part!r}")
            return f"{out!r} ({what})"
    return repr(path)


def _broken_link(path) -> str | None:
    """The line for a path that is, or lies under, a symbolic link leading nowhere (None when none is): a link that
    loops, or one to a missing target. ``mkdir`` says EEXIST (or ENOTDIR) for both, which read as "a file where a
    folder belongs?" while ``ls`` shows a link (issue 30 round 7)."""
    import shlex

    found = dead_link(path)
    if found is None:
        return None
    where, what = found
    fix = ("create what it names, remove the link" if "does not exist" in what else "remove or repair the link")
    return f"{where!r} {what}; {fix} (rm {shlex.quote(where)}), or choose another location (--run-dir / --out)"


def dead_link(path) -> tuple[str, str] | None:
    """``(link, how it leads nowhere)`` for the symbolic link that ``path`` is or lies under and that loops or names
    nothing (``'loop1'``, ``"is a symbolic link that leads back to itself (it names 'loop2')"``); None when there
    is none."""
    import os

    where = os.fspath(path)
    while where and where not in (os.sep, "."):
        if os.path.islink(where) and not os.path.exists(where):
            target = os.readlink(where)
            try:
                os.stat(where)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    return where, f"is a symbolic link that leads back to itself (it names {target!r})"
            return where, f"is a symbolic link to {target!r}, which does not exist"
        parent = os.path.dirname(where)
        if parent == where:
            break
        where = parent
    return None


NUL = "\0"  # the one character no path can hold (the system ends a path's name at it)


def nul_byte(path) -> str | None:
    """Why ``path`` can name no file when it holds a NUL byte ("holds a NUL byte ('\\x00', character 22), which no
    file or folder name can hold"), None when it holds none (or is no path). The one wording of the rule, for a
    reader's "does not exist" (``missing``) and a writer's place (``value_rules.path_problem``): a NUL in a source, a
    tokenizer, a text file or a model folder was said as "does not exist" / "no such file", while its siblings named
    the NUL (issue 30 round 30, Y569, Y591, Y592, Y602, Y604)."""
    import os

    try:
        text = os.fspath(path)
    except TypeError:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or NUL not in text:
        return None
    return (f"holds a NUL byte ('\\x00', character {text.index(NUL) + 1}), which no file or folder name can "
            f"hold")


def missing(path) -> str:
    """Why an input ``path`` cannot be found, to follow its name in an error: "does not exist", or, for a path that
    is (or lies under) a symbolic link that loops or names nothing, what that link is (issue 30 round 8: a link that
    loops, given to eval, prepare, --config or report, "does not exist" while `ls` lists it). A path with a NUL byte
    is said to hold one (``nul_byte``; round 30, Y569): no file can have such a name, so "does not exist" sent the
    reader looking for a file. A path under a regular file says which file is in the way (issue 30 round 32, AC325)."""
    import os

    nul = nul_byte(path)
    if nul is not None:
        return f"{nul}, so nothing can have it (remove the NUL)"
    too_long = name_too_long(path)  # round 14 (B328): the output advice "choose a shorter name (--out)" for an input
    if too_long is not None:
        return f"does not exist: {too_long}, so nothing can have it (check the path)"
    kind = not_regular(path)  # round 11 (S159, S162): a pipe or a device was "does not exist"
    if kind is not None:
        return f"{kind} that can be read whole (copy its contents into a file)"
    found = dead_link(path)  # first: a link that loops is no folder either, and is the cause to name (round 8)
    above = file_above(path)  # round 32 (AC325): a path under a file was the raw NotADirectoryError
    if found is None and above is not None and not os.path.lexists(path):
        return (f"does not exist: {above!r} above it is a file, not a folder, so nothing can be under it (check the "
                f"path)")
    if found is None:
        return "does not exist"
    where, what = found
    if where == os.fspath(path):
        return f"{what}, so it cannot be read (repair or remove the link)"
    return f"cannot be read: {where!r} on its way {what} (repair or remove the link)"


def file_above(path) -> str | None:
    """The nearest existing path above ``path`` when it is a file (or anything but a folder: no folder can be made
    under it), None when that nearest existing path is a folder. An output named 'afile/x.json' under a regular file
    'afile' was "the folder 'afile' does not exist; create it first (mkdir -p afile)", which fails: it is a file
    (issue 30 round 23, T1; ``export`` asked this since round 14, B259)."""
    from pathlib import Path

    for parent in Path(path).parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else str(parent)
    return None


def not_a_file(path) -> str | None:
    """What stands where a file a reader needs is expected, to follow its name in an error ("is a symbolic link to
    '/nonexistent', which does not exist, ...", "is a folder, not a file", "is a character device, ..."); None when
    nothing is there or it is a regular file. A companion file (meta.json, train_freq.npy, results.jsonl, an adopted
    config.json) that was a link to nothing or to a device was "not found", "no meta.json" or "no result rows", while
    ``ls`` lists it (issue 30 round 18, G236, G400, G407, G411)."""
    import os

    if not os.path.lexists(path) or os.path.isfile(path):
        return None
    if os.path.isdir(path):
        return "is a folder, not a file"
    return missing(path)


def name_too_long(path) -> str | None:
    """"its name 'xxxx…' is 300 bytes, more than the 255 the file system allows for one name" (or the whole path
    past PATH_MAX) for a ``path`` that no file can have; None otherwise. An input given such a name (``eval --text
    X300.txt``, ``report X300``) was refused with the output advice of ENAMETOOLONG, "choose a shorter name ...
    (--out)" (issue 30 round 14, B328); the readers ask ``os.path.exists``, which says False where ``Path.exists``
    raises it."""
    import os

    raw = os.fsencode(path)
    where = os.path.dirname(os.path.abspath(raw)) or b"/"
    while not os.path.isdir(where) and os.path.dirname(where) != where:
        where = os.path.dirname(where)
    try:
        name_max, path_max = os.pathconf(where, "PC_NAME_MAX"), os.pathconf(where, "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > name_max:
        shown = os.fsdecode(longest[:24]) + "…"
        return (f"its name {shown!r} is {len(longest):,} bytes, more than the {name_max} the file system allows for one "
                f"name")
    if len(raw) >= path_max:
        return f"the path is {len(raw):,} bytes, more than the {path_max - 1:,} the file system allows for a path"
    return None


def not_regular(path) -> str | None:
    """"is a named pipe (FIFO), not a regular file" (a socket, a device) for a ``path`` that exists as something a
    reader of files cannot read whole; None for a regular file, a folder or nothing there. A results.jsonl that was a
    pipe was "no result rows" / "no results.jsonl yet" (issue 30 round 11, R107, R108): the file is there."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    for test, kind in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"is {kind}, not a regular file"
    return None


def not_a_folder(path) -> str | None:
    """"is a file, not a folder" (or "is a named pipe (FIFO), not a folder", a socket, a device) for a ``path`` that
    exists, where a folder is expected, as something else; None for a folder or nothing there. A named pipe given as
    a data folder was "not a prepared data folder (no meta.json); prepare it with `leviathan prepare SOURCE --out
    fifo1`", which prepare then refused as "a file" (issue 30 round 28, T48): the line says what stands there."""
    import os

    if not os.path.exists(path) or os.path.isdir(path):
        return None
    special = not_regular(path)
    return f"{special.removesuffix(', not a regular file')}, not a folder" if special else "is a file, not a folder"


def not_a_folder_there(path) -> str:
    """``not_a_folder``'s words for a ``path`` known to stand where a folder is needed (``file_above``'s blocker, a
    --data-root that is no folder): "is a named pipe (FIFO), not a folder" for a pipe, which bench --cache-dir
    'fifo1/x' and lm-eval --data-root fifo1 called "a file" (issue 30 round 29, V8, V27); a dangling link is named as
    one (``missing``), anything else "is a file, not a folder"."""
    import os

    if not os.path.exists(path) and os.path.islink(path):
        return missing(path)
    return not_a_folder(path) or "is a file, not a folder"


def _read_only(path) -> bool:
    """Whether the file system holding ``path`` (or its nearest existing parent) is mounted read-only."""
    import os

    where = os.path.abspath(os.fspath(path))
    while not os.path.exists(where) and os.path.dirname(where) != where:
        where = os.path.dirname(where)
    try:
        return bool(os.statvfs(where).f_flag & os.ST_RDONLY)
    except OSError:
        return False
