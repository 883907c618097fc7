"""A step folder deleted while it was read: the run is being trained, and its ``keep_last`` pruned the step a reader
(export, eval, generate) had just taken as the newest (issue 30 round 15, A208).

    message = pruned_while_read(str(error)) or str(error)   # the one line to print

Before, the reader's line named the file it could no longer open as "missing, but state.json records it; the
checkpoint is incomplete: restore the file, or move the step folder out of checkpoints/" (a harmful fix: nothing was
damaged) or as "not a readable Hugging Face tokenizer.json". Now, when a step folder the line names is gone and a live
process holds the run folder's lock, the line says the run is being written and to run the command again.
Footgun: a step folder the user mistyped reads the same ("does not exist (any more)"), so the line claims no more.
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
        if step.exists():
            continue
        run = step.parent.parent
        holder = held_by_another(run / LOCK_NAME)
        if holder is None:
            continue
        return (f"the step folder {str(step)!r} does not exist (any more): {_describe(*holder)} is training run "
                f"{str(run)!r}, whose keep_last deletes older steps as it saves new ones; run the command again on "
                f"the run folder (it takes the newest step then), or give a step folder the run keeps")
    return None
