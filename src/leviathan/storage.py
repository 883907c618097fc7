"""Write failures that libraries report without an errno, turned back into the OSError they are.

    err = storage_oserror(e, path)          # OSError(ENOSPC, ...) for torch's "unexpected pos 704 vs 598"; else None
    errors.storage_error_message(err)       # "'PATH': no space left on device (the disk is full, or out of ..."
    raise write_failure(e, "atomic_write_text") from None   # a helper's failed write: StorageError's one line
    raise read_failure(e, path, "pass a JSON file") from None   # a helper's failed read: the same, for an input

Python's own writes raise ``OSError`` with an errno, which the CLI turns into one line. Three do not:
``torch.save`` on a full disk (``RuntimeError("[enforce fail at inline_container.cc:...] . unexpected pos 704 vs
598")`` or ``"... PytorchStreamWriter failed writing file ...``) and numpy's ``ndarray.tofile`` on a disk that fills
part-way (``OSError("19517 requested and 3072 written")``, found on a real full tmpfs): no errno, no path, so the
disk is asked (no free blocks, ``statvfs``: ENOSPC; a file at the process's size limit, ``ulimit -f``: EFBIG;
otherwise EIO); safetensors' ``SafetensorError`` carries the Rust I/O error in its text (``IoError(Os { code: 28, ... })``), and the errno is taken from there.

The low-level helpers a user can import (``io.atomic_write_*``, ``locking.folder_lock``, ``jsonl.read_json_lines``,
``json_text.read_file``) turn their own failed writes and reads into the verbs' line with ``write_failure`` and
``read_failure``: they raised the raw OSError ("[Errno 21] Is a directory", "[Errno 36] File name too long", a
missing folder's FileNotFoundError) where the verbs say one line with the fix (issue 30 round 25, Y306-Y309, Y316,
Y318, Y339, Y356, Y361).

Anything else is None: a bug, to be reported with its traceback. Footgun: the torch check matches the
message text of torch's C++ writer; a torch that words it differently is reported as a traceback again,
which a test of this module (tests/reliability/test_full_disk.py) would show.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

_TORCH_WRITE = ("PytorchStreamWriter failed writing", "file write failed", "unexpected pos")
_OS_CODE = re.compile(r"(?:Os \{ code: |os error )(\d+)")
_SHORT_WRITE = re.compile(r"^\d+ requested and \d+ written$")  # numpy's tofile


def _disk_full(path: str | os.PathLike | None) -> bool:
    where = Path(path) if path else Path.cwd()
    while not where.exists() and where.parent != where:
        where = where.parent
    try:
        st = os.statvfs(where if where.is_dir() else where.parent)
    except OSError:
        return False
    return st.f_bavail == 0


def storage_oserror(e: BaseException, path: str | os.PathLike | None = None) -> OSError | None:
    """``e`` as an OSError with an errno when it is a failed write (see the module docstring), else None."""
    text = str(e)
    if isinstance(e, OSError) and e.errno is None and _SHORT_WRITE.match(text):
        return _from_disk(path)
    if isinstance(e, OSError):
        return e
    code = _OS_CODE.search(text)
    if code and (type(e).__name__ == "SafetensorError" or type(e) is Exception):  # tokenizers' save: a bare Exception
        number = int(code.group(1))
        return OSError(number, os.strerror(number), os.fspath(path) if path is not None else None)
    if isinstance(e, RuntimeError) and any(marker in text for marker in _TORCH_WRITE):
        return _from_disk(path)
    loop = _SYMLINK_LOOP.match(text) if isinstance(e, RuntimeError) else None
    if loop:  # pathlib's resolve() before Python 3.13 (issue 30 round 8: data.path a link that loops)
        return OSError(errno.ELOOP, os.strerror(errno.ELOOP), loop.group(1))
    return None


_SYMLINK_LOOP = re.compile(r"^Symlink loop from '(.*)'$", re.S)


def as_asked(name, tmp: Path, out: Path) -> Path:
    """The path a failed write names, as the user asked for it: inside ``out``, not the temporary folder built in its
    place (no name: ``out`` itself): export's and ``save_pretrained``'s (``hf.save_folder``)."""
    if not name:
        return out
    path = Path(os.fspath(name))
    return out / path.relative_to(tmp) if path.is_relative_to(tmp) else path


def _past_size_limit(path: str | os.PathLike | None) -> bool:
    """Whether ``path`` is a file that reached the process's file-size limit (``ulimit -f``: the kernel refuses the
    write past it with EFBIG, which numpy's short write does not carry; it was named an input/output error, issue 30
    round 5), or a folder holding such a file. A short write stops at the limit, so the file ends within a block or so
    of it."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit == resource.RLIM_INFINITY or path is None:
            return False
        # a folder: the files in it (torch.save's failure names the checkpoint's temporary folder, whose optimizer.pt
        # stopped at the limit: it was "input/output error; check the disk", round 14, B244's check of every verb)
        files = [Path(path)] if Path(path).is_file() else [f for f in Path(path).rglob("*") if f.is_file()]
        return any(f.stat().st_size + 65536 >= limit for f in files)
    except (ImportError, OSError, ValueError):
        return False


