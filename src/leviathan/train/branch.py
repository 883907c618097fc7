"""One run folder, one history: a resume from an older step of the same run folder is refused while newer step
folders exist (issue 30 round 14, A179).

    refuse_older_step(Path("run/checkpoints/step-00000002"), Path("run"), "run/checkpoints/step-00000002")

Before, ``train --run-dir X --resume X/checkpoints/step-00000002`` with step-00000004 on disk cut metrics.jsonl back
to step 2 and appended the new branch's step 3, then ``keep_last`` deleted step 2 and kept the old branch's step 4:
the folder mixed two branches, and ``eval X`` / ``--resume auto`` took the old step 4, whose metrics rows were gone
(exit 0). Forking into a new ``--run-dir`` is right (A180) and stays allowed; so is resuming the newest step.
The check runs before the run folder is written (``load_resume``), so a refusal leaves it untouched.

A step folder of another run copied into this one's checkpoints/ (round 14, A156: ``cp -a rb/checkpoints/step-00000004
X/checkpoints/`` then ``--resume auto``) continued X from run B's weights and config, exit 0: its files agreed with its
own state.json. Its state.json records B's run id, which is not X's (``leviathan.run_identity``): refused the same way
(``refuse_other_runs_step``), before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..checkpoint.layout import list_checkpoints, step_before, step_of
from ..errors import UserError
from ..run_identity import refuse_foreign_step


def refuse_older_step(path: Path, run_dir: Path, resume: str) -> None:
    """UserError when ``path`` (the step folder a resume continues from) is a step folder of ``run_dir`` and newer
    complete step folders of ``run_dir`` exist (their metrics rows and step folders would be mixed with the new
    branch's); nothing when ``path`` lies elsewhere (a fork into this folder is ``load_resume``'s other check)."""
    step = step_of(path.name)
    if step is None or not _same_folder(path.parent.parent, run_dir):
        return
    newer = [folder for number, folder in list_checkpoints(run_dir) if number > step]
    if not newer:
        return
    names = ", ".join(folder.name for folder in newer[:3]) + (" ..." if len(newer) > 3 else "")
    checkpoints = str(run_dir / "checkpoints")
    raise UserError(f"--resume {str(resume)!r} is step {step} of run folder {str(run_dir)!r}, which holds newer steps "
                    f"({names}): training on from step {step} there would cut metrics.jsonl back and mix the two "
                    f"branches' step folders; fork it into a new run folder (leviathan train --run-dir NEW --resume "
                    f"{str(path)!r}), or move the newer step folders out of {checkpoints!r} first")


def _same_folder(a: Path, b: Path) -> bool:
    """Whether two paths name one folder (symbolic links and ``..`` resolved; a missing one is not the same)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_other_runs_step(path: Path, run_dir: Path) -> None:
    """UserError when ``path``, a step folder of ``run_dir`` a resume would continue from, was saved by another run
    (its state.json's run id is not run.json's); a step of another run folder (a fork) is not this check's."""
    from ..checkpoint.state import read_step_state

    if step_of(path.name) is None or not _same_folder(path.parent.parent, run_dir):
        return
    checkpoints = str(run_dir / "checkpoints")
    before = step_before(run_dir, path)  # none: "goes on from this run's previous step" could not work (AH257)
    then = (f"--resume auto then goes on from this run's previous step, {before.name}" if before is not None else
            "--resume auto then starts this run again from step 0, as it holds no other step")
    refuse_foreign_step(path, read_step_state(path).run_id,
                        f"move it out of {checkpoints!r} ({then}); "
                        f"to train on from it, fork it from where you moved it into a new run folder (leviathan train "
                        f"--run-dir NEW --resume MOVED_STEP_FOLDER)")


def refuse_linked_step(path: Path, run_dir: Path, resume: str) -> None:
    """UserError when ``path``, the step folder of ``run_dir`` a resume would continue from, is a symbolic link to a
    folder outside ``run_dir``. ``--resume auto`` with a link to another run's step as the newest step folder was
    refused as "--resume 'auto' is a checkpoint of another run folder ...; or continue this run with --resume auto":
    the fix named was the option given, and the link was not named (issue 30 round 23, U325)."""
    if not os.path.islink(path) or not _same_folder(path.parent.parent, run_dir):
        return
    target = os.path.realpath(path)
    if Path(target).is_relative_to(os.path.realpath(run_dir)):
        return
    checkpoints = str(run_dir / "checkpoints")
    raise UserError(f"--resume {str(resume)!r} would continue from {str(path)!r}, but that step folder is a symbolic "
                    f"link to {target!r}, outside run folder {str(run_dir)!r}: training on would mix that folder's "
                    f"run with this one's checkpoints; move the link out of {checkpoints!r} (--resume auto then goes "
                    f"on from this run's previous step), or fork the linked step into a new run folder (leviathan "
                    f"train --run-dir NEW --resume {target!r})")
