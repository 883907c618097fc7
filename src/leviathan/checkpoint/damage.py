"""A damaged newest checkpoint is refused, never passed over: resuming from an older one would overwrite it.

    refuse_damaged_newest(run_dir, "resume")   # UserError if the newest step-* folder is damaged

A ``step-*`` folder appears only by an atomic rename once every file is written (``train/checkpoint``), so an
incomplete or unreadable one was damaged afterwards (by hand, a bad copy, a failing disk). ``list_checkpoints``
skips such folders, right for choosing what to load but wrong for deciding to go on: ``--resume auto`` once started
over from step 0 and, reaching that step, deleted the folder whose weights were intact. So a run folder whose
newest ``step-*`` folder is damaged but still holds readable weights is refused (a resume, a fresh start, ``eval`` /
``generate`` / ``export`` of the run folder) with what is wrong and the fix: restore the file, or move the folder
out of ``checkpoints/`` to continue from the previous one. With its weights unreadable too there is nothing left to
protect: it is passed over with a note on stderr. Older damaged folders are left alone; nothing is deleted here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import UserError, not_a_file
from .layout import CHECKPOINTS, REQUIRED, list_checkpoints, step_of
from .misnamed import refuse_misnamed_newer
from .. import json_text


def files_problem(step_dir: Path) -> str | None:
    """Which files a step folder needs are not there as files ("optimizer.pt missing"), or None. A pipe or a folder in
    a file's place is named as what it is: "state.json missing" sent the user looking for a file ``ls`` lists (issue
    30 round 23, U390, U399, U400)."""
    missing = [f for f in REQUIRED if not (step_dir / f).is_file()]
    named = [f"{f} {what}" for f in missing if (what := not_a_file(step_dir / f)) is not None]
    absent = [f for f in missing if not_a_file(step_dir / f) is None]
    return "; ".join(([f"{', '.join(absent)} missing"] if absent else []) + named) or None


def _problem(step_dir: Path) -> str | None:
    """What is wrong with a step folder (None: complete)."""
    if (missing := files_problem(step_dir)) is not None:
        return missing
    try:
        state = json_text.read_file(step_dir / "state.json")
    except (OSError, ValueError):
        return "state.json is not readable JSON"
    if not isinstance(state, dict):
        return "state.json is not a JSON object"
    return None


def _weights_intact(step_dir: Path) -> bool:
    """model.safetensors opens and every tensor's bytes are inside the file (reads the header only)."""
    try:
        from safetensors import safe_open

        with safe_open(str(step_dir / "model.safetensors"), framework="pt") as f:
            return len(list(f.keys())) > 0
    except Exception:  # noqa: BLE001 - any defect means: not intact
        return False


def refuse_damaged_newest(run_dir: str | os.PathLike, doing: str) -> None:
    """UserError if the newest ``step-*`` folder of ``run_dir`` is damaged (see the module docstring), or a newer step
    sits under a name train does not write (``misnamed``, issue 30 round 21, P373, P374)."""
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return
    refuse_misnamed_newer(run_dir, doing)
    steps = sorted((step, p) for p in root.iterdir()
                   if (step := step_of(p.name)) is not None and (p.is_dir() or p.is_symlink()))
    if not steps:
        return
    newest_step, newest = steps[-1]
    _refuse_dead_link(newest, doing, run_dir)
    problem = _problem(newest)
    if problem is None:
        return
    complete = list_checkpoints(run_dir)
    previous = f"the previous checkpoint ({complete[-1][1].name})" if complete else "step 0"
    if not _weights_intact(newest):
        print(f"note: {str(newest)!r} is damaged ({problem}) and its weights are not readable; passed over, going on "
              f"from {previous}", file=sys.stderr)
        return
    weights = "its weights (model.safetensors) are intact"
    raise UserError(f"cannot {doing}: the newest checkpoint {str(newest)!r} is damaged ({problem}; {weights}); it is "
                    f"not skipped, since going on from {previous} would overwrite it: restore the damaged file from "
                    f"a copy, or move that folder out of {str(root)!r} to go on from {previous}")


def _refuse_dead_link(newest: Path, doing: str, run_dir: str | os.PathLike) -> None:
    """UserError when the newest step entry is a symbolic link that leads nowhere (its disk not mounted, its folder
    moved): eval used the step before it and a resume went on from there, no word of the newer step, and the link
    stayed in checkpoints/ (issue 30 round 18, G401). Nothing is passed over that the link may stand for."""
    from ..errors import dead_link

    dead = dead_link(newest)
    if dead is None:
        return
    complete = list_checkpoints(run_dir)
    previous = f"the previous checkpoint ({complete[-1][1].name})" if complete else "step 0"
    raise UserError(f"cannot {doing}: the newest checkpoint {str(newest)!r} {dead[1]}; it is not skipped, since it "
                    f"may stand for a newer step (a disk not mounted, a folder moved): restore what it names, or "
                    f"remove the link (rm {str(newest)!r}) to go on from {previous}")
