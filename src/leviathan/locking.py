"""One writer per folder: an exclusive lock that ``train``, ``prepare``, ``export`` and ``sweep`` hold while they write.

    with folder_lock(run_dir, "train"):                 # run_dir/.lock, the folder is created if needed
        ...
    with folder_lock(out_dir, "prepare", beside=True):  # out_dir/../.<name>.lock: out_dir is replaced by rename

The lock is ``fcntl.flock(LOCK_EX | LOCK_NB)`` on a small file holding the holder's pid and command line. A second
writer does not wait: it gets a ``UserError`` naming the folder and the holder (exit status 2). The kernel drops a
flock when its process ends, however it ends, so a killed holder's lock is free; the next writer takes the file over
and says so on stderr. The file lives inside the folder (``.lock``) for folders written in place (a run, a sweep),
beside it (``.<name>.lock``) for folders built elsewhere and renamed into place (``prepare``, ``export``).

Release removes the lock file (while still holding the lock) and the folders taking the lock created (the folder,
or a beside lock's parent, and any missing above them) that nothing else was written into. That is safe only because every taker checks, after its flock succeeds, that
the path still names the file it locked, and starts over otherwise.

Footguns:
- flock is per open file description: the same process taking the same lock twice is refused too.
- Under torchrun only rank 0 takes the run folder's lock; ``train`` tells the other ranks (one all-reduce) when it
  could not, so every rank stops with a UserError.
- flock on a network file system (NFS) may be advisory only or unsupported; the lock protects writers
  on one machine.
- While a lock is held, what a crashed earlier writer left (``.tmp-*`` folders of a checkpoint or of a
  prepare) is safe to delete: no other process can be writing it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Callable, Iterator

from .errors import UserError
from .io import named

LOCK_NAME = ".lock"


def lock_path(folder: Path, beside: bool = False) -> Path:
    """The lock file of ``folder``: ``folder/.lock``, or ``folder/../.<name>.lock`` when ``beside`` (a switch: 1 was
    taken as true, issue 30 round 30, Y622's kind)."""
    from .value_rules import check_switches

    check_switches("lock_path", beside=beside)
    if beside:
        folder = Path(os.path.abspath(folder)) if Path(folder).name in ("", ".", "..") else Path(folder)
        return folder.parent / f".{folder.name}.lock"
    return Path(folder) / LOCK_NAME


def holder(path: Path) -> tuple[int | None, str]:
    """(pid, command) written in a lock file; (None, "") when it is empty, missing or unreadable."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, ""
    try:
        pid = int(lines[0]) if lines else None
    except ValueError:
        pid = None
    return pid, lines[1] if len(lines) > 1 else ""


def is_lock_record(path: str | os.PathLike) -> bool:
    """Whether the file ``path`` is one of leviathan's lock files: empty (a taker ended before writing it) or what
    ``_write_holder`` writes, a process id on the first line, then the command. A user's file that happens to have a
    lock's name (``notes/.lock``, ``.draft.lock``) is not: the lock was taken over it (truncated, then deleted on
    release), and ``--overwrite`` did not count it among the folder's files (issue 30 round 7)."""
    try:
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > _RECORD_LIMIT:
            return False
        with open(path, "rb") as f:
            first = f.read(_RECORD_LIMIT).split(b"\n", 1)[0]
    except OSError:
        return False
    return first == b"" and os.path.getsize(path) == 0 or first.isdigit()


_RECORD_LIMIT = 4096  # bytes: a pid and a command line cut to 300 characters fit many times over


def _describe(pid: int | None, command: str) -> str:
    if pid is None:
        return "another process"
    return f"process {pid}" + (f" ({command})" if command else "")


def _command() -> str:
    text = " ".join(sys.argv) or sys.executable
    return text if len(text) <= 300 else text[:297] + "..."


def _busy(folder: Path, path: Path, verb: str, fix: str) -> UserError:
    pid, command = holder(path)
    return UserError(f"cannot {verb} into {str(folder)!r}: {_describe(pid, command)} is writing there (it holds "
                     f"{str(path)!r}); wait for it to finish or stop it, or {fix}")


