"""A step folder under a name train does not write, holding a step newer than the run's newest: named, never passed.

    refuse_misnamed_newer(run_dir, "train")   # UserError if checkpoints/step-4 holds step 4 beside step-00000002

Footgun it guards (issue 30 round 21, P373, P374): ``checkpoints/step-00000004`` renamed ``step-4`` is not a step
name (``layout.step_of``, rightly: a user's backup must never be pruned as a step), so ``eval RUN`` evaluated step 2
without a word, and ``train --resume auto`` resumed from step 2 and saved a second step 4 beside ``step-4``: two
branches' step 4 in one run. An entry of ``checkpoints/`` that is neither a step name nor one of train's temporary
names and whose state.json records a step past the newest step folder is refused with the two ways on: give it its
step name, or move it out. Backups of a step the run still has (or of an older one) and the user's other files are
left alone without a word, as before (round 16, C226).
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import json_text
from ..errors import UserError
from .layout import CHECKPOINTS, is_temporary, list_checkpoints, step_name, step_of


def _recorded_step(entry: Path) -> int | None:
    """The step a folder's state.json records (None: no folder, no readable state.json, no whole-number step)."""
    try:
        state = json_text.read_file(entry / "state.json")
    except (OSError, ValueError):
        return None
    step = state.get("step") if isinstance(state, dict) else None
    return step if isinstance(step, int) and not isinstance(step, bool) and step > 0 else None


def refuse_misnamed_newer(run_dir: str | os.PathLike, doing: str) -> None:
    """UserError when an entry of ``run_dir/checkpoints`` not named as train names step folders holds a step newer
    than the newest one that is (see the module docstring)."""
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return
    complete = list_checkpoints(run_dir)
    newest = complete[-1][0] if complete else 0
    for entry in sorted(root.iterdir()):
        if step_of(entry.name) is not None or is_temporary(entry.name) or not entry.is_dir():
            continue
        step = _recorded_step(entry)
        if step is not None and step > newest:
            previous = f"the newest step folder ({complete[-1][1].name})" if complete else "step 0"
            raise UserError(f"cannot {doing}: {str(entry)!r} holds step {step} (its state.json), newer than "
                            f"{previous}, but is not named as train names step folders, so it would be passed over; "
                            f"rename it to {str(root / step_name(step))!r} to use it, or move it out of "
                            f"{str(root)!r} to go on from {previous}")
