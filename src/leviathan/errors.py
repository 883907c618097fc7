"""Errors a user can act on. The CLI prints their message (no traceback) and exits with status 2."""

from __future__ import annotations

import errno


class UserError(Exception):
    """Bad input: the message names the problem and the fix."""


# OSErrors that are about the user's storage, not a bug: errno -> (problem, fix).
_STORAGE_ERRORS = {
    errno.ENOSPC: ("no space left on device (the disk is full)",
                   "free disk space (delete old runs or checkpoints, or lower keep_last) or write to another "
                   "disk (--run-dir / --out)"),
    errno.EDQUOT: ("disk quota exceeded",
                   "free space within your quota (delete old runs or checkpoints, or lower keep_last) or write "
                   "to another disk (--run-dir / --out)"),
    errno.EACCES: ("permission denied", "make it writable (chmod / chown) or choose another location "
                                        "(--run-dir / --out)"),
    errno.EPERM: ("operation not permitted", "make it writable (chmod / chown) or choose another location "
                                             "(--run-dir / --out)"),
    errno.EROFS: ("read-only file system", "choose a location on a writable disk (--run-dir / --out)"),
    errno.EIO: ("input/output error (the disk or its file system failed a write)",
                "check the disk (free space, `dmesg`), or write to another disk (--run-dir / --out)"),
    errno.ENOTDIR: ("a file is in the way where a folder is expected",
                    "remove or rename that file, or choose another location (--run-dir / --out)"),
}


def storage_error_message(e: OSError) -> str | None:
    """One line naming the path, the problem and the fix for a storage OSError (disk full, permission denied,
    read-only, a file in the way); None for any other error, which is a bug to report with its traceback."""
    if not isinstance(e, OSError) or e.errno not in _STORAGE_ERRORS:
        return None
    problem, fix = _STORAGE_ERRORS[e.errno]
    where = f"{str(e.filename)!r}: " if e.filename else ""
    return f"{where}{problem}; {fix}"
