"""Checkpoints: atomic step folders that hold everything an exact resume needs, and nothing pickled.

    <run_dir>/checkpoints/step-00000500/
        model.safetensors   state dict of the unwrapped, uncompiled CausalLM; a tied head is stored
                            once (as model.embed_tokens.weight, the Hugging Face convention)
        optimizer.pt        AdamW state keyed by parameter name (torch.distributed.checkpoint's
                            full state dict form); tensors, numbers and strings only, so it loads
                            with ``torch.load(weights_only=True)``
        rng.pt              torch CPU and CUDA generator states (uint8 tensors)
        state.json          step, tokens, data loader state, python + numpy RNG states, world size
        config.yaml         the resolved RunConfig
        tokenizer.json, leviathan_tokenizer.json
                            the tokenizer (``Tokenizer.save``; a built-in one is recorded by name only),
                            so ``load_tokenizer(step_dir)`` works without the data folder

Atomicity: files are written into ``checkpoints/.tmp-step-XXXXXXXX`` with an fsync each, the folder is
fsynced and renamed to ``step-XXXXXXXX`` (a rename within a directory is atomic), then the parent is
fsynced. A folder named ``step-*`` is therefore complete unless damaged by hand; ``is_complete``
still checks every required file before a resume trusts it, and ``.tmp-*`` leftovers of a crash are
removed at the next start. A save that fails (a full disk, a second Ctrl-C) removes its temporary
folder at once and leaves the previous checkpoints untouched; a full disk is a ``UserError`` that says so.
The schedule is a pure function of the step and needs no state.

Untrusted files: weights load only through safetensors, ``optimizer.pt`` / ``rng.pt`` only through
``torch.load(weights_only=True)`` (tensors, numbers, strings: a pickle that names any other object is
refused, never executed), everything else is JSON or ``yaml.safe_load``. A damaged or foreign file is a
``UserError`` naming it; weights whose shapes differ from the config are refused before loading.

RNG: the states of rank 0 are saved and restored on every rank (all ranks start from the same seed
and the training step draws no random numbers; the states are kept so that future stochastic
layers resume exactly).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from ..config import dump_yaml, from_dict, load_yaml
from ..errors import UserError, storage_error_message
from ..model.llama import CausalLM
from ..storage import storage_oserror
from .damage import refuse_damaged_newest

CHECKPOINTS = "checkpoints"
REQUIRED = ("model.safetensors", "optimizer.pt", "state.json", "config.yaml")
STEP_RE = re.compile(r"^step-(\d{8,})$")
FORMAT = 1


def step_name(step: int) -> str:
    return f"step-{step:08d}"


def is_complete(path: Path) -> bool:
    """All required files present and state.json parses."""
    if not all((path / f).is_file() for f in REQUIRED):
        return False
    try:
        json.loads((path / "state.json").read_text())
    except (OSError, ValueError):
        return False
    return True


def list_checkpoints(run_dir: str | os.PathLike) -> list[tuple[int, Path]]:
    """Complete step folders of a run, oldest first."""
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return []
    out = []
    for child in root.iterdir():
        m = STEP_RE.match(child.name)
        if m and child.is_dir() and is_complete(child):
            out.append((int(m.group(1)), child))
    return sorted(out)


def latest_checkpoint(run_dir: str | os.PathLike) -> Path | None:
    found = list_checkpoints(run_dir)
    return found[-1][1] if found else None


def find_checkpoint(path: str | os.PathLike) -> Path:
    """A step folder from a step folder, a ``checkpoints`` folder or a run folder (its latest step).

    Errors name what was expected: an explicit step that is missing or incomplete is never replaced
    by another one.
    """
    path = Path(path)
    if not path.exists():
        raise UserError(f"checkpoint {str(path)!r} does not exist; pass a run folder or one of its "
                        f"checkpoints/step-XXXXXXXX folders")
    if (path / "model.safetensors").exists() or STEP_RE.match(path.name):
        if not is_complete(path):
            missing = [f for f in REQUIRED if not (path / f).is_file()]
            raise UserError(f"checkpoint {str(path)!r} is incomplete (missing {', '.join(missing) or 'a valid state.json'});"
                            f" pass a complete step folder or the run folder to use its latest complete step")
        return path
    run_dir = path.parent if path.name == CHECKPOINTS else path
    refuse_damaged_newest(run_dir, f"use {str(path)!r}")  # never an older step in place of a damaged newest one
    latest = latest_checkpoint(run_dir)
    if latest is None:
        raise UserError(f"{str(path)!r} holds no complete checkpoint (expected {CHECKPOINTS}/step-XXXXXXXX folders)")
    return latest


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
    out = {}
    for k, v in state_dict.items():
        if tied and k == "lm_head.weight":
            continue
        out[k] = v.detach().to("cpu").contiguous()
    return out


def clean_partial(run_dir: Path) -> None:
    """Remove ``.tmp-*`` folders left by a crash during a save.

    Call it only with the run folder's lock held (``train`` takes it: ``leviathan.locking``): then no other
    process can be writing a ``.tmp-*`` folder, and every one is the leftover of a crashed writer."""
    root = run_dir / CHECKPOINTS
    if root.is_dir():
        for child in root.iterdir():
            if child.name.startswith(".tmp-") and child.is_dir():
                shutil.rmtree(child, ignore_errors=True)


def save_checkpoint(run_dir: Path, step: int, model_state: dict[str, torch.Tensor], tied: bool, optim_state: dict,
                    state: dict, rng_tensors: dict, config_text: str, tokenizer=None,
                    keep_last: int | None = None) -> Path:
    """Write ``checkpoints/step-XXXXXXXX`` atomically and prune to ``keep_last``. Rank 0 only, with the run
    folder's lock held (``leviathan.locking``), so no other process writes there. A step folder of the same
    step already on disk (left by an earlier session that trained further from another checkpoint) is
    replaced, never kept in place of the state this process holds: the run's checkpoints are one history."""
    root = run_dir / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    final = root / step_name(step)
    tmp = root / f".tmp-{step_name(step)}-{os.getpid()}"
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        save_file(model_tensors(model_state, tied), str(tmp / "model.safetensors"), metadata={"format": "pt"})
        torch.save(optim_state, tmp / "optimizer.pt")
        torch.save(rng_tensors, tmp / "rng.pt")
        (tmp / "config.yaml").write_text(config_text)
        if tokenizer is not None:
            tokenizer.save(tmp)
        (tmp / "state.json").write_text(json.dumps({"format": FORMAT, **state}, indent=1) + "\n")
        for f in tmp.iterdir():
            _fsync_file(f)
        _fsync_dir(tmp)
        if final.exists():  # the same step from another session, or damaged by hand: replace it
            old = root / f".tmp-old-{step_name(step)}-{os.getpid()}"  # a crash now leaves a .tmp-* (cleaned)
            os.rename(final, old)
            shutil.rmtree(old)
        os.rename(tmp, final)
        _fsync_dir(root)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)  # never leave a partial folder behind (a crash leaves .tmp-*)
        failed_write = storage_oserror(e, tmp)  # torch.save and safetensors report a full disk without an errno
        message = storage_error_message(failed_write) if failed_write is not None else None
        if message is None:
            raise
        latest = latest_checkpoint(run_dir)
        kept = f"the last complete checkpoint {str(latest)!r} is intact" if latest else "no earlier checkpoint exists"
        raise UserError(f"could not save the checkpoint of step {step} ({message}); {kept}; after making room, "
                        f"continue with --resume auto") from e
    if keep_last is not None:
        prune(run_dir, keep_last)
    return final


