"""A step folder deleted while it was read: the run is being trained, and its ``keep_last`` pruned the step a reader
(export, eval, generate) had just taken as the newest (issue 30 round 15, A208).

    message = pruned_while_read(str(error)) or str(error)   # the one line to print

Before, the reader's line named the file it could no longer open as "missing, but state.json records it; the
checkpoint is incomplete: restore the file, or move the step folder out of checkpoints/" (a harmful fix: nothing was
damaged) or as "not a readable Hugging Face tokenizer.json". Now, when a step folder the line names is gone and a live
process holds the run folder's lock, the line says the run is being written and to run the command again.
Footgun: a step folder the user mistyped reads the same ("does not exist (any more)"), so the line claims no more.
A step folder still there, its files half deleted, is one only when a newer complete step exists (round 28, T31).
"""

from __future__ import annotations

import re
from pathlib import Path

_STEP_PATH = re.compile(r"(/?[^\s'\"]*?/checkpoints/step-\d{8,})")


def pruned_while_read(message: str) -> str | None:
    """The line for an error whose step folder vanished under a live training run, or None."""
    from ..locking import LOCK_NAME, _describe, held_by_another

    for match in _STEP_PATH.finditer(message):
        step = Path(match.group(1))
        being = step.exists() and _older_than_kept(step)  # mid-deletion: its files go before the folder (T31)
        if step.exists() and not being:
            continue
        run = step.parent.parent
        holder = held_by_another(run / LOCK_NAME)
        if holder is None:
            continue
        what = ("is being deleted, a newer step saved" if being else "does not exist (any more)")
        return (f"the step folder {str(step)!r} {what}: {_describe(*holder)} is training run {str(run)!r}, whose "
                f"keep_last deletes older steps as it saves new ones (the checkpoint is not damaged); run the command "
                f"again on the run folder (it takes the newest step then), or give a step folder the run keeps")
    return None


def _older_than_kept(step: Path) -> bool:
    """Whether a step folder that still exists lacks its state.json or model.safetensors while a newer step of the
    run is complete: keep_last removes a step's files one by one, and ``export`` of a run being trained with
    keep_last=1 read its step's model.safetensors just as it went, and was told to delete a step folder it called
    damaged (issue 30 round 28, T31), because the folder was still there."""
    from .layout import step_of

    mine = step_of(step.name)
    if mine is None or ((step / "state.json").is_file() and (step / "model.safetensors").is_file()):
        return False
    try:
        newer = [p for p in step.parent.iterdir() if (n := step_of(p.name)) is not None and n > mine]
    except OSError:
        return False
    return any((p / "state.json").is_file() for p in newer)
