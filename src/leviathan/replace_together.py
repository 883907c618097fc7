"""Several files put in place together, all or none: the one rule every multi-file save applies.

    earlier = replace_together([(tmp / "config.json", out / "config.json"), ...], aside=lambda p: tmp_old / p.name,
                               remove=[out / "model-00001-of-00002.safetensors"])
    # every new file is in place; the earlier files (and ``remove``) lie at ``earlier``, for the caller to delete

Footgun (issue 30 round 21, N191, N269, for a report's files; round 22, S21, S22, S368, S371, for ``save_pretrained``
and ``Tokenizer.save``): files renamed one by one over an earlier save stop half-way when one of them cannot be
replaced (a file made immutable with ``chattr +i``, a folder in a file's place), leaving the new weights beside the
old config.json, a folder whose loader then blames an edit nobody made. Here everything that can be checked is checked
before anything moves (a folder in a target's place), the earlier files are first moved aside, and a rename that fails
(or a Ctrl-C between two) puts back every rename done so far: the targets are left as they were, and the error names
the target, never a temporary or an aside path.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from .errors import UserError, not_regular


def replace_together(pairs: Sequence[tuple[Path, Path]], aside: Callable[[Path], Path],
                     remove: Iterable[Path] = ()) -> list[Path]:
    """Rename each ``new`` over its ``target`` (``pairs``) and move each of ``remove`` out of the way, all or none;
    ``aside(target)`` is where an earlier file waits (on the same file system). Returns the aside paths, which the
    caller deletes once it is done; on a failure everything is put back and the error names its target."""
    pairs = [(Path(new), Path(target)) for new, target in pairs]
    earlier = [target for _, target in pairs] + [Path(p) for p in remove]
    for target in earlier:
        if target.is_dir() and not target.is_symlink():
            raise IsADirectoryError(errno.EISDIR, "a folder is in the way where a file is expected", str(target))
        if not target.is_symlink() and (problem := not_regular(target)) is not None:  # a user's pipe was replaced by
            # a report's file without a word (issue 30 round 27, R66, R68); io._refuse_special's rule, at every caller
            raise UserError(f"{str(target)!r} {problem}, in the way where a file is written; nothing was replaced "
                            f"(it is left as it is); move it away, or write elsewhere")
    moved: list[tuple[Path, Path]] = []  # (from, to) renames done, undone in reverse on a failure
    target = None
    try:
        for target in earlier:
            if os.path.lexists(target):
                _move_aside(target, aside(target), moved)
        asides = [to for _, to in moved]
        for new, target in pairs:
            _rename(new, target, moved)
    except BaseException as e:
        for src, dst in reversed(moved):
            with contextlib.suppress(OSError):
                os.replace(dst, src)
        if isinstance(e, OSError) and not isinstance(e, UserError) and e.errno is not None and target is not None:
            raise OSError(e.errno, e.strerror, str(target)) from None
        raise
    return asides


def _move_aside(target: Path, to: Path, moved: list) -> None:
    """Move the earlier ``target`` aside (``_rename``). A target that was there a moment ago and is gone now was moved
    by another process writing the same files at once (nothing here serializes two writers): the loser stopped with
    "'DIR' takes no new files or folders (No such file or directory)", blaming a folder that takes files (issue 30
    round 29, W459). It is a ``StorageError`` naming the cause and the fix; the caller puts back what it moved."""
    from .errors import StorageError

    try:
        _rename(target, to, moved)
    except FileNotFoundError as e:
        if os.path.lexists(target) or not os.path.isdir(target.parent):
            raise
        raise StorageError(f"{str(target)!r} was moved away by another process while this one replaced it (two "
                           f"writers of the same files at once); nothing of this write was kept, the files are as the "
                           f"other writer left them; write them from one process at a time (under "
                           f"locking.folder_lock of their folder), or try again", e) from None


def _rename(src: Path, dst: Path, moved: list) -> None:
    """``os.replace(src, dst)``, recorded in ``moved`` so that a later failure can undo it."""
    os.replace(src, dst)
    moved.append((src, dst))
