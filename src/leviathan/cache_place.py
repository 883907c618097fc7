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
    return Path(xdg_cache_home() or "~/.cache").expanduser() / "leviathan"


_warned: set[str] = set()


def xdg_cache_home() -> str | None:
    """``$XDG_CACHE_HOME`` when it is set to an absolute path; None when unset, empty or relative. The XDG base
    directory rule says a relative value is invalid and is to be ignored: ``XDG_CACHE_HOME=relative leviathan bench``
    made 'relative/leviathan' in the current folder and cached its BPE there, without a word (issue 30 round 29,
    V11). A relative value is ignored with one warning line per process (``warnings``: the CLI prints it as one
    line), naming the value and the fix."""
    value = os.environ.get(XDG_ENV)
    if not value:
        return None
    if os.path.isabs(os.path.expanduser(value)):
        return value
    if value not in _warned:
        import warnings

        _warned.add(value)
        warnings.warn(f"${XDG_ENV}={value!r} is a relative path, which the XDG base directory rule says to ignore: "
                      f"the cache goes to ~/.cache/leviathan; set {XDG_ENV} to an absolute path, or {CACHE_ENV} to a "
                      f"folder for leviathan's cache", stacklevel=3)
    return None


def cache_setting(path: str | os.PathLike, above: bool = False) -> str | None:
    """The words naming the setting that put ``path`` in the cache ("$LEVIATHAN_CACHE='c', the cache folder", the
    folder under $XDG_CACHE_HOME, or the default folder, which LEVIATHAN_CACHE moves); None when ``path`` is not the
    cache folder or inside it. Footgun: pass the path the failed call named, not the file found in the way: with
    XDG_CACHE_HOME a file, that file is the cache folder's parent, outside it, and the line named --cache-dir or
    --run-dir, options not given (issue 30 round 28, T68, T69). ``above``: a folder above the cache folder counts too,
    for a path that stands on the way to it (a dangling link as $XDG_CACHE_HOME: mkdir named the link, and the fix
    named "--json / --cache-dir" only; round 29, V10)."""
    root = os.path.abspath(cache_root())
    where = os.path.abspath(os.fspath(path))
    inside = where == root or where.startswith(root.rstrip(os.sep) + os.sep)
    if not inside and not (above and root.startswith(where.rstrip(os.sep) + os.sep)):
        return None
    if os.environ.get(CACHE_ENV):
        return f"the cache folder is ${CACHE_ENV}={os.environ[CACHE_ENV]!r}: set {CACHE_ENV} to another folder"
    if xdg_cache_home():
        return (f"the cache folder is {str(cache_root())!r}, under ${XDG_ENV}={os.environ[XDG_ENV]!r}: set {XDG_ENV} "
                f"to another folder, or {CACHE_ENV} to a folder for leviathan's cache")
    return f"the cache folder is the default {str(cache_root())!r}: set {CACHE_ENV} to another folder"
