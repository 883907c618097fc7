"""Checkpoints, written: atomic step folders that hold everything an exact resume needs, and nothing pickled.

The format and the inference loader live in ``leviathan/checkpoint/``, which evaluation uses too; this module is the
training side: saving a step folder, pruning, and reading back a resume's whole training state (``load_state``).

Atomicity: files are written into ``checkpoints/.tmp-step-XXXXXXXX`` with an fsync each, the folder is fsynced and
renamed to ``step-XXXXXXXX``, then the parent is fsynced: a ``step-*`` folder is complete unless damaged by hand
(``is_complete`` still checks every required file before a resume trusts it; ``.tmp-*`` leftovers of a crash are
removed at the next start). A save that fails (a full disk, a second Ctrl-C) removes its temporary folder at once
and leaves the previous checkpoints untouched; a full disk is a ``UserError`` that says so. The schedule is a pure
function of the step and needs no state. RNG: rank 0's states are saved and restored on every rank (the training
step draws no random numbers; they are kept so that future stochastic layers resume exactly).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import save_file

from ..checkpoint.damage import refuse_damaged_newest
from ..checkpoint.find import find_checkpoint
from ..checkpoint.layout import (CHECKPOINTS, FORMAT, is_complete, is_temporary, latest_checkpoint, list_checkpoints,
                                 step_name, step_of)
from ..checkpoint.read import load_tensors, load_weights
from ..checkpoint.state import fingerprints, read_step_state, verify_companions
from ..config import load_yaml
from ..errors import UserError, storage_error_message
from ..io import publish
from ..removal import remove_tree, warn_left
from ..storage import storage_oserror


def resolve_resume(resume: str | None, run_dir: Path) -> Path | None:
    """``None`` -> fresh start; ``auto`` -> the latest complete step of ``run_dir`` or None; else that checkpoint."""
    if resume in (None, "auto"):
        refuse_damaged_newest(run_dir, "train")  # neither start over nor resume an older step: either overwrites it
    if resume is None:
        return None
    if resume == "auto":
        return latest_checkpoint(run_dir)
    return find_checkpoint(resume)


# ---- RNG ----------------------------------------------------------------------------------------
def capture_rng() -> tuple[dict, dict]:
    """(JSON-able python/numpy states, tensor states for rng.pt)."""
    py = random.getstate()
    np_state = np.random.get_state()
    json_part = {
        "python": [py[0], list(py[1]), py[2]],
        "numpy": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]), float(np_state[4])],
    }
    tensors = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        tensors["cuda"] = torch.cuda.get_rng_state_all()
    return json_part, tensors


def restore_rng(json_part: dict, tensors: dict) -> None:
    v, state, gauss = json_part["python"]
    random.setstate((v, tuple(state), gauss))
    name, keys, pos, has_gauss, cached = json_part["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(tensors["torch"])
    if "cuda" in tensors and torch.cuda.is_available():
        states = tensors["cuda"]
        if len(states) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(states)


# ---- writing ------------------------------------------------------------------------------------
def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def model_tensors(state_dict: dict[str, torch.Tensor], tied: bool) -> dict[str, torch.Tensor]:
    """Contiguous CPU tensors for safetensors; a tied head is dropped (it *is* embed_tokens.weight)."""
    from ..value_rules import check_switches

    check_switches("model_tensors", tied=tied)  # 'no' was true (round 30, Y621's kind)
    out = {}
    for k, v in state_dict.items():
        if tied and k == "lm_head.weight":
            continue
        out[k] = v.detach().to("cpu").contiguous()
    return out


# every file a step folder (and its temporary folder) holds
STEP_FILES = ("model.safetensors", "optimizer.pt", "rng.pt", "config.yaml", "state.json", "tokenizer.json",
              "leviathan_tokenizer.json")


def clean_partial(run_dir: Path) -> None:
    """Remove ``.tmp-*`` folders left by a crash during a save.

    Call it only with the run folder's lock held (``train`` takes it: ``leviathan.locking``): then no other
    process can be writing a ``.tmp-*`` folder, and every one is the leftover of a crashed writer."""
    from ..ownership import leftover_is_own

    root = run_dir / CHECKPOINTS
    if root.is_dir():
        for child in root.iterdir():  # a user's folder of that name (files a step never holds) is left alone, and so
            # is one named otherwise than save_checkpoint names its temporaries: a user's backup of a step folder as
            # `.tmp-keep` was deleted as a crashed save's leftover (issue 30 round 12, T4)
            if is_temporary(child.name) and child.is_dir() and leftover_is_own(child, STEP_FILES):
                shutil.rmtree(child, ignore_errors=True)


@dataclass
class StepParts:
    """What one step folder holds, each part written to its own file by ``save_checkpoint``."""

    model_state: dict[str, torch.Tensor]  # model.safetensors (a tied head's weight left out: ``model_tensors``)
    tied: bool
    optim_state: dict  # optimizer.pt
    state: dict  # state.json: step, tokens, loader, rng, world size, training time, tokenizer name
    rng_tensors: dict  # rng.pt
    config_text: str  # config.yaml
    tokenizer: Any = None  # the data's tokenizer files (None: none to copy)

    @property
    def step(self) -> int:
        return self.state["step"]


# How a user goes on after a failed save, a stop or a divergence: train's own flag by default; a verb that runs train
# itself (sweep, demo: neither has --resume) names its own rerun (``train(..., resume_hint=...)``; issue 30 round 7).
TRAIN_RESUME_HINT = "continue with --resume auto"
RESUME_HINT: contextvars.ContextVar[str] = contextvars.ContextVar("resume_hint", default=TRAIN_RESUME_HINT)


@contextlib.contextmanager
def resume_hint(text: str):
    """Within the block, train's lines say ``text`` where they said "continue with --resume auto"."""
    token = RESUME_HINT.set(text)
    try:
        yield
    finally:
        RESUME_HINT.reset(token)


