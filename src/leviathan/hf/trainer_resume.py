"""An adopted model resumed by ``transformers.Trainer`` from a checkpoint folder holds that folder's own weights.

    check_trainer_resume()   # in load_state_dict: UserError when the Trainer's checkpoint weights are not its save's
                             # (or its config.json is missing or not the adopted save's: round 31, AA736, AA737)

``Trainer.train(resume_from_checkpoint=...)`` reads ``model.safetensors`` itself and hands the tensors to the model's
``load_state_dict``; ``load_adopted`` checks the file against the sha256 its config.json records
(``weights_digest.check_weights``, round 27, S475), but this path skipped it: another run's checkpoint-2
model.safetensors (same shapes) copied over this run's was resumed without a word, the other run's weights going on
under this run's optimizer, scheduler and data position (issue 30 round 30, Y535). ``load_state_dict`` gets only the
tensors, so the folder is read from the Trainer's own frame (``Trainer._load_from_checkpoint``'s
``resume_from_checkpoint``): the one place transformers loads a checkpoint's weights file into a built model.
Footgun: it depends on that method's name and argument; a transformers that renames them resumes unchecked, as
before (tests/reliability/test_trainer_resume_weights_held_to_the_save.py notices).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import UserError

_LOADER = "_load_from_checkpoint"  # transformers.Trainer's method that loads a checkpoint folder's weights file


def resumed_folder(depth: int = 2) -> Path | None:
    """The checkpoint folder ``transformers.Trainer._load_from_checkpoint`` is loading, when it is the caller
    ``depth`` frames up (``load_state_dict``'s caller); None otherwise."""
    frame = sys._getframe(depth)
    for _ in range(3):  # load_state_dict may be reached through a wrapper or two (torch's, accelerate's)
        if frame is None:
            return None
        if frame.f_code.co_name == _LOADER and frame.f_globals.get("__name__", "").startswith("transformers."):
            folder = frame.f_locals.get("resume_from_checkpoint")
            return Path(folder) if isinstance(folder, (str, os.PathLike)) and os.path.isdir(folder) else None
        frame = frame.f_back
    return None


def check_trainer_resume() -> None:
    """UserError when ``Trainer`` is resuming this adopted model from a checkpoint folder whose whole weights file
    is not the one its config.json records (``weights_digest.check_weights``'s line: another save's file, or a
    record edited); nothing is loaded then. The folder's config.json must be the adopted save's, read as
    ``load_adopted`` reads it (``config_file.read_config_json``): a checkpoint without config.json, or whose
    config.json was '{"a": 1, "a": 2}' (a key twice, no ``leviathan_generator``), resumed without a word, the digest
    check skipped for want of a record, so any run's weights were taken (issue 30 round 31, AA736, AA737)."""
    from .config_file import read_config_json
    from .weights_digest import check_weights

    folder = resumed_folder(depth=3)
    if folder is None:
        return
    config = folder / "config.json"
    fix = ("restore the checkpoint folder from a copy, or resume from another checkpoint "
           "(trainer.train(resume_from_checkpoint=FOLDER))")
    if not config.is_file():
        raise UserError(f"{str(config)!r} is missing, though an adopted model's save_pretrained writes it into every "
                        f"checkpoint with the sha256 of the weights saved with it, so weights of another run could not "
                        f"be told from this one's; {fix}")
    raw = read_config_json(config, fix)
    if "leviathan_generator" not in raw:
        raise UserError(f"{str(config)!r} is not an adopted model's config.json (it has no leviathan_generator), "
                        f"while the model resumed from it is adopted: config.json was edited or replaced, or the "
                        f"checkpoint is another model's; {fix}")
    check_weights(folder, raw, None)