def _acquire(path: Path, folder: Path, verb: str, fix: str, who: str) -> tuple[int, tuple[int | None, str]]:
    """(descriptor holding the lock, (pid, command) of a dead holder whose lock file was left behind); ``who``: the
    program taking it, as the refusal names it."""
    import fcntl

    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path) and not is_lock_record(path):
            kind = "a link" if os.path.islink(path) else "a folder" if path.is_dir() else "a file"
            raise UserError(f"{str(path)!r} is {kind} leviathan did not write (not a lock file: those hold a process "
                            f"id), but {who} keeps the lock of {str(folder)!r} under that name and would "
                            f"take it over; move it away or rename it, or {fix}")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # the folder was removed by a releasing holder in between: start over
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _busy(folder, path, verb, fix) from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd, holder(path)
        os.close(fd)  # locked a file its holder removed on release: take the new one


_BESIDE_ROOM = 32  # bytes the names kept beside a folder add to its own: "." + ".tmp-PID-XXXXXXXX" (or ".lock", ".old-")


def _check_room(folder: Path, who: str) -> None:
    """UserError when ``folder``'s name leaves no room for the hidden names a verb keeps beside it (its lock, the
    temporary folder it builds and renames into place): a name of 250 bytes, itself allowed, failed on the lock file's
    name, which the error named instead of the folder the user gave (issue 30 round 9, N79/N80). ``who``: the program,
    as the line names it (`leviathan prepare`, or a script's own name)."""
    try:
        limit = os.pathconf(folder.parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    size = len(os.fsencode(folder.name))
    if size + _BESIDE_ROOM > limit:
        raise UserError(f"the output folder's name is {size} bytes long ({folder.name[:40]}...): {who} "
                        f"builds it beside itself under a longer hidden name (.NAME.tmp-..., locked as .NAME.lock), "
                        f"which would pass the file system's limit of {limit} bytes a name; choose a name of at most "
                        f"{limit - _BESIDE_ROOM} bytes")


def check_utf8_name(folder: str | os.PathLike, verb: str) -> None:
    """UserError, before anything is written, for an output folder whose path is not UTF-8 text (a surrogate escape
    such as 'd\\udcff'). The folders the locked verbs write (prepare, train, export, sweep) are read back through
    libraries that open only UTF-8 names (safetensors, TensorBoard, transformers): train and sweep ended in their
    UnicodeEncodeError tracebacks, and a folder prepare or export wrote was refused by the next verb (issue 30
    round 18, G419-G421, G423, G427). Inputs under such names are read as bytes (G418, G424, G428). The API's folder
    writers apply it too (``ownership.check_api_folder``: ``Tokenizer.save``, ``save_pretrained``; ``to_hf`` and
    ``bake_adopted``: G425, G426). ``verb``: what is refused, as in "cannot VERB into FOLDER"."""
    text = os.fspath(folder)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        byte = os.fsencode(text[e.start])
        raise UserError(f"cannot {verb} into {text!r}: its name is not UTF-8 text (byte 0x{byte[0]:02x} at character "
                        f"{e.start + 1}), and the libraries that read such folders back (tokenizers, safetensors, "
                        f"TensorBoard, transformers) open only UTF-8 names; choose a name of UTF-8 text") from None


def _holder_bytes() -> bytes:
    """The pid and command line a lock file holds. A command line naming a file that is not UTF-8 (a surrogate
    escape such as 'd\\udcff') is written as its bytes: a UnicodeEncodeError traceback ended prepare, train, export
    and sweep into such a folder, or with such a data.path (issue 30 round 18, G419-G421, G423, G424); ``holder``
    reads it back with errors="replace"."""
    return f"{os.getpid()}\n{_command()}\n".encode("utf-8", "surrogateescape")


def _write_holder(fd: int, path: Path) -> None:
    try:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, _holder_bytes())
    except OSError as e:  # a full disk: os.write names no file (io.named)
        raise named(e, path) from None


def missing_folders(folder: Path) -> list[Path]:
    """The folders from ``folder`` up that do not exist yet, innermost first: what ``_acquire``'s ``mkdir(parents=True)``
    creates for a lock file in ``folder``."""
    return [f for f in (folder, *folder.parents) if not f.exists()]


