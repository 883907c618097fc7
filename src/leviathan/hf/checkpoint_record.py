"""A Trainer checkpoint of either HF class records the digest of every file in it; a resume holds the files to it.

    note_trainer_save(folder)          # in save_pretrained: inside Trainer._save_checkpoint, the Trainer gets a
                                       # RecordCheckpointFiles callback (once) and the folder is marked pending
    RecordCheckpointFiles.on_save      # after the Trainer wrote optimizer.pt, scheduler.pt, rng_state.pth and
                                       # trainer_state.json: leviathan_checkpoint.json = {file: sha256} of the folder
    check_checkpoint_record(folder)    # in both classes' resume checks and check_resume_checkpoint: UserError when a
                                       # recorded file is gone or changed, or a file the Trainer reads was added

The model's ``save_pretrained`` records the weights' sha256 in config.json, but the Trainer writes its optimizer,
scheduler, RNG and state files after the model's save, so nothing recorded them: another run's optimizer.pt of the
same step, an earlier step's scheduler.pt and another run's trainer_state.json were resumed without a word (issue 30
round 33, AE158, AE159, AE165). The record is written by a ``transformers.TrainerCallback`` whose ``on_save`` runs
right after ``Trainer._save_checkpoint``; ``save_pretrained`` finds the Trainer in its caller's frame and adds the
callback itself, so a user need not (passing ``callbacks=[RecordCheckpointFiles()]`` is the same; it is added once).

Footguns: the Trainer is found by ``_save_checkpoint``'s name, as ``trainer_resume`` finds ``_load_from_checkpoint``;
a transformers that renames it writes no record (tests/reliability/test_trainer_checkpoint_record.py notices). A
checkpoint without a record (saved before this, or by a Trainer with ``save_only_model`` elsewhere) is resumed
unchecked: the record proves the files belong together, it is not a signature (deleting it and swapping a file
still passes). Costs one sha256 pass over the checkpoint at each save and each resume (about 1 s per GB here).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import sys
from pathlib import Path

import transformers

from ..errors import UserError

RECORD = "leviathan_checkpoint.json"
FORMAT = "leviathan-trainer-checkpoint/1"
_SAVER = "_save_checkpoint"  # transformers.Trainer's method that writes a checkpoint-N folder
# What the Trainer reads back on a resume: such a file present but not recorded was put there after the save.
TRAINER_READS = ("trainer_state.json", "optimizer.pt", "scheduler.pt", "scaler.pt", "rng_state*.pth", "config.json",
                 "generation_config.json", "*.safetensors", "*.safetensors.index.json", "pytorch_model*.bin",
                 "pytorch_model*.bin.index.json")
_FIX = ("restore the checkpoint folder from a copy, or resume from another checkpoint "
        "(trainer.train(resume_from_checkpoint=FOLDER))")


class RecordCheckpointFiles(transformers.TrainerCallback):
    """Writes ``leviathan_checkpoint.json`` (every file of the checkpoint folder with its sha256) after the Trainer
    saved a checkpoint of a Leviathan model (``on_save``). ``pending``: the folder ``save_pretrained`` wrote inside
    ``Trainer._save_checkpoint``, None between saves; a save of another model writes no record."""

    def __init__(self):
        self.pending: Path | None = None

    def on_save(self, args, state, control, **kwargs):
        folder, self.pending = self.pending, None
        if folder is not None and args.should_save and folder.is_dir():
            write_checkpoint_record(folder)


def note_trainer_save(save_directory) -> None:
    """After ``save_pretrained`` wrote ``save_directory``: when the caller is ``transformers.Trainer._save_checkpoint``
    (a checkpoint-N folder), add a ``RecordCheckpointFiles`` to that Trainer unless it has one, mark the folder
    pending and remove a record left there by an earlier save (the files are new; the callback writes theirs).
    Any other caller: nothing."""
    trainer = _saving_trainer()
    if trainer is None:
        return
    handler = trainer.callback_handler
    callback = next((c for c in handler.callbacks if isinstance(c, RecordCheckpointFiles)), None)
    if callback is None:
        callback = RecordCheckpointFiles()
        handler.add_callback(callback)
    folder = Path(save_directory)
    (folder / RECORD).unlink(missing_ok=True)
    callback.pending = folder


@contextlib.contextmanager
def trainer_folder_dropped_on_refusal(save_directory):
    """Around a model's ``save_pretrained``: when it fails inside ``Trainer._save_checkpoint`` (a refusal: the
    Trainer's output_dir is a verb's output, an export, a run or a data folder), the checkpoint-N folder the Trainer
    made empty just before (``Trainer.save_model``'s ``os.makedirs``) is removed again, so a refused save leaves
    nothing behind. It stayed, and the verb's own ``--overwrite`` then refused its folder for holding files the verb
    did not write (issue 30 round 35, AI375, AI376, AI377). Only an empty folder is removed; any other caller's
    folder is left as it is."""
    try:
        yield
    except BaseException:
        if _saving_trainer(depth=3) is not None:
            with contextlib.suppress(OSError):
                os.rmdir(save_directory)  # only succeeds on an empty folder
        raise


def _saving_trainer(depth: int = 2):
    """The ``transformers.Trainer`` whose ``_save_checkpoint`` is up the stack (through ``save_model`` / ``_save``),
    or None. ``depth``: the frames to skip (this function's and its caller's by default)."""
    frame = sys._getframe(depth)
    for _ in range(10):
        if frame is None:
            return None
        if frame.f_code.co_name == _SAVER and frame.f_globals.get("__name__", "").startswith("transformers."):
            trainer = frame.f_locals.get("self")
            return trainer if hasattr(trainer, "callback_handler") else None
        frame = frame.f_back
    return None


def write_checkpoint_record(folder: Path) -> None:
    """``folder``/leviathan_checkpoint.json: the format and each file below ``folder`` (relative, '/'-separated;
    FSDP's optimizer_0/ folders included) with its sha256, written atomically."""
    from ..io import atomic_write_json, sha256_file

    files = {name: sha256_file(folder / name) for name in _files(folder)}
    atomic_write_json(folder / RECORD, {"format": FORMAT, "files": files})


def check_checkpoint_record(folder: Path) -> None:
    """UserError when ``folder`` holds a record and a file it lists is missing or not the one saved (another run's
    optimizer.pt, an earlier step's scheduler.pt, another trainer_state.json: AE158, AE159, AE165), or a file the
    Trainer reads (``TRAINER_READS``) is there but was not when the checkpoint was saved. No record: nothing."""
    from ..io import sha256_file

    record = folder / RECORD
    if not os.path.lexists(record):
        return
    files = _read_record(record)
    for name, digest in files.items():
        path = folder / name
        if not path.is_file():  # the Trainer skips a missing optimizer.pt / scheduler.pt silently: a fresh one
            raise UserError(f"{str(path)!r} is missing, though the Trainer saved it into this checkpoint ({RECORD} "
                            f"lists it); a resume would go on without it; {_FIX}")
        if (found := sha256_file(path)) != digest:
            raise UserError(f"{str(path)!r} is not the file the Trainer saved into this checkpoint ({RECORD} records "
                            f"sha256 {digest[:16]}..., the file's is {found[:16]}...): it was replaced, by another "
                            f"run's or another step's, and would resume this run in a state it never had; {_FIX}")
    for name in _files(folder):
        if name not in files and any(fnmatch.fnmatch(name.rsplit("/", 1)[-1], p) for p in TRAINER_READS):
            raise UserError(f"{str(folder / name)!r} was not in this checkpoint when the Trainer saved it ({RECORD} "
                            f"does not list it), and a resume would read it: it was copied in afterwards; remove it, "
                            f"or {_FIX}")


def _read_record(record: Path) -> dict[str, str]:
    """The record's ``files`` (name -> 64 hex digits), or a UserError naming what is wrong with the file."""
    from .digest_record import read_record

    return read_record(record, FORMAT, f"{str(record)!r} is not the record the checkpoint was saved with", _FIX,
                       nested=True)


def _files(folder: Path) -> list[str]:
    """Every regular file below ``folder`` but the record, as sorted relative '/'-separated names."""
    names = []
    for root, _, found in os.walk(folder):
        for f in found:
            path = Path(root) / f
            name = path.relative_to(folder).as_posix()
            if name != RECORD and path.is_file():
                names.append(name)
    return sorted(names)