def _from_disk(path: str | os.PathLike | None) -> OSError:
    """A failed write that carries no errno: ENOSPC when ``path``'s disk has no free blocks, EFBIG when the file
    reached the file-size limit, else EIO."""
    number = errno.ENOSPC if _disk_full(path) else errno.EFBIG if _past_size_limit(path) else errno.EIO
    return OSError(number, os.strerror(number), os.fspath(path) if path is not None else None)


@contextlib.contextmanager
def api_writes(api: str, path: str | os.PathLike | None = None) -> Iterator[None]:
    """Within it, a storage failure (an OSError with a storage errno, or a library's failed write that
    ``storage_oserror`` reads) is raised as ``errors.StorageError``: the verbs' one line, its fix naming ``api``'s
    argument (``errors.OUTPUT_OPTIONS``); ``path``: the place to name when the failure names none. Python API writes
    (``bake_adopted``, ``Tokenizer.save``) raised the raw OSError with no fix (issue 30 round 14, B260, B344). A
    StorageError of an inner API (``Tokenizer.save`` within ``prepare``) is worded again for ``api``, the one called;
    a failed print to the CLI's watched standard output is left to the CLI's line (``printed.lost_output``)."""
    from .errors import StorageError, storage_error_message
    from .printed import stdout_failed

    try:
        yield
    except StorageError as e:
        raise StorageError(storage_error_message(e, api) or e.message, e) from None
    except Exception as e:
        if stdout_failed():
            raise
        failed = storage_oserror(e, path)
        if failed is not None and not failed.filename and path is not None:
            failed = OSError(failed.errno, failed.strerror, os.fspath(path))
        message = storage_error_message(failed, api) if failed is not None else None
        if message is None:
            raise
        raise StorageError(message, failed) from None


def api_write(api: str, where: str) -> Callable:
    """Decorator: every storage failure of the public write ``api`` is an ``errors.StorageError`` (``api_writes``),
    ``where`` the name of its argument that chooses the place (named when the failure names no path). ``write_report``,
    ``train``, ``prepare``, ``to_hf`` and ``run_sweep`` raised the raw OSError ("[Errno 36] File name too long",
    NotADirectoryError, "[Errno 28] No space left on device") where the verbs say one line with the fix (issue 30
    round 17, E145, E149, E152-E154, E278, E280, E282, E287, E290, E291). Footgun: the whole call is inside, so an
    API's own ``except OSError`` still sees the raw error; only what leaves the call is turned."""
    import functools
    import inspect

    def wrap(function: Callable) -> Callable:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def written(*args, **kwargs):
            try:
                path = signature.bind_partial(*args, **kwargs).arguments.get(where)
            except TypeError:
                path = None
            with api_writes(api, path if isinstance(path, (str, os.PathLike)) and os.fspath(path) else None):
                return function(*args, **kwargs)

        return written

    return wrap


def write_failure(e: OSError, api: str) -> OSError:
    """``e``, the failed write of the file or folder it names (a helper's own: ``api``, as ``errors.OUTPUT_OPTIONS``
    knows it), as ``errors.StorageError``'s one line: a storage failure in the verbs' words
    (``storage_error_message``), or a missing folder (ENOENT: no errno line of its own, since a missing *input* is not
    a storage failure; here it is the folder written into). ``e`` itself for anything else: a bug to report. The
    StorageError is still the OSError it was (errno and file name kept), so ``except OSError`` catches it as before."""
    from .errors import OUTPUT_OPTIONS, StorageError, storage_error_message

    message = storage_error_message(e, api)
    if message is None and e.errno == errno.ENOENT and e.filename is not None:
        name = os.fsdecode(e.filename)
        folder = os.path.dirname(name) or "."
        option = f" ({OUTPUT_OPTIONS[api]})" if OUTPUT_OPTIONS.get(api) else ""
        if os.path.isdir(folder):  # a folder that makes no entries (/proc, a folder removed meanwhile)
            message = (f"{name!r} cannot be created: {folder!r} takes no new files or folders ({e.strerror}); choose "
                       f"another location{option}")
        else:
            message = (f"{name!r}: the folder {folder!r} does not exist; create it first (mkdir -p {folder}) or "
                       f"choose another location{option}")
    return e if message is None else StorageError(message, e)


def read_failure(e: OSError, path: str | os.PathLike, fix: str) -> OSError:
    """``e``, the failed read of the input file ``path``, as ``errors.StorageError``'s one line ending in ``fix``:
    nothing there (or a link to nothing: ``errors.missing``), a folder in the file's place, or a storage failure
    (permission denied, an input/output error); ``e`` itself for anything else. Still an OSError, so a caller that
    words an unreadable file itself (``except OSError``) keeps its words. A name too long for the file system, or a path
    under a file, is an input that is not there (``errors.missing`` says why), not the output advice "choose a shorter
    name" or "remove or rename that file" of ``storage_error_message`` (issue 30 round 32, AC322, AC325)."""
    from .errors import StorageError, missing, storage_error_message

    shown = str(path)
    if e.errno in (errno.ENOENT, errno.ENAMETOOLONG, errno.ENOTDIR):  # round 32 (AC322, AC325): an input's words
        message = f"{shown!r} {missing(path)}; {fix}"
    elif e.errno == errno.EISDIR:
        message = f"{shown!r} is a folder, not a file; {fix}"
    else:
        message = storage_error_message(OSError(e.errno, e.strerror, shown), "reading")  # the path as given
    return e if message is None else StorageError(message, e)
