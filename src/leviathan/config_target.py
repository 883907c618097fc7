"""Where ``config.dump_yaml(obj, path)`` may write: nothing there, or a config file it wrote itself.

    write_config(path, data, text)   # UserError or StorageError (one line) when it may not or cannot; else written

``dump_yaml`` wrote over any file: a user's mynotes.txt became a run config, and an export's config.json a YAML file
its loaders then refused as edited, no word; a missing folder or a 300-byte name was the raw OSError (issue 30 round
22, S281-S284). It now keeps the writers' rule (``append_result``'s S191/S192, the API writers' S143/S198): it writes
over only a file that is a config in its own form (``_own_problem``), never inside a verb's output
(``ownership.check_not_inside``), atomically, a missing parent folder made (as ``append_result`` and
``write_record`` make theirs), and a storage failure is ``errors.StorageError``'s line (``storage.api_writes``).

Footgun: "its own form" is judged by the text, not by a marker (a config file carries none): a YAML mapping that
``yaml.safe_dump`` writes back unchanged (no comments, the writer's layout) whose keys are all keys of the config
written. A hand-written config with comments is refused (the comments would be lost): write it elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import UserError

API = "dump_yaml"
WHAT = "dump_yaml's path"


def write_config(path: str | os.PathLike, data: Any, text: str) -> None:
    """Write ``text`` (``yaml.safe_dump`` of ``data``) to ``path`` when the module docstring's rule allows it."""
    from .io import atomic_write_text
    from .ownership import CONTAINERS, check_not_inside, check_not_special
    from .storage import api_writes
    from .value_rules import api_check, path_problem

    api_check(API, "path", path_problem(path), "pass the path of the YAML file to write")
    with api_writes(API, path):
        check_not_inside(path, WHAT, ("train", "prepare", "export"), within=CONTAINERS, verb=API)
        check_not_special(path, WHAT)
        problem = _own_problem(Path(path), data) if os.path.isfile(path) else None
        if problem is not None:
            raise UserError(f"{API}: {str(path)!r} {problem}, so it is not a config {API} wrote, and writing would "
                            f"replace it; nothing was written; move it away, or write the config to a new file")
        if not os.path.lexists(Path(path).parent):
            Path(path).parent.mkdir(parents=True)
        atomic_write_text(path, text)


def _own_problem(path: Path, data: Any) -> str | None:
    """Why the file ``path`` is not a config ``dump_yaml`` wrote that ``data`` may replace; None when it is one."""
    import yaml

    raw = path.read_bytes()
    if not raw:
        return None  # an empty file holds nothing to lose (a `touch`ed name)
    try:
        text = raw.decode("utf-8")
        value = yaml.safe_load(text)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return "is not YAML text"
    if not isinstance(value, dict) or not value:
        return "holds no YAML settings (no `key: value` mapping)"
    if yaml.safe_dump(value, sort_keys=False) != text:
        return "is not in the form dump_yaml writes (comments, or another layout: written by hand or by another tool)"
    extra = [key for key in value if not isinstance(data, dict) or key not in data]
    if extra:
        return f"holds settings the config written has no key for ({extra[0]!r}): another kind of file"
    return None
