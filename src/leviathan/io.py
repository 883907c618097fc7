"""Small shared I/O: atomic file writes, JSON lines, the data and cache folders, a description of the machine.

    atomic_write_json(run_dir / "summary.json", summary)   # readers never see a half-written file
    read_metrics(run_dir)                                   # rows of metrics.jsonl (read_jsonl: any JSON lines)
    data_root("--data-root value or None")                  # the data folder: corpora, eval texts, task files
    cache_root() / "bench"                                  # where a verb caches what it can rebuild
    hardware_info()                                         # CPU model, cores, torch threads, GPU if any

Data folder rule (the one place it is written): the explicit value (``--data-root``), else ``$LEVIATHAN_DATA``,
else ``$LEVIATHAN_SHARED/data`` (deprecated: it warns), else, for ``demo`` and ``bench``, ``../shared/data`` seen
from the current folder; otherwise None. Cache root rule: ``$LEVIATHAN_CACHE``, else ``$XDG_CACHE_HOME/leviathan``,
else ``~/.cache/leviathan``; whatever lies under it can be deleted and is rebuilt on next use.

Footgun: ``atomic_write_*`` replace the file by rename, so the target folder must be writable and the temporary
file (``.<name>.tmp<pid>``, shorter for a long name) lives beside it; on a failure the old file is left as it was.
Their failures are the verbs' one line (``errors.StorageError``, ``storage.write_failure``: a folder in the file's
place, a missing folder, a read-only disk, a name too long), still the OSError they were; text that UTF-8 cannot hold
(a lone surrogate) and JSON that is not JSON (NaN, infinity, an object json cannot write) are an
``ArgumentValueError`` / ``ArgumentTypeError`` before anything is written (issue 30 round 25, Y306-Y316).

Permissions: every file the package writes ends with the mode a plain ``open(path, "w")`` gives it (0644 under the
usual umask 022), so a group or a serving process can read a model. safetensors' ``save_file`` (a private
temporary file renamed: 0600) and ``tempfile.mkdtemp``/``mkstemp`` (0700/0600 on purpose) do not, and are followed
by ``publish``.
"""

from __future__ import annotations

import errno
import json
import os
import platform
import warnings
from pathlib import Path
from typing import Any, Iterable, Optional

from .cache_place import cache_root  # noqa: F401 - the cache root rule, re-exported (its own module: errors needs it)
from .json_text import repeated_key

DATA_ENV = "LEVIATHAN_DATA"
OLD_DATA_ENV = "LEVIATHAN_SHARED"  # deprecated: names the folder *above* data/
DEFAULT_DATA = Path("..") / "shared" / "data"  # beside a checkout, seen from its root

