"""Whether a folder is a mount point, bind mounts included.

    is_mount_point(Path("/data/exports/hf"))   # True for `mount --bind x /data/exports/hf`, a volume, a tmpfs

Footgun: ``os.path.ismount`` compares the folder's device with its parent's, so it misses a bind mount of a folder
of the same file system (same device, another inode): on Linux the kernel's mount table (``/proc/self/mountinfo``)
is read as well. A symlink is never a mount point (renaming it moves the link, not what it points to).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")


def _unescaped(field: str) -> str:
    """A mountinfo path field as a path: the kernel writes space, tab, newline and backslash as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mount_points() -> set[str]:
    """Every mount point of this process's mount namespace (empty where the kernel's table cannot be read)."""
    try:
        lines = MOUNTINFO.read_text().splitlines()
    except OSError:
        return set()
    return {_unescaped(line.split()[4]) for line in lines if len(line.split()) > 4}


def is_mount_point(path: str | os.PathLike) -> bool:
    """True when ``path`` (not a symlink) is a mount point."""
    path = Path(os.path.abspath(path))
    if path.is_symlink() or not path.is_dir():
        return False
    if os.path.ismount(path):
        return True
    real = Path(os.path.realpath(path.parent)) / path.name
    return str(real) in mount_points()