def save_checkpoint(run_dir: Path, parts: StepParts, keep_last: int | None = None) -> Path:
    """Write ``checkpoints/step-XXXXXXXX`` atomically and prune to ``keep_last``. Rank 0 only, with the run
    folder's lock held (``leviathan.locking``), so no other process writes there. A step folder of the same
    step already on disk (left by an earlier session that trained further from another checkpoint) is
    replaced, never kept in place of the state this process holds: the run's checkpoints are one history.
    """
    step = parts.step
    root = run_dir / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    final = root / step_name(step)
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise UserError(f"cannot save the checkpoint of step {step}: {str(final)!r} is a "
                        f"{'symbolic link' if final.is_symlink() else 'file'}, not a step folder train saved; move it "
                        f"out of {str(root)!r}, then {RESUME_HINT.get()}")
    tmp = root / f".tmp-{step_name(step)}-{os.getpid()}"
    old = None
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        save_file(model_tensors(parts.model_state, parts.tied), str(tmp / "model.safetensors"), metadata={"format": "pt"})
        publish(tmp / "model.safetensors")  # safetensors writes it 0600 whatever the umask (leviathan.io)
        torch.save(parts.optim_state, tmp / "optimizer.pt")
        torch.save(parts.rng_tensors, tmp / "rng.pt")
        (tmp / "config.yaml").write_text(parts.config_text)
        if parts.tokenizer is not None:
            parts.tokenizer.save_owned(tmp)
        files = fingerprints(tmp)  # state.json, written last, ties every other file of the folder to it
        (tmp / "state.json").write_text(json.dumps({"format": FORMAT, **parts.state, "files": files}, indent=1) + "\n")
        for f in tmp.iterdir():
            _fsync_file(f)
        _fsync_dir(tmp)
        if final.exists():  # the same step from another session, or damaged by hand: replace it
            old = root / f".tmp-old-{step_name(step)}-{os.getpid()}"  # a crash now leaves a .tmp-* (cleaned)
            os.rename(final, old)
        os.rename(tmp, final)  # before the old one is deleted: a file of it that cannot be deleted (immutable) lost
        _fsync_dir(root)  # both steps, the new one saved nowhere (issue 30 round 10, P92)
    except BaseException as e:
        if old is not None and old.exists() and not final.exists():
            os.rename(old, final)  # put the old step back where it was
        failed_write = storage_oserror(e, tmp)  # torch.save and safetensors report a full disk without an errno:
        # judged before the partial folder goes, which frees the disk (a full disk was named an I/O error: round 11,
        # R81)
        shutil.rmtree(tmp, ignore_errors=True)  # never leave a partial folder behind (a crash leaves .tmp-*)
        message = storage_error_message(failed_write) if failed_write is not None else None
        if message is None:
            raise
        latest = latest_checkpoint(run_dir)
        kept = f"the last complete checkpoint {str(latest)!r} is intact" if latest else "no earlier checkpoint exists"
        # the run folder named: a sweep's line said which step, not which of its runs (issue 30 round 14, A136)
        raise UserError(f"could not save the checkpoint of step {step} of run {str(run_dir)!r} ({message}); {kept}; "
                        f"after making room, {RESUME_HINT.get()}") from e
    if old is not None:
        _carry_users_files(old, final, step)
        if (problem := remove_tree(old)) is not None:
            warn_left(old, problem, f"the replaced checkpoint of step {step}, moved aside to", f"the new one is saved "
                      f"as '{final}'")
    if keep_last is not None:
        prune(run_dir, keep_last, parts.state.get("data_fingerprint"))
    return final


def users_files(step_dir: Path) -> list[str]:
    """Names in a step folder that train does not save there (a user's notes, an evaluation's output)."""
    return sorted(p.name for p in step_dir.iterdir() if p.name not in STEP_FILES)