# --------------------------------------------------------------------------------------------
# atomic writes


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file + fsync + rename: readers never see a partial file."""
    _check_write("atomic_write_text", path, text, str)
    _write_together({path: text}, (), "atomic_write_text")


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """``atomic_write_text`` for bytes (a figure's PNG): a temporary file beside ``path``, fsync, rename. A failure
    names ``path``, never the temporary file the user did not ask for."""
    _check_write("atomic_write_bytes", path, data, (bytes, bytearray, str))
    _write_together({path: data}, (), "atomic_write_bytes")


def atomic_write_together(files: dict, remove: Iterable = ()) -> None:
    """Write several files (path -> text or bytes) so that they change together or not at all: every one is first
    written whole into its temporary file beside it (fsync), and only then are they renamed into place (a rename
    needs no space). Files written one ``atomic_write_text`` after the other left the first in place when the disk
    filled at the second: collect_results.py put results.jsonl into ``DEST/<grid>`` without its grid.json (issue 30
    round 16, C33). On a failure every temporary file is removed and the error names the file asked for.

    The renames are all or none too (``replace_together``; round 22, S22): one file that could not be replaced (made
    immutable, a folder in its place) left the others already replaced, a tokenizer.json beside another save's
    record. ``remove``: files of the earlier set that this one does not write (S547), removed with it."""
    remove = _check_together(files, remove)  # a list: a generator given as remove= is read once
    _write_together(files, remove, "atomic_write_together")


def _write_together(files: dict, remove: Iterable, api: str) -> None:
    """``atomic_write_together``'s work, its arguments checked; a failure is worded for ``api``, the helper called
    (``storage.write_failure``)."""
    from .empty_paths import refuse_folder_spelling
    from .errors import UserError
    from .replace_together import replace_together
    from .storage import write_failure

    for path in files:  # 'x/' was a file named x; a last '..' was the rename's raw EBUSY (issue 30 round 27, R3)
        refuse_folder_spelling(path, f"{api}: path", "NAME")
    encoded = {Path(path): _utf8(api, path, data) for path, data in files.items()}  # before any file is opened
    remove = list(remove)
    _refuse_special(api, [*encoded, *map(Path, remove)])  # remove= unlinked a user's pipe too (round 27, S239)
    written: list[tuple[Path, Path]] = []
    path = None
    try:
        for path, data in encoded.items():
            written.append((path, _temporary_of(path)))
            with open(written[-1][1], "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        if len(written) == 1 and not remove:
            path, tmp = written[0]
            os.replace(tmp, path)  # one rename is already all or none
            return
        path = None
        earlier = replace_together([(tmp, path) for path, tmp in written], aside=_aside_of, remove=list(remove))
    except UserError:  # worded already (another writer's race, W459): write_failure would blame the folder
        for _, tmp in written:
            _remove(tmp)
        raise
    except OSError as e:
        for _, tmp in written:
            _remove(tmp)
        raise write_failure(e if path is None else named(e, path, _temporary_of(path)), api) from None
    except BaseException:
        for _, tmp in written:
            _remove(tmp)
        raise
    for aside in earlier:
        _remove(aside)


def _refuse_special(api: str, paths: Iterable[Path]) -> None:
    """``ArgumentValueError`` when a path to write is a device, a named pipe or a socket (``errors.not_regular``): the
    rename that makes a write atomic replaces whatever stands at the path, and ``atomic_write_text('/dev/null', 'x')``
    put an ordinary file in place of the machine's /dev/null; a user's pipe and a character device were replaced the
    same way (issue 30 round 26, Q350, Q351, Q418-Q420); ``atomic_write_together``'s ``remove=`` unlinked a user's
    pipe (round 27, S239). Checked before any file is opened; nothing is written or removed."""
    from .errors import ArgumentValueError, not_regular

    for path in paths:
        if (problem := not_regular(path)) is not None:
            raise ArgumentValueError(f"{api}: {str(path)!r} {problem}; nothing was written or removed (an atomic "
                                     f"write replaces what stands at its path with a file, and its remove= deletes "
                                     f"it); name a regular file's path")


def _check_write(api: str, path: Any, data: Any, kinds: Any) -> None:
    """UserError naming the argument when ``path`` is not a path or ``data`` not of ``kinds`` (issue 30 round 22: the
    atomic writers took their arguments unchecked, ``atomic_write_text(p, 5)`` an AttributeError, a path of None
    os.fspath's TypeError naming no argument)."""
    from .value_rules import api_check, path_problem

    api_check(api, "path", path_problem(path), "pass the path of the file to write")
    if not isinstance(data, kinds):
        wanted = "a str" if kinds is str else "bytes (or a str)"
        api_check(api, "data", f"expected {wanted}, got {type(data).__name__} {data!r:.40}", "pass what to write")


def _utf8(api: str, path: Any, data: Any) -> bytes:
    """``data`` as the bytes written: text as UTF-8; an ``ArgumentValueError`` naming the character for text UTF-8
    cannot hold (a lone surrogate, what ``errors='surrogateescape'`` decoding leaves): it was the raw
    UnicodeEncodeError (issue 30 round 25, Y310; the tokenizer's words, W506)."""
    if not isinstance(data, str):
        return bytes(data)
    try:
        return data.encode()
    except UnicodeEncodeError as e:
        from .errors import ArgumentValueError

        raise ArgumentValueError(f"{api}: the text for {str(path)!r} holds {data[e.start]!r} at character "
                                 f"{e.start:,}, a lone surrogate that is not UTF-8; nothing was written; decode the "
                                 f"source with errors='replace' (or 'surrogatepass' and re-encode)") from None


def _check_together(files: Any, remove: Any) -> list:
    """``atomic_write_together``'s arguments: ``files`` a dict of path -> str or bytes, ``remove`` a list of paths (a
    single path given as ``remove`` was iterated letter by letter); ``remove`` as a list."""
    from .value_rules import api_check, path_problem

    if not isinstance(files, dict):
        api_check("atomic_write_together", "files", f"expected a dict of path -> text or bytes, got "
                  f"{type(files).__name__} {files!r:.40}", "pass {path: data, ...}")
    for path, data in files.items():
        _check_write("atomic_write_together", path, data, (bytes, bytearray, str))
    if isinstance(remove, (str, bytes, os.PathLike)) or not hasattr(remove, "__iter__"):
        api_check("atomic_write_together", "remove", f"expected a list of paths, got {remove!r:.60}",
                  "pass [path, ...] (or leave it out)")
    remove = list(remove)
    api_check("atomic_write_together", "remove", next(filter(None, map(path_problem, remove)), None),
              "pass [path, ...] (or leave it out)")
    _refuse_named_twice(files, remove)
    return remove


def _refuse_named_twice(files: dict, remove: list) -> None:
    """``ArgumentValueError`` when one file is named twice in an all-or-none write: under two spellings in ``files``
    ('b8/t1' and './b8/t1', a str and a Path: two keys of the dict; the later content won, the other was lost without
    a word), or both written and removed (``remove``: it was left written). Compared by ``_entry`` (the folder
    resolved, the name kept: the rename replaces a link at the path, not the file it points to). Issue 30 round 26,
    Q361, Q363."""
    from .errors import ArgumentValueError

    seen: dict[str, tuple[str, Any]] = {}
    for role, paths in (("files", files), ("remove", remove)):
        for path in paths:
            entry = _entry(path)
            if entry in seen:
                first_role, first = seen[entry]
                where = f"{role} names" if role == first_role else "files (to write) and remove (to remove) name"
                raise ArgumentValueError(f"atomic_write_together: {where} one file twice, {entry!r}, as "
                                         f"{os.fspath(first)!r} and {os.fspath(path)!r}; nothing was written; name "
                                         f"each file once (in files or in remove)")
            seen[entry] = (role, path)


def _entry(path: Any) -> str:
    """``path`` as the folder entry a rename replaces: its folder resolved (``..``, ``.``, links, the current
    folder), its own name as given."""
    head, name = os.path.split(os.path.abspath(os.fsdecode(path)))
    return os.path.join(os.path.realpath(head), name)


def _aside_of(path: Path) -> Path:
    """Where ``atomic_write_together`` moves ``path``'s earlier file until the new set is in place."""
    tmp = _temporary_of(path)
    return tmp.with_name(tmp.name + ".earlier")


_LONG_NAME = 200  # bytes of a temporary file's name past which it is made short


def _temporary_of(path: Path) -> Path:
    """The temporary file ``atomic_write_bytes`` writes beside ``path`` (and ``check_writable`` tries):
    ``.NAME.tmpPID``, or for a long NAME ``.tmp-SHA.tmpPID`` (its first 12 hex digits of sha256). ``bench --json``
    with a 250-byte name, which the file system takes, was refused as "the file name is too long": its temporary
    name, 12 bytes longer, was past the 255-byte limit (issue 30 round 17, D73)."""
    name = f".{path.name}.tmp{os.getpid()}"
    if len(os.fsencode(name)) > _LONG_NAME:
        import hashlib

        name = f".tmp-{hashlib.sha256(os.fsencode(path.name)).hexdigest()[:12]}.tmp{os.getpid()}"
    return path.with_name(name)


def check_writable(path: str | os.PathLike) -> None:
    """Raise the ``OSError`` that ``atomic_write_bytes(path, ...)`` would meet (a missing or read-only folder, no
    permission), by creating and removing the temporary file it would write; the error names ``path``. For a verb
    that writes its result only after minutes of work (``bench --json``): find out before, not after. What stands at
    ``path`` is judged as the writer judges it: a device, a pipe or a socket is its ``ArgumentValueError``
    (``_refuse_special``), a folder the rename's IsADirectoryError; a named pipe was answered writable, which the
    writer then refused (issue 30 round 27, S267)."""
    from .value_rules import api_check, path_problem

    api_check("check_writable", "path", path_problem(path), "pass the path of the file to write")
    path = Path(path)
    _refuse_special("check_writable", [path])
    if path.is_dir() and not path.is_symlink():  # the rename onto a folder fails; onto a link it replaces the link
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    tmp = _temporary_of(path)
    try:
        with open(tmp, "xb"):
            pass
    except OSError as e:
        raise named(e, path, tmp) from None
    _remove(tmp)


def _remove(tmp: Path) -> None:
    """Delete a temporary file if it is there; on a read-only disk even a missing one answers EROFS, which must not
    replace the error being reported."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


def named(e: OSError, path: str | os.PathLike, tmp: str | os.PathLike | None = None) -> OSError:
    """``e`` with ``path`` as its file name when it has none (or names ``tmp``, the temporary file written in its
    place): a write or flush that fails on a full disk raises ``OSError(ENOSPC)`` naming no file (only ``open`` names
    one), so the one-line error could not say which file the disk refused (found on a real full tmpfs,
    tests/reliability/test_real_full_disk.py); an ``open`` on a read-only disk named ``.NAME.tmpPID``."""
    if e.errno is None or (e.filename is not None and (tmp is None or os.fspath(e.filename) != os.fspath(tmp))):
        return e
    return OSError(e.errno, e.strerror, os.fspath(path))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    """``obj`` as indented JSON (keys in their order, a final newline), written atomically. Strict JSON: NaN and
    infinity are refused (``json.dumps`` wrote the tokens NaN and Infinity, which are not JSON and which the package's
    readers refuse: Y311), as is what JSON cannot hold (a tensor, an object: json's raw TypeError, Y312, Y313); numpy
    scalars are written as the numbers they are (``np.bincount`` counts, a token file's ids: Y314)."""
    from .value_rules import api_check, path_problem

    api_check("atomic_write_json", "path", path_problem(path), "pass the path of the file to write")
    _write_together({path: _json_text(path, obj)}, (), "atomic_write_json")


def _json_text(path: str | os.PathLike, obj: Any) -> str:
    """``obj`` as ``atomic_write_json`` writes it; an ``ArgumentTypeError`` / ``ArgumentValueError`` naming where in
    ``obj`` the value JSON cannot hold lies."""
    from .errors import ArgumentTypeError, ArgumentValueError

    try:
        text = json.dumps(obj, indent=2, sort_keys=False, allow_nan=False, default=_plain_number) + "\n"
    except TypeError as e:
        raise ArgumentTypeError(f"atomic_write_json: obj {e}; nothing was written to {str(path)!r}; pass plain values "
                                f"(dict, list, str, int, float, bool, None): convert a tensor or array with .item() "
                                f"or .tolist()") from None
    except ValueError as e:  # allow_nan=False, or a list or dict that holds itself ("Circular reference detected")
        where = _non_finite(obj, "obj") if "Out of range float" in str(e) else None
        problem = f"{where[0]} is {where[1]!r}, which is not JSON" if where else f"obj cannot be written as JSON ({e})"
        fix = "write None (null) for a missing number" if where else "pass values that do not hold themselves"
        raise ArgumentValueError(f"atomic_write_json: {problem}; nothing was written to {str(path)!r}; {fix}") from None
    if (repeated := repeated_key(obj, "obj")) is not None:
        raise ArgumentValueError(f"atomic_write_json: {repeated[0]} has keys {repeated[1]!r} and {repeated[2]!r}, "
                                 f"both written as the key \"{repeated[3]}\", which the readers refuse (JSON would keep "
                                 f"only the last); nothing was written to {str(path)!r}; give each key once, as text")
    return text


def _plain_number(value: Any) -> Any:
    """``json.dumps``' ``default``: a numpy (``numbers``) integer, float or bool scalar as the Python number it is;
    anything else refused by its type."""
    import numbers

    import numpy as np

    if isinstance(value, np.bool_):  # numpy's bool registers no ``numbers`` ABC
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"holds {type(value).__name__} {value!r:.40}, which JSON cannot hold")


def _non_finite(value: Any, where: str, depth: int = 0) -> tuple[str, float] | None:
    """(where, value) of the first NaN or infinity in ``value`` (dicts and lists walked, to json's own depth limit),
    None when there is none; asked only once json found one (a value that holds itself is json's other refusal)."""
    import math
    import numbers

    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return None if math.isfinite(value) else (where, float(value))
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items if depth < 100 else ():
        found = _non_finite(item, f"{where}[{key!r}]", depth + 1)
        if found:
            return found
    return None


# --------------------------------------------------------------------------------------------
# permissions


def current_umask() -> int:
    """The process's umask, read without changing it where Linux shows it (/proc/self/status); elsewhere set and
    restored at once (``os.umask`` has no read-only form: a thread creating a file in between would see 0)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_mode(directory: bool = False) -> int:
    """The mode ``open``/``mkdir`` give a new file (0666) or folder (0777) under the current umask: 0644 / 0755
    under the usual umask 022."""
    from .value_rules import check_switches

    check_switches("default_mode", directory=directory)  # 'no' was true (round 30, Y631)
    return (0o777 if directory else 0o666) & ~current_umask()


def publish(path: str | os.PathLike, *, executable: bool = False) -> None:
    """Give ``path`` the mode a plain ``open`` would have (``default_mode``): a file, or a folder and everything
    under it (folders searchable, files not executable unless ``executable``). For what a library or ``tempfile``
    created private (see the module docstring); symlinks are left alone. ``executable`` is a switch (round 22: a
    text such as 'no' read as true). A path that is not there is one StorageError naming it (still an OSError, errno
    ENOENT): it was os.chmod's raw FileNotFoundError (issue 30 round 28, U464)."""
    from .value_rules import api_check, check_switches, path_problem

    api_check("publish", "path", path_problem(path), "pass the file or folder to publish")
    check_switches("publish", executable=executable)
    path = Path(path)
    if not os.path.lexists(path):
        from .errors import StorageError, missing

        raise StorageError(f"publish: path {os.fspath(path)!r} {missing(path)}; pass the file or folder that was "
                           f"written (publish gives an existing path its mode)",
                           FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path)))
    file_mode, dir_mode = default_mode(directory=executable), default_mode(directory=True)
    if path.is_symlink():
        return
    if not path.is_dir():
        os.chmod(path, file_mode)
        return
    os.chmod(path, dir_mode)
    for folder, dirs, files in os.walk(path):
        for name in dirs:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), dir_mode)
        for name in files:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), file_mode)