def prune(run_dir: Path, keep_last: int) -> None:
    """Delete all but the newest ``keep_last`` complete checkpoints."""
    for _, path in list_checkpoints(run_dir)[:-keep_last]:
        shutil.rmtree(path, ignore_errors=True)


# ---- reading ------------------------------------------------------------------------------------
def _damaged(path: Path, problem: str) -> UserError:
    return UserError(f"{str(path)!r} {problem}; the checkpoint is damaged or not one leviathan wrote: delete its "
                     f"step folder (--resume auto then uses the previous one) or pass another checkpoint")


def load_weights(path: Path) -> dict[str, torch.Tensor]:
    """Tensors of a ``model.safetensors`` (safetensors only: no code runs while loading)."""
    try:
        return load_file(str(path))
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error type for every defect
        raise _damaged(path, f"is not a readable safetensors file ({e})") from None


def load_tensors(path: Path) -> Any:
    """``torch.load(weights_only=True)`` of ``optimizer.pt`` / ``rng.pt``: any pickled object other than
    tensors, numbers, strings and containers is refused (never executed) with a UserError."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - UnpicklingError, RuntimeError, EOFError ... all mean the same
        raise _damaged(path, f"was refused ({_load_reason(e)}): leviathan loads only tensors, numbers and strings "
                             f"and never unpickles arbitrary objects") from None


def _load_reason(e: Exception) -> str:
    """Why torch.load refused a file, without torch's advice to retry with weights_only=False."""
    text = str(e).strip()
    named = re.search(r"GLOBAL ([\w.]+)", text)
    if named:
        return f"it references the Python object {named.group(1)}, which a file of tensors never does"
    if not text or text.startswith("Weights only load failed"):
        return "it is not a file of tensors"
    return text.splitlines()[0].split(". ")[0].rstrip(".")