def _carry_users_files(old: Path, final: Path, step: int) -> None:
    """Move what a user put in the replaced step folder into the new one, where they left it: a step saved again
    (a resume from an earlier step) deleted a user's ``step-N/notes.txt`` with the old folder, exit 0 (issue 30
    round 11, R79)."""
    moved = []
    for name in users_files(old):
        try:
            os.rename(old / name, final / name)
            moved.append(name)
        except OSError as e:  # left in ``old``, which then stays and is named by the warning that follows
            print(f"warning: could not move {name!r} of the replaced step-{step} folder into the new one "
                  f"({(e.strerror or str(e)).lower()})", file=sys.stderr)
    if moved:
        print(f"note: step {step} saved again; kept {', '.join(moved)} (not written by leviathan) in '{final}'",
              file=sys.stderr)


# step folders keep_last left in place and said so: one note each per process, not one at every later save
_LEFT_NOTED: set[str] = set()


def prune(run_dir: Path, keep_last: int, data_fingerprint: str | None = None) -> None:
    """Delete all but the newest ``keep_last`` complete checkpoints. A step folder holding files train did not save
    there keeps them (its own files are deleted, state.json first, so it no longer counts as a checkpoint): keep_last
    deleted a user's ``step-N/notes.txt`` with the folder (issue 30 round 11, R80). ``data_fingerprint``: the data
    this run trains on (what the step just saved records), for ``not_own_step``."""
    for step, path in list_checkpoints(run_dir)[:-keep_last]:
        if path.is_symlink():  # a user's link (train makes none): pruning it deleted the files of the folder it
            continue  # names, outside the run, and a link to a step pruned first ended in a traceback (round 13, V92)
        if (foreign := not_own_step(path, run_dir, data_fingerprint)) is not None:
            if str(path) not in _LEFT_NOTED:
                _LEFT_NOTED.add(str(path))
                print(f"note: keep_last={keep_last} left '{path}' in place: {foreign}; move or delete it yourself if "
                      f"it is not wanted", file=sys.stderr)
            continue
        others = users_files(path)
        problem = _remove_own_files(path) if others else remove_tree(path)
        if problem is not None:  # round 10 (P22): a half-deleted step folder, no word
            warn_left(path, problem, f"the old checkpoint (dropped by keep_last={keep_last})", "it may be incomplete now; "
                      "the run goes on from its newer checkpoints")
        elif others:
            print(f"note: keep_last={keep_last} dropped the checkpoint of step {step} but kept its folder '{path}' for "
                  f"{', '.join(others)} (not written by leviathan)", file=sys.stderr)


def not_own_step(step_dir: Path, run_dir: Path, data_fingerprint: str | None = None) -> str | None:
    """Why ``step_dir`` is not provably a complete step this run saved, or None: keep_last deleted a step folder
    copied in from another run whose state.json says another step than its name (issue 30 round 15, A164) and one
    whose model.safetensors train did not write (sha256 not the one state.json records, A165). Only a folder whose
    state.json reads, names its own step, records this run's id and whose recorded files are the ones saved is
    deleted. A step without a run_id proves nothing (round 16, C16, C17: another run's step with its run_id deleted,
    or one saved before run ids, was deleted as this run's): it is left, and one trained on other data than this
    run's (``data_fingerprint``) is named so."""
    from ..run_identity import read_identity

    try:
        state = read_step_state(step_dir)
        own = read_identity(run_dir)
        if state.run_id is None:
            return _no_run_id(state.data_fingerprint, data_fingerprint)
        if own is not None and state.run_id != own.run_id:
            return f"it was saved by another run (run_id {state.run_id}, this run is {own.run_id})"
        verify_companions(step_dir, state)
    except UserError as e:
        return str(e).split("; ")[0]
    return None


def _no_run_id(saved: str | None, current: str | None) -> str:
    """Why a step folder whose state.json records no run_id is not proven this run's (``not_own_step``)."""
    if saved is not None and current is not None and saved != current:
        return (f"it was trained on other data (data_fingerprint {saved[:12]}... in its state.json, this run's data is "
                f"{current[:12]}...) and records no run_id: it is another run's")
    return ("its state.json records no run_id (saved before run ids, or edited), so nothing proves it is a step of "
            "this run")


def _remove_own_files(step_dir: Path) -> str | None:
    """Delete the files train saves in a step folder, state.json first; None, or ``'FILE': PROBLEM`` of the first
    that stayed."""
    for name in ("state.json", *(n for n in STEP_FILES if n != "state.json")):
        try:
            (step_dir / name).unlink(missing_ok=True)
        except OSError as e:
            return f"{str(step_dir / name)!r}: {(e.strerror or str(e)).lower()}"
    return None


# ---- reading a training state -----------------------------------------------------------------
def load_state(path: Path) -> dict[str, Any]:
    """Everything a resume needs from a step folder; only safetensors, weights_only loads, JSON and YAML. state.json
    is checked field by field and every file against the fingerprint it records (``leviathan.checkpoint_state``)."""
    state = read_step_state(path)
    verify_companions(path, state)
    return {
        "model": load_weights(path / "model.safetensors"),
        "optimizer": load_tensors(path / "optimizer.pt"),
        "rng": load_tensors(path / "rng.pt") if (path / "rng.pt").exists() else None,
        "state": state.raw,
        "config": load_yaml(path / "config.yaml"),
    }