# --------------------------------------------------------------------------------------------
# JSON lines


def read_jsonl(path: str | os.PathLike) -> list:
    """Values of a JSON-lines file; blank lines, a line cut short by a kill and a line that is not UTF-8 are skipped
    (quietly: a torn last line of metrics.jsonl is expected after a kill; ``leviathan.jsonl`` reports them). A file
    none of whose lines is JSON is a UserError (``check_some_json``): a damaged file, or no JSON-lines file at all,
    was read as an empty one, [] without a word (issue 30 round 25, Y317); an unreadable one is
    ``jsonl.read_json_lines``' one line (Y318, Y320). A line giving a key twice is refused (``refuse_repeated_keys``).
    A line that is no JSON before the last line is a UserError naming it: only a kill's torn last line is expected,
    and a prose file whose dialogue lines parse as JSON strings returned those strings, the rest skipped without a
    word (issue 30 round 35, AI215)."""
    from .errors import UserError
    from .jsonl import CUT_SHORT, read_json_lines
    from .value_rules import check_read_path

    check_read_path("read_jsonl", "path", path, "pass the path of a JSON-lines file")
    values, damaged = read_json_lines(path)
    refuse_repeated_keys(Path(path), damaged)
    check_some_json(Path(path), values, damaged, "a JSON-lines file", "pass a file of one JSON value a line")
    last = max(number for number, _ in values + damaged)
    inside = [(number, why) for number, why in damaged if why == CUT_SHORT and number < last]
    if inside:
        raise UserError(f"{str(path)!r}: line {inside[0][0]} {CUT_SHORT}, before the file's last line"
                        f"{f' (and {len(inside) - 1} more such lines)' if len(inside) > 1 else ''}: only a last line "
                        f"cut short by a kill is skipped; repair or remove it, or pass a file of one JSON value a line")
    return [value for _, value in values]


