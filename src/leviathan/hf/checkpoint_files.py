"""A Trainer checkpoint's files are there and readable before a resume reads them (issue 30 round 35).

    check_checkpoint_files(folder)   # check_resume_checkpoint, and both classes' resume hooks (load_state_dict)

A checkpoint with ``leviathan_checkpoint.json`` (``checkpoint_record``) has every file held to its sha256; one saved
before the record existed (or whose record was removed) had none of this: its model.safetensors removed was
transformers' raw "Can't find a valid checkpoint" (AI52), truncated safetensors' raw "SafetensorError: invalid header
length" (AI60, AI61), a truncated optimizer.pt torch's raw "PytorchStreamReader failed reading zip archive" after the
weights were loaded (AI66), and ``check_resume_checkpoint`` returned such folders without a word. Checked here: a
weights file the Trainer reads is there, a model.safetensors' header reads (safetensors checks the data's length
against it), and each optimizer / scheduler / scaler / RNG file present is a file torch can open as its zip archive.

Footgun: the Trainer reads the weights before any hook of the model runs, so a missing or truncated weights file is
named by ``check_resume_checkpoint`` (docs/USING.md section 5 says to call it first), not by ``trainer.train``'s own
resume; the optimizer's and the rest are named by both. Costs a stat per file, one header read and one load of
each optimizer / scheduler / scaler / RNG file (the optimizer's is about twice the weights: read again by the
Trainer right after).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from ..errors import UserError

WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
_FIX = "restore the checkpoint folder from a copy, or resume from another checkpoint " \
       "(trainer.train(resume_from_checkpoint=FOLDER))"


def check_checkpoint_files(folder: Path) -> None:
    """UserError naming the first file of the Trainer checkpoint ``folder`` a resume could not read (the module
    docstring)."""
    if not any((folder / name).is_file() for name in WEIGHTS):
        raise UserError(f"{str(folder)!r} holds no weights file (model.safetensors), which every Trainer checkpoint "
                        f"holds: it was removed or renamed; {_FIX}")
    weights = folder / "model.safetensors"
    if weights.is_file():
        _check_safetensors(weights)
    for path in sorted([*(folder / n for n in ("optimizer.pt", "scheduler.pt", "scaler.pt")),
                        *folder.glob("rng_state*.pth")]):
        if not path.exists() and not path.is_symlink():
            continue
        if not path.is_file():
            raise UserError(f"{str(path)!r} is not a file, where the Trainer saved one; a resume would skip or fail "
                            f"on it; {_FIX}")
        if not zipfile.is_zipfile(path):
            raise UserError(f"{str(path)!r} is not a file torch saved (no readable zip archive: truncated or "
                            f"overwritten), so a resume would fail on it after loading the weights; {_FIX}")
        _check_contents(path)


# the keys each file's object holds as the Trainer writes it (torch's state_dict of the optimizer and scheduler, the
# GradScaler's, and the Trainer's RNG states), read back by the Trainer with ``torch.load(weights_only=True)``
_KEYS = {"optimizer.pt": ("state", "param_groups"), "scheduler.pt": ("base_lrs", "last_epoch"),
         "scaler.pt": (), "rng_state": ("python", "numpy", "cpu")}  # a disabled scaler saves {}
_NAMES = {"optimizer.pt": "optimizer", "scheduler.pt": "scheduler", "scaler.pt": "grad scaler", "rng_state": "RNG"}


def _check_contents(path: Path) -> None:
    """UserError when ``path`` does not load as the Trainer loads it (``torch.load(weights_only=True)``), or holds
    another object than its name says: a checkpoint without a record whose optimizer.pt was its scheduler.pt, whose
    rng_state.pth was its optimizer.pt, or an empty or foreign zip archive in their place resumed into raw KeyError,
    RuntimeError and UnpicklingError tracebacks after the weights were loaded (issue 30 round 36, AK27-AK29, AK33,
    AK55). Costs one read of each file (the optimizer's is about twice the weights)."""
    import torch
    from transformers.trainer_pt_utils import safe_globals  # the Trainer's allow-list of numpy's RNG objects

    kind = "rng_state" if path.name.startswith("rng_state") else path.name
    try:
        with safe_globals():
            loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch's RuntimeError (not its archive layout), UnpicklingError (an object it refuses)
        raise UserError(f"{str(path)!r} does not load as the Trainer loads it ({type(e).__name__}: "
                        f"{str(e).strip().splitlines()[0][:100] if str(e).strip() else ''}): not the file torch saved "
                        f"there; {_FIX}") from None
    missing = [key for key in _KEYS[kind] if not isinstance(loaded, dict) or key not in loaded]
    if missing:
        held = f"a {type(loaded).__name__}" if not isinstance(loaded, dict) else f"keys {sorted(loaded)[:4]}"
        raise UserError(f"{str(path)!r} holds {held}, not the {_NAMES[kind]} state the Trainer saves under that "
                        f"name (it lacks {', '.join(missing)}): another file of the checkpoint, or another program's, "
                        f"was put in its place; {_FIX}")


def _check_safetensors(path: Path) -> None:
    """UserError when ``path``'s safetensors header does not read or does not match the file's length."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            f.keys()
    except Exception as e:  # SafetensorError (truncated, not safetensors), OSError
        raise UserError(f"{str(path)!r} is not a whole safetensors file ({str(e).splitlines()[0][:120]}): truncated "
                        f"or overwritten; {_FIX}") from None
