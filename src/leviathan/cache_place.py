"""Where leviathan caches what it can rebuild, and which setting chose it: ``$LEVIATHAN_CACHE``, else
``$XDG_CACHE_HOME/leviathan``, else ``~/.cache/leviathan`` (not created).

Its own module, below both ``io`` (which re-exports ``cache_root``) and ``errors`` (whose storage line names the
setting): a failure in the cache named ``--json / --cache-dir`` or ``--run-dir``, options not given, while the place
came from $LEVIATHAN_CACHE (issue 30 round 27, R76), or from $XDG_CACHE_HOME (round 28, T68, T69). Needs nothing of
leviathan (``errors`` imports it).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "LEVIATHAN_CACHE"
XDG_ENV = "XDG_CACHE_HOME"


def cache_root() -> Path:
    """``$LEVIATHAN_CACHE``, else ``$XDG_CACHE_HOME/leviathan``, else ``~/.cache/leviathan`` (not created)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path(os.environ.get(XDG_ENV) or "~/.cache").expanduser() / "leviathan"


def cache_setting(path: str | os.PathLike) -> str | None:
    """The words naming the setting that put ``path`` in the cache ("$LEVIATHAN_CACHE='c', the cache folder", the
    folder under $XDG_CACHE_HOME, or the default folder, which LEVIATHAN_CACHE moves); None when ``path`` is not the
    cache folder or inside it. Footgun: pass the path the failed call named, not the file found in the way: with
    XDG_CACHE_HOME a file, that file is the cache folder's parent, outside it, and the line named --cache-dir or
    --run-dir, options not given (issue 30 round 28, T68, T69)."""
    root = os.path.abspath(cache_root())
    where = os.path.abspath(os.fspath(path))
    if where != root and not where.startswith(root.rstrip(os.sep) + os.sep):
        return None
    if os.environ.get(CACHE_ENV):
        return f"the cache folder is ${CACHE_ENV}={os.environ[CACHE_ENV]!r}: set {CACHE_ENV} to another folder"
    if os.environ.get(XDG_ENV):
        return (f"the cache folder is {str(cache_root())!r}, under ${XDG_ENV}={os.environ[XDG_ENV]!r}: set {XDG_ENV} "
                f"to another folder, or {CACHE_ENV} to a folder for leviathan's cache")
    return f"the cache folder is the default {str(cache_root())!r}: set {CACHE_ENV} to another folder"
