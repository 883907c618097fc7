"""The step folder a path names: a step folder itself, a ``checkpoints`` folder or a run folder (its latest step).

    step = find_checkpoint("runs/tiny")   # Path(".../checkpoints/step-00000500"), or a UserError naming the problem

Footgun it guards: an explicit step that is missing or incomplete is never replaced by another one, and a run
folder whose newest step is damaged is refused (``damage``), never answered with an older step.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UserError, missing as missing_path, not_a_folder_there
from .damage import files_problem, refuse_damaged_newest
from .layout import CHECKPOINTS, is_complete, latest_checkpoint, step_before, step_of


def find_checkpoint(path: str | os.PathLike) -> Path:
    """A step folder from a step folder, a ``checkpoints`` folder or a run folder (its latest step); an explicit step that
    is missing or incomplete is an error naming it, never replaced by another one. '' is refused, not read as the
    current folder ("'.' holds no complete checkpoint" named a folder never given: issue 30 round 23, U480).
    """
    from ..value_rules import check_read_path

    check_read_path("find_checkpoint", "path", path, "pass a run folder `leviathan train` wrote, or one of its checkpoints/step-XXXXXXXX folders")
    path = Path(path)
    if not os.path.exists(path):  # Path.exists raised ENAMETOOLONG for a 300-byte name (round 14, B328)
        auto = ("; to resume the run folder's latest checkpoint, spell the switch resume='auto' (round 35, AI220)"
                if str(path).strip().lower() == "auto" else "")
        raise UserError(f"checkpoint {str(path)!r} {missing_path(path)}; pass a run folder or one of its "
                        f"checkpoints/step-XXXXXXXX folders{auto}")
    if (path / "model.safetensors").exists() or step_of(path.name) is not None:
        _refuse_exported(path)
        if not is_complete(path):
            problem = files_problem(path) or "state.json not valid"  # a pipe named as one (round 23, U390's kind)
            raise UserError(f"checkpoint {str(path)!r} is incomplete ({problem}); pass a complete step folder or the "
                            f"run folder to use its latest complete step")
        return path
    if not path.is_dir():  # a file of the run (round 8: config.yaml "holds no complete checkpoint")
        parent = path.parent  # named only when it is a run folder: a text file's folder was offered (round 14, B235)
        run = (parent / CHECKPOINTS).is_dir() or (parent / "config.yaml").is_file() and (parent / "metrics.jsonl").exists()
        raise UserError(f"checkpoint {str(path)!r} {not_a_folder_there(path)}; pass "
                        + (f"the run folder ({str(parent)!r})" if run else "a run folder (as `leviathan train` writes)")
                        + " or one of its checkpoints/step-XXXXXXXX folders")
    run_dir = path.parent if path.name == CHECKPOINTS else path
    refuse_damaged_newest(run_dir, f"use {str(path)!r}")  # never an older step in place of a damaged newest one
    latest = latest_checkpoint(run_dir)
    if latest is None:
        raise UserError(f"{str(path)!r} holds no complete checkpoint (expected {CHECKPOINTS}/step-XXXXXXXX folders)"
                        f"{_what_it_is(path)}")
    _refuse_other_runs(latest, run_dir)
    return latest


def _refuse_other_runs(latest: Path, run_dir: Path) -> None:
    """UserError when the run folder's newest step was saved by another run (issue 30 round 14, A157: a step folder of
    run B copied into run X's checkpoints/ was evaluated and exported as X's, the card saying B's seed, exit 0). A step
    folder given itself is taken as what it is: that is the way to use such a step on purpose."""
    from ..run_identity import refuse_foreign_step
    from .state import read_step_state

    before = step_before(run_dir, latest)  # none: "the run's previous step is then used" could not work (AH256, AH258)
    then = (f"the run's previous step, {before.name}, is then used" if before is not None else
            "the run then holds no checkpoint of its own: train it to get one")
    refuse_foreign_step(latest, read_step_state(latest).run_id,
                        f"move it out of {str(run_dir / CHECKPOINTS)!r} ({then}), or give that step folder itself in "
                        f"place of the run folder to use it anyway")


def _what_it_is(path: Path) -> str:
    """What a folder without checkpoints holds, when it is another verb's output, and the way on: a prepared data
    folder or a sweep folder given where a run belongs was only "holds no complete checkpoint" (issue 30 round 9,
    M115, M122, M124)."""
    if (training := _being_trained(path)) is not None:
        return training
    if (path / "meta.json").is_file():
        return ("; it is a prepared data folder (meta.json, as `leviathan prepare` writes): pass a run folder, and "
                "this folder as its data (--data) where the verb takes one")
    if (path / "results.jsonl").is_file() or (path / "grid.json").is_file():
        return (f"; it is a sweep folder (results.jsonl, grid.json): pass one of its runs "
                f"({str(path / 'runs' / 'NAME')!r})")
    return "; pass a run folder `leviathan train` wrote, or one of its step folders"


def _being_trained(path: Path) -> str | None:
    """The way on for a run folder a live ``train`` holds (its .lock) before its first checkpoint, None for any other
    folder: ``eval`` there sent the user to "a run folder `leviathan train` wrote", another folder, while this one
    only needed its first save (issue 30 round 27, R51)."""
    from ..locking import LOCK_NAME, _describe, held_by_another

    holder = held_by_another(path / LOCK_NAME)
    if holder is None:
        return None
    return (f"; it is a run {_describe(*holder)} is training now (it holds {str(path / LOCK_NAME)!r}) and has saved "
            f"no checkpoint yet: wait for its first one (every checkpoint_interval steps, and at its end), or pass a "
            f"finished run")


def _refuse_exported(path: Path) -> None:
    """UserError when ``path`` is a Hugging Face folder (``leviathan export``'s output, or any ``save_pretrained``
    folder: config.json beside the weights, no state.json): it was called "incomplete (missing optimizer.pt,
    state.json, config.yaml)", which sent the user looking for files an export never has (issue 30 round 8, C3)."""
    if (path / "config.json").is_file() and not (path / "state.json").exists() and step_of(path.name) is None:
        raise UserError(f"{str(path)!r} is a Hugging Face folder (config.json and model.safetensors, as `leviathan "
                        f"export` writes), not a training checkpoint; this verb reads a run folder or one of its "
                        f"checkpoints/step-XXXXXXXX folders: pass the run it was exported from, or score the export "
                        f"with `leviathan lm-eval {path}` or load it with transformers (from_pretrained)")