def read_metrics(path: str | os.PathLike) -> list[dict]:
    """Rows of a run's metrics.jsonl (a run folder or the file itself; a torn last line is skipped); a missing
    file, or one none of whose lines is JSON, is a UserError naming the fix (``metrics_file``,
    ``check_some_json``), and so is a line that is JSON but no object: the logger writes one object a row
    (``train.metrics``), and a list or a text was returned as a metrics row without a word (issue 30 round 26,
    Q366). Footgun: the rows are not typed or checked further (``train.metrics.read_metric_rows`` does that)."""
    from .errors import UserError
    from .jsonl import read_json_lines

    path = metrics_file(path)
    values, damaged = read_json_lines(path)
    refuse_repeated_keys(path, damaged)
    check_some_json(path, values, damaged)
    for number, value in values:
        if not isinstance(value, dict):
            kind = {list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")
            kind = "null" if value is None else kind
            raise UserError(f"{str(path)!r} line {number} is {kind} ({value!r:.40}), not a metrics row (a JSON "
                            f"object); remove that line, or pass a run directory or its metrics.jsonl")
    return [value for _, value in values]


def metrics_file(path: str | os.PathLike) -> Path:
    """The metrics.jsonl that ``path`` names (a run folder or the file); a UserError when there is none."""
    from .errors import UserError, name_too_long, not_a_file
    from .value_rules import check_read_path

    check_read_path("metrics_file", "path", path, "pass a run directory or its metrics.jsonl")  # U480's kind
    path = Path(path)
    if os.path.isdir(path):  # Path.is_dir raised a name too long for the file system (issue 30 round 32, AC322's kind)
        path = path / "metrics.jsonl"
    if not os.path.isfile(path):  # a pipe or a folder there was "no metrics file" (issue 30 round 23, U379's kind)
        what = f"{str(path)!r} {not_a_file(path)}" if not_a_file(path) else f"no metrics file at {str(path)!r}"
        what += f" ({too_long})" if (too_long := name_too_long(path)) else ""
        raise UserError(f"{what}; pass a run directory or its metrics.jsonl")
    return path


def refuse_repeated_keys(path: Path, damaged: list[tuple[int, str]]) -> None:
    """UserError naming the first line of a JSON-lines file whose object gives a key twice (``jsonl.REPEATED_KEY``):
    ``read_jsonl`` took ``{"a": 1, "a": 2}`` as ``{"a": 2}`` without a word (issue 30 round 28, U455). Its other
    damaged lines stay quiet skips (a torn last line is expected after a kill); this one no kill writes."""
    from .errors import UserError
    from .jsonl import REPEATED_KEY

    for number, why in damaged:
        if why.startswith(REPEATED_KEY):
            raise UserError(f"{str(path)!r} line {number} {why}; keep one of them (no leviathan writer repeats a key)")


def check_some_json(path: Path, values: list, damaged: list, what: str = "a run's metrics.jsonl",
                    fix: str = "pass a run directory or its metrics.jsonl") -> None:
    """UserError when ``path`` was given as a metrics file (``what``, refused with ``fix``) but none of its lines is
    JSON (``values`` and ``damaged``: its lines as ``jsonl.read_json_lines`` read them): a PNG given to ``analyze
    efficiency --model`` was "no validation rows" (issue 30 round 6), and ``read_metrics('data1/train.bin')``, a
    token file, returned [] without a word (round 18, G303)."""
    if values or not damaged:
        return
    from .data.binary import binary_kind
    from .errors import UserError

    with open(path, "rb") as f:
        kind = binary_kind(f.read(8192))
    raise UserError(f"{str(path)!r} is not {what} ({kind or f'line {damaged[0][0]} {damaged[0][1]}'}; none of its "
                    f"lines is a JSON row); {fix}")


# --------------------------------------------------------------------------------------------
# folders


def data_root(explicit: str | os.PathLike | None = None, *, search: bool = False) -> Optional[Path]:
    """The data folder (see the module docstring for the rule); ``search`` also tries ``../shared/data``. ``explicit``
    that is not a path (nor None) is a UserError: ``data_root(5)`` was pathlib's raw TypeError (issue 30 round 25,
    Y325). '' is refused as every other path reader refuses it: it returned None ("no data folder") without a word,
    so a caller's unset variable fell back to $LEVIATHAN_DATA (round 28, U463); pass None for the rule."""
    from .value_rules import api_check, check_switches, path_problem

    if explicit is not None:
        api_check("data_root", "explicit", path_problem(explicit), "pass the data folder, or None for the rule")
    check_switches("data_root", search=search)
    value = explicit or os.environ.get(DATA_ENV)
    if not value and os.environ.get(OLD_DATA_ENV):
        warnings.warn(f"${OLD_DATA_ENV} is deprecated and will be removed in the next release; set "
                      f"{DATA_ENV}=${OLD_DATA_ENV}/data instead", DeprecationWarning, stacklevel=2)
        value = Path(os.environ[OLD_DATA_ENV]) / "data"
    if value:
        return Path(value).expanduser()
    if search and DEFAULT_DATA.is_dir():
        return DEFAULT_DATA.resolve()
    return None


def books_root() -> Optional[Path]:
    """The data folder (``data_root``, searched) when it holds the Gutenberg books (``gutenberg/train``, ``valid``).
    A folder $LEVIATHAN_DATA names that does not exist (or is a file) is a UserError, as lm-eval's: demo and bench
    trained on the standard library's sources without a word (issue 30 round 27, R78); one that exists without the
    books is their fallback, which ``books_note`` says."""
    root = data_root(search=True)
    if root is not None and not root.is_dir():  # only a setting names a folder that is not there (the default is
        from .errors import UserError          # searched for)
        from .errors import not_a_folder_there

        what = not_a_folder_there(root) if root.exists() else "does not exist"
        raise UserError(f"the data folder {str(root)!r} (named by ${_data_setting()}) {what}; set "
                        f"{_data_setting()} to the folder holding gutenberg/train and gutenberg/valid, or unset it to "
                        f"use the Python standard library's sources")
    # each split a folder holding a book (a .txt, what bench reads and the books are): two empty folders were taken as
    # the books, so bench trained on the stdlib without the note and demo refused with prepare's "use a glob" (round
    # 35, AH129, AH132)
    ok = root is not None and all(_holds_books(root / "gutenberg" / split) for split in ("train", "valid"))
    return root.resolve() if ok else None


def _holds_books(folder: Path) -> bool:
    """Whether ``folder`` is a folder holding at least one book (a regular .txt file)."""
    try:
        return folder.is_dir() and any(p.is_file() for p in folder.glob("*.txt"))
    except OSError:
        return False


def books_note() -> Optional[str]:
    """The line for a data folder a setting names that holds no Gutenberg books, so the standard library's sources are
    used instead (None otherwise): ``LEVIATHAN_DATA=corpus leviathan demo`` trained on them without a word (issue 30
    round 27, R77). The default ``../shared/data`` without books is the documented fallback, said by the corpus'
    name."""
    if books_root() is not None or not _data_setting():
        return None
    return (f"note: the data folder {str(data_root())!r} (named by ${_data_setting()}) holds no Gutenberg books "
            f"(gutenberg/train and gutenberg/valid); the Python standard library's sources are used instead")


def _data_setting() -> str | None:
    """The environment variable that names the data folder, None when neither is set."""
    return DATA_ENV if os.environ.get(DATA_ENV) else OLD_DATA_ENV if os.environ.get(OLD_DATA_ENV) else None


# --------------------------------------------------------------------------------------------
# the machine


def _cpuinfo() -> dict[str, str]:
    """The fields of the first processor in /proc/cpuinfo ({} where there is none): what ``cpu_model`` and
    ``cpu_id`` read."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what ``platform`` knows."""
    return _cpuinfo().get("model name") or platform.processor() or platform.machine()


def cpu_id() -> Optional[str]:
    """The CPU's vendor, family, model and stepping from /proc/cpuinfo ("AuthenticAMD cpu family 25 model 1 stepping
    1"), None where it has none. The model name alone does not tell machines apart: two sessions' "AMD EPYC" hosts
    gave validation losses that differ in the 8th digit for the same commit and seed (results/o200k-width/LOG.md)."""
    fields = _cpuinfo()
    parts = [fields.get("vendor_id")] + [f"{k} {fields[k]}" for k in ("cpu family", "model", "stepping") if k in fields]
    return " ".join(p for p in parts if p) or None


def load_average() -> Optional[list[float]]:
    """The 1, 5 and 15 minute load averages, rounded to 0.01; None where the OS has none."""
    if not hasattr(os, "getloadavg"):
        return None
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def hardware_info() -> dict:
    """Where something was measured: device, CPU model and identity (``cpu_id``), the vector instructions torch's CPU
    kernels use (``cpu_capability``: AVX2, AVX512, ...; they decide the last bits of a sum), cores, torch version and
    threads, GPU if any, host."""
    info = {"device": "cpu", "cpu": cpu_model(), "cpu_id": cpu_id(), "cpu_capability": None, "cores": os.cpu_count(),
            "torch_threads": None, "gpu": None, "torch": None, "host": platform.node()}
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        info["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        if torch.cuda.is_available():
            info["device"] = "cuda"
            info["gpu"] = torch.cuda.get_device_name(0)
            info["num_gpus"] = torch.cuda.device_count()
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return info


def sha256_file(path: str | os.PathLike) -> str:
    """The hex sha256 of the file at ``path``, read in blocks (the one file digest of a checkpoint's state.json, an
    output marker's ``sha256`` and a sharded save's shard record). A folder, a named pipe, a socket or a device at
    ``path`` is a UserError naming it: a pipe blocked ``open`` until a writer came, for ever (issue 30 round 27, S261),
    and a folder was the raw IsADirectoryError (S262). The path is held to ``value_rules.path_problem`` first, as every
    reader's place: a NUL byte was Python's raw "ValueError: embedded null byte" (issue 30 round 31, AA368). A failed
    read is ``storage.read_failure``'s one line, as every reader's: a name too long for the file system and a path
    under a file were the raw OSError and NotADirectoryError (issue 30 round 32, AC322, AC325)."""
    import hashlib

    from .errors import UserError, not_a_file
    from .storage import read_failure
    from .value_rules import check_read_path

    check_read_path("sha256_file", "path", path, "pass the path of a regular file")
    if (problem := not_a_file(path)) is not None:
        raise UserError(f"sha256_file: {os.fspath(path)!r} {problem}; nothing was read; pass the path of a regular "
                        f"file")
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 22):
                digest.update(block)
    except OSError as e:  # a name too long, a path under a file (round 32, AC322, AC325), nothing there, no permission
        raise read_failure(e, path, "pass the path of a regular file") from None
    return digest.hexdigest()
