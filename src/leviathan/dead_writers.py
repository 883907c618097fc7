"""The temporary folders of writers that were killed: each writer names its temporary folder with its process id, so
the next one can tell a dead writer's leftover from a live writer's work.

    for path, pid in leftovers(out.parent, f".{out.name}.tmp-"):   # PREFIX + PID[-...]; live writers' are skipped
        if pid is not None and leftover_is_own(path, FILES):       # only its own files: delete; else name it
            ...

The writers that name their temporaries so: ``prepare`` (``.OUT.tmp-PID-XXXXXXXX``, beside its output), the export
writers and ``save_pretrained`` (``remove_killed`` below) and the verbs that stage files inside their output folder
(``.VERB.stage-PID``, ``experiments.staged``). What to do with a leftover is the caller's: delete it when it holds only
the writer's own files (``ownership.leftover_is_own``), and name it on stderr otherwise (``remove_killed``, for the
export writers and save_pretrained, does both).

Footguns:
- a pid is reused by the system: a leftover whose pid now names an unrelated live process is kept (the safe side);
- a process of another user, or one that cannot be asked, counts as alive;
- a name of the prefix without a pid (an older writer's) is returned with pid None: it cannot be judged by its name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (this one included; one of another user's, or one not knowable, counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def leftovers(parent: Path, prefix: str) -> list[tuple[Path, int | None]]:
    """The entries of ``parent`` named ``prefix`` + ``PID`` (alone or followed by ``-`` and more) whose process is
    gone, with that pid, and those named ``prefix`` + something that is no pid, with None; sorted by name. A live
    writer's (this process's included) are left out; a ``parent`` that cannot be listed has none."""
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return []
    found = []
    for name in names:
        if not name.startswith(prefix):
            continue
        pid = name[len(prefix):].split("-")[0]
        if not pid.isdigit():
            found.append((Path(parent) / name, None))
        elif not alive(int(pid)):
            found.append((Path(parent) / name, int(pid)))
    return found


def remove_killed(parent: Path, prefix: str, into: Path, own_files: tuple[str, ...], writer: str = "an export") -> None:
    """Delete the temporary folders of dead writers into ``into`` (``leftovers(parent, prefix)``) that hold only
    ``own_files`` (glob patterns), and name on stderr a leftover that cannot be judged (a name without a process id, or
    files the writer does not write): a killed ``to_plain_llama`` left a 19 MB model hidden beside its rerun's export,
    for good and without a word (issue 30 round 24, W537, W539), and a killed ``save_pretrained`` one inside its
    folder."""
    from .ownership import leftover_is_own
    from .removal import remove_tree

    for leftover, pid in leftovers(parent, prefix):
        if not leftover.is_dir():
            continue
        if pid is not None and leftover_is_own(leftover, own_files) and remove_tree(leftover) is None:
            continue
        print(f"warning: {str(leftover)!r} is left from {writer} into {str(into)!r} that did not finish (killed or "
              f"crashed); it is not part of the output: delete it (rm -r {str(leftover)!r})", file=sys.stderr)
