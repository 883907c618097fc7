"""Deleting a folder a verb replaced or pruned, and saying so when part of it stays.

    problem = remove_tree(old)    # None, or "'OLD/val.bin': operation not permitted" (the first file that stayed)
    warn_left(old, problem, "the replaced data folder", "the new data is in place in 'data'")

``prepare --overwrite`` and ``export --overwrite`` move the old folder aside and delete it, ``train``'s ``keep_last``
deletes older step folders, ``demo`` deletes its earlier output. Each used ``shutil.rmtree(..., ignore_errors=True)``
(or a bare rmtree): a file that could not be deleted (immutable, on a read-only mount, a permission) left a hidden
``.data.old-*`` / ``.exp.old-*`` folder or a half-deleted step folder without a word, exit 0, and demo's error named
the file without its folder (issue 30 round 10, P20-P23). Now the first file that stayed is named with its path.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def remove_tree(path: str | os.PathLike) -> str | None:
    """Delete the folder ``path`` as far as possible; None when it is gone, else ``'FILE': PROBLEM`` of the first
    file or folder that stayed (its full path). A named pipe, a socket or a device at ``path`` stays, and is named:
    ``shutil.rmtree`` opens the path to walk it, and opening a pipe waits for a writer, for ever (issue 30 round 27,
    S315). A folder holding a mount point stays whole, and the mount point is named (``_mount_inside``)."""
    from .errors import not_regular

    _refuse_unsafe(path)
    if not os.path.islink(path) and (problem := not_regular(path)) is not None:
        return f"{os.fspath(path)!r}: {problem.replace('not a regular file', 'not a folder')}"
    if not os.path.islink(path) and (mount := _mount_inside(path)) is not None:
        return (f"{mount!r}: a mount point (another file system, or a folder mounted there with `mount --bind`) "
                f"whose files are not this folder's; nothing was deleted; unmount it (umount {mount}), then delete "
                f"the folder")
    first: list[tuple[str, BaseException]] = []

    def failed(func, name, error) -> None:
        error = error[1] if isinstance(error, tuple) else error
        if not first and not isinstance(error, FileNotFoundError):  # gone meanwhile: nothing stayed
            first.append((os.fsdecode(name), error))

    handler = {"onexc": failed} if sys.version_info >= (3, 12) else {"onerror": failed}
    shutil.rmtree(path, **handler)
    if not first and not os.path.lexists(path):
        return None
    name, error = first[0] if first else (os.fspath(path), OSError("it is still there"))
    why = (error.strerror or str(error)).lower() if isinstance(error, OSError) else str(error)
    return f"{name!r}: {why}"


def _mount_inside(path: str | os.PathLike) -> str | None:
    """The first mount point below the folder ``path`` (the folder itself aside), or None. ``shutil.rmtree`` crosses
    them as ``rm -r`` does: ``remove_tree`` of a folder holding a bind mount of another folder deleted that folder's
    files through the mount, then answered only "device or resource busy" (issue 30 round 29, W781); ``rm -r
    --one-file-system`` refuses to cross. Asked of the kernel's mount table (``mounts.mount_points``: a bind mount of
    the same file system has the same device), then of each folder's device against the root's (where the table
    cannot be read). Footgun: ``os.walk`` does not follow links, so a symlink to another disk is deleted as a link."""
    from .mounts import mount_points

    real = os.path.realpath(path).rstrip(os.sep) + os.sep
    below = sorted(point for point in mount_points() if point.startswith(real))
    if below:
        return below[0]
    try:
        device = os.lstat(path).st_dev
    except OSError:
        return None
    for folder, names, _ in os.walk(path):
        for name in names:
            try:
                if os.lstat(os.path.join(folder, name)).st_dev != device:
                    return os.path.join(folder, name)
            except OSError:  # gone meanwhile: rmtree says what stayed
                continue
    return None


def _refuse_unsafe(path: str | os.PathLike) -> None:
    """ArgumentValueError for a ``path`` no verb deletes as its own output: '' (read as the current folder), a last
    part '.' or '..', the root, or a folder that holds the current working folder. ``remove_tree('.')`` emptied the
    caller's whole current folder and then answered "'.': invalid argument", which read as if nothing was deleted, and
    ``remove_tree('')`` answered None, "gone" (issue 30 round 28, U557, U556); ``rm -r .`` refuses the first. Every
    caller passes a folder it moved aside or made (``.data.old-*``, a step folder, demo's output) by its own name."""
    from .errors import ArgumentValueError

    text = os.fsdecode(os.fspath(path))
    real = os.path.realpath(text) if text else ""
    here = os.path.realpath(os.getcwd())
    if not text or os.path.basename(text.rstrip(os.sep)) in ("", ".", ".."):
        why = "names no folder by its own name (empty, the root, or a last part '.' or '..')"
    elif here == real or here.startswith(real.rstrip(os.sep) + os.sep):
        why = f"holds the current working folder {here!r}"
    else:
        return
    raise ArgumentValueError(f"remove_tree: {text!r} {why}, which is never a verb's own output; nothing was deleted; "
                             f"pass the folder to delete by its own name (e.g. 'out/run1'), from outside it")


def warn_left(path: str | os.PathLike, problem: str, what: str, done: str) -> None:
    """One warning line: ``what`` at ``path`` could not be deleted (``problem``), ``done`` says what did happen."""
    print(f"warning: {what} '{Path(path)}' could not be deleted ({problem}); {done}; delete what is left by hand once "
          f"it can be (rm -r {Path(path)})", file=sys.stderr)
