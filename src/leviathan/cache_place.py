"""Where leviathan caches what it can rebuild, and which setting chose it: ``$LEVIATHAN_CACHE``, else
``$XDG_CACHE_HOME/leviathan``, else ``~/.cache/leviathan`` (not created).

Its own module, below both ``io`` (which re-exports ``cache_root``) and ``errors`` (whose storage line names the
setting): a failure in the cache named ``--json / --cache-dir`` or ``--run-dir``, options not given, while the place
came from $LEVIATHAN_CACHE (issue 30 round 27, R76). Needs nothing of leviathan (``errors`` imports it).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "LEVIATHAN_CACHE"


def cache_root() -> Path:
    """``$LEVIATHAN_CACHE``, else ``$XDG_CACHE_HOME/leviathan``, else ``~/.cache/leviathan`` (not created)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "leviathan"


def cache_setting(path: str | os.PathLike) -> str | None:
    """The words naming the setting that put ``path`` in the cache ("$LEVIATHAN_CACHE='c', the cache folder", or the
    default folder, which LEVIATHAN_CACHE moves); None when ``path`` is not the cache folder or inside it."""
    root = os.path.abspath(cache_root())
    where = os.path.abspath(os.fspath(path))
    if where != root and not where.startswith(root.rstrip(os.sep) + os.sep):
        return None
    if os.environ.get(CACHE_ENV):
        return f"the cache folder is ${CACHE_ENV}={os.environ[CACHE_ENV]!r}: set {CACHE_ENV} to another folder"
    return f"the cache folder is the default {str(cache_root())!r}: set {CACHE_ENV} to another folder"