def load_state(path: Path) -> dict[str, Any]:
    """Everything a resume needs from a step folder; only safetensors, weights_only loads, JSON and YAML."""
    return {
        "model": load_weights(path / "model.safetensors"),
        "optimizer": load_tensors(path / "optimizer.pt"),
        "rng": load_tensors(path / "rng.pt") if (path / "rng.pt").exists() else None,
        "state": json.loads((path / "state.json").read_text()),
        "config": load_yaml(path / "config.yaml"),
    }


def load_model_state(model: CausalLM, tensors: dict[str, torch.Tensor]) -> None:
    """Load safetensors weights into ``model``; a missing tied head is expected, nothing else is.

    Weights saved with a restricted softmax (an ``output_ids`` tensor, ``CausalLM.restrict_output_``)
    restrict ``model`` to the same ids; a restricted model refuses weights saved without one.
    """
    if "output_ids" in tensors:
        model.restrict_output_(tensors["output_ids"])
    elif model.restricted:
        raise UserError("these weights were trained with the full softmax but the model has a restricted one "
                        "(data.softmax=corpus): resume with the config the weights were trained with")
    own = model.state_dict()
    shapes = [f"{k} is {tuple(v.shape)} in the file but {tuple(own[k].shape)} in the model"
              for k, v in tensors.items() if k in own and tuple(v.shape) != tuple(own[k].shape)]
    if shapes:
        raise UserError(f"checkpoint weights do not fit the model built from its config ({'; '.join(shapes[:3])}"
                        f"{'; ...' if len(shapes) > 3 else ''}): they come from a model of another size; use the "
                        f"config.yaml the weights were trained with")
    result = model.load_state_dict(tensors, strict=False)
    missing = [k for k in result.missing_keys if not (k == "lm_head.weight" and model.config.tie_word_embeddings)]
    if missing or result.unexpected_keys:
        raise UserError(f"checkpoint weights do not match the model: missing {missing[:5]}, unexpected "
                        f"{result.unexpected_keys[:5]}; they come from another embedding variant; use the "
                        f"config.yaml the weights were trained with")


def run_config_from_dict(raw: dict):
    from .config import RunConfig

    return from_dict(RunConfig, raw)


def load_model(path: str | os.PathLike, device: str | torch.device = "cpu") -> tuple[CausalLM, Any]:
    """(CausalLM in eval mode, RunConfig) from a run folder (latest complete step) or a step folder."""
    step = find_checkpoint(path)
    cfg = run_config_from_dict(load_yaml(step / "config.yaml"))
    model = CausalLM(cfg.model)
    load_model_state(model, load_weights(step / "model.safetensors"))
    return model.to(device).eval(), cfg


def load_tokenizer(path: str | os.PathLike):
    """The tokenizer saved in a checkpoint (a run folder means its latest complete step)."""
    from ..data.tokenizer import load_tokenizer as _load

    step = find_checkpoint(path)
    if (step / "tokenizer.json").is_file() or (step / "leviathan_tokenizer.json").is_file():
        return _load(step)
    spec = json.loads((step / "state.json").read_text()).get("tokenizer")
    if not spec:
        raise UserError(f"checkpoint {str(step)!r} records no tokenizer; evaluate a prepared split instead")
    return _load(spec)


def check_tokenizer(step: Path, data_dir: str | os.PathLike, doing: str) -> None:
    """UserError unless the tokenizer saved in step folder ``step`` is the one ``data_dir`` was prepared with
    (same ids for every text). A checkpoint that records no tokenizer files is not checked."""
    from ..data.tokenizer import load_tokenizer as _load

    if not ((step / "tokenizer.json").is_file() or (step / "leviathan_tokenizer.json").is_file()):
        return
    mine, theirs = _load(step), _load(data_dir)
    if mine.fingerprint() != theirs.fingerprint():
        raise UserError(f"cannot {doing}: the checkpoint {str(step)!r} was trained with tokenizer {mine.name!r} "
                        f"(vocabulary {mine.vocab_size:,}) but {str(data_dir)!r} was prepared with a different one "
                        f"({theirs.name!r}, vocabulary {theirs.vocab_size:,}) that maps text to other ids; use the "
                        f"data the checkpoint was trained on, or prepare the corpus with its tokenizer "
                        f"(leviathan prepare SOURCE --out DIR --tokenizer {step})")


def config_text(cfg) -> str:
    return dump_yaml(cfg)
