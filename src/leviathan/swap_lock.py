"""A folder whose files a writer replaces in place, and readers read whole: the writer swaps under an exclusive flock of
the folder itself, a reader reads under a shared one.

    with swapping(out):                           # hf.save_folder.save_whole, around the renames into ``out``
        ...
    with reading_whole(folder, "load_adopted"):   # the loaders of a save_pretrained folder, for the whole load
        ...

``save_pretrained`` puts its files in place by renames (``save_folder._move_in``): all or none, but one after another,
and a ``load_adopted`` racing two saves into one folder read a folder caught between them: a raw FileNotFoundError for
model.safetensors, transformers' "Error no file named model.safetensors", or "the weights ... do not fit the sizes its
config.json gives ...: config.json was edited", of a folder nobody edited (issue 30 round 23, U515). A save takes its
lock only for the renames; a reader holds its lock for its whole read, so it sees one save or the next, never a mix.

Why the folder itself: flock works on a directory's descriptor (Linux), needs no lock file (a save folder would keep
one, and a reader could not create one in a read-only folder), and ``save_whole`` renames files inside the folder, so it
stays the same inode. A folder that cannot be opened is read without a lock, as ``locking.reading`` does.

Footguns:
- flock is per open file description: a process saving into a folder while it reads it would wait for itself (no
  loader saves).
- A reader waits for a swap at most ``WAIT_S`` and then says so; a writer waits for readers as long as they read (a
  load is bounded).
- flock on a network file system (NFS) may be advisory only: it protects readers and writers on one machine.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Iterator

from .errors import UserError

WAIT_S = 120.0  # a swap is a few renames: this long means the writer is stopped (SIGSTOP) or the disk hangs


def _open_folder(folder: str | os.PathLike) -> int | None:
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def swapping(folder: str | os.PathLike) -> Iterator[None]:
    """Hold ``folder``'s exclusive flock while the block replaces its files (waits for readers to finish)."""
    import fcntl

    fd = _open_folder(folder)
    if fd is None:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock


@contextlib.contextmanager
def reading_whole(folder: str | os.PathLike, api: str, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold ``folder``'s shared flock while the block reads it: waits for a swap in progress, at most ``wait_s``, then
    UserError naming ``api`` and the folder."""
    import fcntl

    fd = _open_folder(folder)
    if fd is None:
        yield
        return
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise UserError(f"{api}: {os.fspath(folder)!r} is being replaced by a save_pretrained of another "
                                    f"process, which has not finished in {wait_s:.0f} s (stopped?); wait for it to "
                                    f"finish or stop it, then load again") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)