def remove_if_empty(folders: list[Path]) -> None:
    """Remove each of ``folders`` (``missing_folders``' list, innermost first) that is still empty: only what a failed
    writer made, never a folder something else was written into meanwhile."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _release(fd: int, path: Path, created: list[Path]) -> None:
    """Drop the lock and remove the folders taking it created (``created``, innermost first), each only while empty: a
    failed `prepare`/`export`/collect into a new ``a/b/out`` left ``a/b`` behind, where the verb's own check before its
    first write had refused (a beside lock's folders were not recorded; collect_results removed its own, a twin)."""
    try:
        path.unlink(missing_ok=True)  # still locked: a process that opened it now sees it gone and retries
    finally:
        os.close(fd)
    remove_if_empty(created)


def held_by_another(path: Path) -> tuple[int | None, str] | None:
    """(pid, command) of the live process holding lock file ``path``; None when nobody holds it (or it is absent).

    Asked by taking and at once dropping a shared flock: it fails only while a writer holds its exclusive one.
    Used by verbs that would delete a folder (``leviathan.ownership``): a folder a live writer holds is never
    touched. This process's own writer lock is not another's (prepare holds its beside lock while it replaces), but
    its own reader claim is: a ``TokenDataset`` of this process still reads the folder (issue 30 round 27, S521)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        found = holder(path)
        own = found[0] == os.getpid() and not is_reader_lock(path.name)
        return None if own else found  # this process's own lock (a beside lock it holds)
    finally:
        os.close(fd)  # closing drops the shared lock too
    return None


def _say(msg: str) -> None:
    print(msg, file=sys.stderr)


_HELD: set[tuple[int, str]] = set()  # (pid, absolute lock path) of the locks this process holds (``again=True``)


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike, verb: str, fix: str = "choose another folder", *, beside: bool = False,
                log: Callable[[str], None] | None = _say, who: str | None = None, again: bool = False) -> Iterator[Path]:
    """Hold the exclusive write lock of ``folder`` (module docstring); yields the lock file's path. ``verb`` and ``fix``
    word the refusal ("cannot <verb> into DIR: process N (...) is writing there ...; wait for it to finish or stop it,
    or <fix>"). ``folder`` (or its parent, ``beside``) is created if needed. ``who``: the program as the lines name it
    (by default `leviathan <verb>`); a script passes its own name: collect_results.py's line called it "`leviathan
    collect results`", a command that does not exist (issue 30 round 24, V115). ``again``: when this process holds the
    lock already, go on under it (the export writers take the lock the ``export`` verb holds around them). A folder
    that cannot be made or locked (read-only, a file in the way, /proc, a name too long) is ``errors.StorageError``'s
    one line (``storage.write_failure``), not the raw OSError (issue 30 round 25, Y361; round 26, Q384). ``log``: the
    function that says a dead writer's lock was taken over (None: the default); 'print' or None was called only then,
    Python's "'str' object is not callable" (issue 30 round 30, Y431, Y619). ``beside`` and ``again`` are switches
    (``value_rules.check_switches``): again='yes' and beside=1 were taken as true (round 30, Y621, Y622). ``fix`` and
    ``who`` are words (``fix=5`` was taken and shown as "or 5" in a later refusal, round 33, AE289).
    """
    from .storage import write_failure
    from .value_rules import api_check, check_callback, check_switches, path_problem

    api_check("folder_lock", "folder", path_problem(folder), "pass the folder to lock")
    check_switches("folder_lock", beside=beside, again=again)
    check_callback("folder_lock", "log", log)
    log = _say if log is None else log
    if not isinstance(verb, str) or not verb:  # '' was taken; each holder line said "cannot  into" (round 27, S280)
        api_check("folder_lock", "verb", f"expected the name of the verb taking the lock, got {verb!r:.40}",
                  "pass one, e.g. 'train' (write_marker's rule)")
    for name, value in (("fix", fix), ("who", who)):  # fix=5 was kept for the refusal's "or 5" (issue 30 round 33, AE289)
        if not (value is None and name == "who") and (not isinstance(value, str) or not value.strip()):
            what = "the advice the refusal line ends with" if name == "fix" else "the program's name the lines give"
            api_check("folder_lock", name, f"expected {what}, as text, got {value!r:.40}",
                      "pass the advice as words, e.g. fix='choose another folder'" if name == "fix" else
                      "pass the program's name, e.g. who='collect_results.py', or leave it out")
    who = who or f"`leviathan {verb}`"
    check_utf8_name(folder, verb)
    folder = Path(os.path.abspath(folder)) if beside else Path(folder)  # "." has a name once absolute
    if beside:
        _check_room(folder, who)
    path = lock_path(folder, beside)
    key = (os.getpid(), os.path.abspath(path))
    if again and key in _HELD:
        yield path
        return
    if key in _HELD:  # flock refuses a second descriptor of this process too: the refusal named this very process,
        # "wait for it to finish or stop it", which would wait for itself (issue 30 round 29, W243)
        raise UserError(f"cannot {verb} into {str(folder)!r}: this process holds its lock already (it holds "
                        f"{str(path)!r}, taken by an enclosing folder_lock that has not ended); pass again=True to go "
                        f"on under the lock it holds, or end the first folder_lock before taking it again")
    try:  # exists() raised ENAMETOOLONG for a 300-byte name, outside the line (issue 30 round 26, Q384)
        created = missing_folders(path.parent)  # the folder (inside) or its parent (beside), and what is missing above
        fd, (dead_pid, dead_command) = _acquire(path, folder, verb, fix, who)
    except OSError as e:
        raise write_failure(e, "folder_lock") from None
    _HELD.add(key)
    try:
        _write_holder(fd, path)
        if dead_pid is not None and dead_pid != os.getpid():
            log(f"note: took over the lock of {str(folder)!r} from {_describe(dead_pid, dead_command)}, which "
                f"ended without releasing it (killed or crashed); nothing it left half-written is used")
        yield path
    finally:
        _HELD.discard(key)
        _release(fd, path, created)


READER_PREFIX = ".reader-"


def is_reader_lock(name: str) -> bool:
    """Whether ``name`` is the name of a reader's claim (``reading``): ``.reader-PID-XXXXXXXX.lock``."""
    return name.startswith(READER_PREFIX) and name.endswith(".lock")


@contextlib.contextmanager
def reading(folder: str | os.PathLike) -> Iterator[Path | None]:
    """Claim ``folder`` as read by this process for as long as the block runs: an exclusive flock on a file of its
    own inside it, ``.reader-PID-XXXXXXXX.lock``, holding the pid and command like a writer's lock. Verbs that would
    delete the folder (``prepare --overwrite`` through ``ownership.check_unlocked``) find the held lock and refuse,
    naming the reader: ``prepare --overwrite`` of the data folder of a live training run replaced it silently (issue
    30 round 8, H1). Yields the file's path, or None when none could be written (a read-only data folder: nothing
    leviathan runs can replace it either; a reader never fails for want of a claim).

    One file per claim, never shared: a writer's lock file is removed on release, which would break a claim two
    readers shared. The claims of readers that ended without releasing them (killed: the kernel dropped their flock)
    are deleted here, as ``folder_lock`` takes a dead writer's lock over; and a folder replaced by ``--overwrite``
    goes with what such a leftover left (lock files are not counted among a folder's files)."""
    import fcntl
    import uuid

    folder = Path(folder)
    _remove_dead_claims(folder)
    path = folder / f"{READER_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}.lock"
    fd = None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path).st_ino != os.fstat(fd).st_ino:  # another reader's sweep took it for a dead claim
            raise FileNotFoundError(path)
        os.write(fd, _holder_bytes())
    except OSError:  # read-only, full, or not ours to write: read without a claim (and leave nothing half-made)
        if fd is not None:
            os.close(fd)
            with contextlib.suppress(OSError):
                path.unlink()
        yield None
        return
    try:
        yield path
    finally:
        try:
            with contextlib.suppress(OSError):
                path.unlink()
        finally:
            os.close(fd)


def _remove_dead_claims(folder: Path) -> None:
    """Delete the reader claims in ``folder`` that nobody holds (their reader was killed); best effort."""
    import fcntl

    try:
        names = [n for n in os.listdir(folder) if is_reader_lock(n)]
    except OSError:
        return
    for name in names:
        path = folder / name
        if not is_lock_record(path):
            continue  # a user's file of that name: not ours to delete
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path.unlink()
        except OSError:  # held (a live reader), or gone already
            pass
        finally:
            os.close(fd)
