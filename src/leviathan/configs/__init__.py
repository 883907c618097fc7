"""The YAML files the verbs read, shipped inside the package, and how a name on the command line finds one.

    leviathan/configs/*.yaml              train configs (``leviathan train --config tiny``)
    leviathan/configs/experiments/*.yaml  experiment grids (``leviathan sweep --grid cpu``)

They are read through ``importlib.resources``, so an installed wheel finds them from any working directory. Lookup
(train configs and grids alike): a path that exists is used as given; a bare name (``tiny``, ``cpu``) is looked up
first in the project folder the command runs from (``./configs/NAME.yaml``, ``./configs/experiments/NAME.yaml``:
a project can shadow a packaged file), then among the packaged files; a relative path the way a source checkout
used to hold these files (``configs/tiny.yaml``) that does not exist falls back to the packaged file of that name.
Anything else that does not exist is a ``ConfigError`` naming the packaged choices.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from importlib.resources import as_file, files
from pathlib import Path

from ..config import ConfigError
from ..errors import missing, name_too_long

TRAIN = ()  # sub-folder of this package holding train configs
GRIDS = ("experiments",)  # ... and experiment grids
SUFFIXES = (".yaml", ".yml")

_extracted = contextlib.ExitStack()  # resources that had to be copied out of an archive (zip imports)
atexit.register(_extracted.close)


def _folder(kind: tuple[str, ...]):
    node = files(__name__)
    for part in kind:
        node = node / part
    return node


def packaged_names(kind: tuple[str, ...] = TRAIN) -> list[str]:
    """Names (file stems) of the packaged YAML files of ``kind`` (``TRAIN`` or ``GRIDS``)."""
    folder = _folder(kind)
    if not folder.is_dir():
        return []
    return sorted(p.name.rsplit(".", 1)[0] for p in folder.iterdir() if p.name.endswith(SUFFIXES) and p.is_file())


def packaged_path(name: str, kind: tuple[str, ...] = TRAIN) -> Path | None:
    """The file of the packaged YAML ``name`` (a real path, also for an archive install), or None."""
    node = _folder(kind) / f"{name}.yaml"
    if not node.is_file():
        return None
    if isinstance(node, Path):
        return node
    return _extracted.enter_context(as_file(node))


def local_dir(kind: tuple[str, ...] = TRAIN) -> Path:
    """``./configs`` (train configs) or ``./configs/experiments`` (grids) of the current directory."""
    return Path.cwd().joinpath("configs", *kind)


def available(kind: tuple[str, ...] = TRAIN) -> list[str]:
    """Names a bare ``--config`` / ``--grid`` value can take: the project's own files and the packaged ones."""
    names = set(packaged_names(kind))
    folder = local_dir(kind)
    if folder.is_dir():
        names.update(p.stem for p in folder.glob("*.yaml") if p.is_file())
    return sorted(names)


def is_bare_name(text: str) -> bool:
    """``tiny``, ``cpu``: no folder part and no YAML suffix."""
    return bool(text) and "/" not in text and os.sep not in text and not text.endswith(SUFFIXES)


def resolve(name_or_path: str | os.PathLike, kind: tuple[str, ...] = TRAIN, what: str = "config") -> Path:
    """The YAML file ``name_or_path`` means under the rules of the module docstring."""
    text = os.path.expandvars(os.path.expanduser(os.fspath(name_or_path)))
    path = Path(text)
    if name_too_long(text) is not None:  # Path.is_file raised the raw ENAMETOOLONG (issue 30 round 18, G241)
        raise _not_found(text, missing(text), kind, what)
    if path.is_file():
        return path
    if is_bare_name(text):
        local = local_dir(kind) / f"{text}.yaml"
        if local.is_file():
            return local
        packaged = packaged_path(text, kind)
        if packaged is not None:
            return packaged
        if not path.exists() and not os.path.lexists(text):
            raise ConfigError(f"unknown {what} {text!r}; available: {', '.join(available(kind)) or 'none'} "
                              f"(or pass the path of a YAML file)")
    elif not path.is_absolute() and path.suffix in SUFFIXES and path.parent == Path("configs", *kind):
        packaged = packaged_path(path.stem, kind)
        if packaged is not None:
            return packaged
    raise _not_found(text, "is not a file" if path.exists() else missing(text), kind, what)


def _not_found(text: str, problem: str, kind: tuple[str, ...], what: str) -> ConfigError:
    """The error for a ``--config`` / ``--grid`` value ``text`` that names no YAML file (``problem`` says why)."""
    return ConfigError(f"{what} file {text!r} {problem}; pass the path of a YAML file or one of the names "
                       f"{', '.join(available(kind)) or 'none'}")


def find_train_config(name_or_path: str | os.PathLike) -> Path:
    """A train config by path or by name (``tiny``: ./configs/tiny.yaml if present, else the packaged one)."""
    return resolve(name_or_path, TRAIN, "config")


def find_grid_file(name_or_path: str | os.PathLike) -> Path:
    """An experiment grid by path or by name (``cpu``: ./configs/experiments/cpu.yaml if present, else packaged)."""
    return resolve(name_or_path, GRIDS, "grid")
