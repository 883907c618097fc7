"""Checkpoints on disk, read: weights, tensors, the run config and the inference loader (used by train/, eval/, hf/).

    model, cfg = load_model("runs/tiny")          # (CausalLM in eval mode, RunConfig); latest complete step
    tokenizer = load_tokenizer("runs/tiny")       # the tokenizer saved beside the weights

One room below both training and evaluation (``train/checkpoint.py`` writes step folders), so evaluation never
imports the training package. A step folder ``<run_dir>/checkpoints/step-00000500/`` holds model.safetensors (the
unwrapped, uncompiled CausalLM; a tied head stored once, as model.embed_tokens.weight), optimizer.pt (AdamW state
keyed by parameter name), rng.pt (torch CPU and CUDA generator states), state.json (step, tokens, loader and RNG
states, world size and every other file's sha256, written last; ``checkpoint.state``), config.yaml (the resolved
RunConfig) and the tokenizer (``Tokenizer.save``; a built-in one by name only).

Untrusted files: weights load only through safetensors, ``optimizer.pt`` / ``rng.pt`` only through
``torch.load(weights_only=True)`` (tensors, numbers, strings: a pickle that names any other object is
refused, never executed), everything else is JSON or ``yaml.safe_load``. A damaged or foreign file is a
``UserError`` naming it; weights whose shapes differ from the config are refused before loading.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from ..config import ConfigError, from_dict, load_yaml, reading_saved_config
from ..errors import UserError
from ..model.llama import CausalLM
from ..run_config import RunConfig
from .find import find_checkpoint
from .layout import step_of
from .state import StepState, read_step_state, verify_companions

# ---- reading ------------------------------------------------------------------------------------
def _damaged(path: Path, problem: str) -> UserError:
    return UserError(f"{str(path)!r} {problem}; the checkpoint is damaged or not one leviathan wrote: delete its "
                     f"step folder (--resume auto then uses the previous one) or pass another checkpoint")


def _refuse_other_kinds(api: str, path, wants: str) -> Path:
    """``path`` as a Path unless it is no path or a folder: a step folder given for its ``model.safetensors`` was
    "No such device (os error 19)", called a damaged checkpoint whose fix deletes the step folder (issue 30 round 25,
    Y645)."""
    from ..value_rules import check_read_path

    check_read_path(api, "path", path, f"pass a step folder's {wants}")
    path = Path(path)
    if os.path.isdir(path):
        raise UserError(f"{api}: {str(path)!r} is a folder, not a file; pass the {wants} inside a step folder "
                        f"(STEP/{wants}), or load a whole step with leviathan.checkpoint.read.load_model(STEP)")
    return path


def _unreadable(path: Path, problem: str, wants: str) -> UserError:
    """The damage of a step folder's own file (``_damaged``, with its fix), or, for any other file, what it is not:
    ``load_weights('corpus/p01.txt')`` told the user to delete a step folder the file is no part of (Y646)."""
    from ..errors import missing

    if path.name == wants and step_of(path.parent.name) is not None:
        return _damaged(path, problem)
    if not os.path.exists(path):
        return UserError(f"{str(path)!r} {missing(path)}; pass a step folder's {wants} "
                         f"(checkpoints/step-XXXXXXXX/{wants})")
    return UserError(f"{str(path)!r} {problem}: it is not a step folder's {wants}; pass one "
                     f"(checkpoints/step-XXXXXXXX/{wants})")


def load_weights(path: Path) -> dict[str, torch.Tensor]:
    """Tensors of a ``model.safetensors`` (safetensors only: no code runs while loading). A folder, a missing path
    and a file outside any step folder are named as such, not as a damaged checkpoint (``_refuse_other_kinds``)."""
    path = _refuse_other_kinds("load_weights", path, "model.safetensors")
    try:
        return load_file(str(path))
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error type for every defect
        raise _unreadable(path, f"is not a readable safetensors file ({e})", "model.safetensors") from None


def load_tensors(path: Path) -> Any:
    """``torch.load(weights_only=True)`` of ``optimizer.pt`` / ``rng.pt``: any pickled object other than
    tensors, numbers, strings and containers is refused (never executed) with a UserError. A path that is no such
    file of a step folder is named as ``load_weights`` names it."""
    path = _refuse_other_kinds("load_tensors", path, "optimizer.pt")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - UnpicklingError, RuntimeError, EOFError ... all mean the same
        problem = (f"was refused ({_load_reason(e)}): leviathan loads only tensors, numbers and strings and never "
                   f"unpickles arbitrary objects")
        raise _unreadable(path, problem, path.name if path.name in ("optimizer.pt", "rng.pt") else "optimizer.pt") \
            from None


def _load_reason(e: Exception) -> str:
    """Why torch.load refused a file, without torch's advice to retry with weights_only=False."""
    text = str(e).strip()
    named = re.search(r"GLOBAL ([\w.]+)", text)
    if named:
        return f"it references the Python object {named.group(1)}, which a file of tensors never does"
    if not text or text.startswith("Weights only load failed"):
        return "it is not a file of tensors"
    return text.splitlines()[0].split(". ")[0].rstrip(".")


def load_model_state(model: CausalLM, tensors: dict[str, torch.Tensor]) -> None:
    """Load safetensors weights into ``model`` (a missing tied head is expected, nothing else is); weights saved with a
    restricted softmax (``output_ids``) restrict ``model`` to the same ids, and a restricted model refuses others."""
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
                        f"{result.unexpected_keys[:5]}; they come from {_other_model(missing + result.unexpected_keys)}; "
                        f"use the "
                        f"config.yaml the weights were trained with")


def _other_model(keys: list[str]) -> str:
    """What the weights that do not match come from: another depth when only whole layers differ (round 8: a
    config.yaml edited from 2 layers to 1 was "another embedding variant"), else another embedding variant."""
    if keys and all(k.startswith("model.layers.") for k in keys):
        return "a model of another depth (model.num_hidden_layers)"
    return "another embedding variant"


# ---- the inference loader -------------------------------------------------------------------------
def run_config_from_dict(raw: dict, where: str | os.PathLike | None = None) -> RunConfig:
    """The RunConfig of a parsed ``config.yaml``; with ``where`` (the file), a value that cannot be (``hidden_size:
    -3``, a key of the wrong shape) is a UserError naming the file and the way out, not a bare key."""
    try:
        with reading_saved_config():  # a run trained before the settings' ranges (round 15) stays readable
            return from_dict(RunConfig, raw)
    except (ConfigError, TypeError) as e:
        if where is None:
            raise
        raise UserError(f"{str(where)!r} does not read as the config it was saved as ({e}); it was edited or damaged "
                        f"after training wrote it: restore the file, or resume from an earlier checkpoint "
                        f"(--resume <run>/checkpoints/step-N)") from None


def checked_step(step: Path, names: tuple[str, ...]) -> StepState:
    """state.json of ``step``, checked, after checking the files ``names`` against its fingerprints
    (``checkpoint.state``): what is read from a step folder is what was saved together."""
    state = read_step_state(step)
    verify_companions(step, state, names, optional=True)  # a built-in tokenizer has no tokenizer.json
    return state


TOKENIZER_FILES = ("tokenizer.json", "leviathan_tokenizer.json")


def load_run_config(step: Path) -> RunConfig:
    """The RunConfig a step folder's weights were trained with (its config.yaml)."""
    return run_config_from_dict(load_yaml(step / "config.yaml"), where=step / "config.yaml")


def read_progress(step: Path) -> tuple[int, int, str | None]:
    """(optimizer steps, training tokens, tokenizer name or None) of a step folder's state.json, checked."""
    state = read_step_state(step)
    return state.step, state.tokens, state.tokenizer


def load_model(path: str | os.PathLike, device: str | torch.device = "cpu") -> tuple[CausalLM, RunConfig]:
    """(CausalLM in eval mode, RunConfig) from a run folder (latest complete step) or a step folder."""
    from ..devices import model_device_problem
    from ..errors import ConfigError

    # a ValueError; torch's AssertionError (round 12, U145); an int or True reached torch (round 18, G28, G35, G38)
    if (problem := model_device_problem(device)) is not None:
        raise ConfigError(f"load_model: device {problem}")
    from ..empty_paths import refuse_empty_path

    refuse_empty_path(path, "load_model's path")  # '' was read as '.', as load_adopted's (round 17, E168)
    from ..value_rules import check_read_path

    check_read_path("load_model", "path", path, "pass a run folder or one of its step folders")  # M343 (round 20)
    step = find_checkpoint(path)
    checked_step(step, ("model.safetensors", "config.yaml"))
    cfg = load_run_config(step)
    model = CausalLM(cfg.model)
    load_model_state(model, load_weights(step / "model.safetensors"))
    return model.to(device).eval(), cfg


def load_tokenizer(path: str | os.PathLike):
    """The tokenizer saved in a checkpoint (a run folder means its latest complete step)."""
    from ..data.tokenizer import load_tokenizer as _load
    from ..value_rules import check_read_path

    check_read_path("load_tokenizer", "path", path, "pass a run folder `leviathan train` wrote, or one of its checkpoints/step-XXXXXXXX folders")  # '' named '.' (round 23, U480's kind)
    step = find_checkpoint(path)
    state = checked_step(step, TOKENIZER_FILES)
    if (step / "tokenizer.json").is_file() or (step / "leviathan_tokenizer.json").is_file():
        return _load(step)
    spec = state.tokenizer
    if not spec:
        raise UserError(f"checkpoint {str(step)!r} records no tokenizer; evaluate a prepared split instead")
    return _load(spec)


def saved_tokenizer(path: str | os.PathLike):
    """The checkpoint's tokenizer, or None when it records none (no tokenizer files, no name in state.json). Footgun:
    only "none recorded" is None; a recorded tokenizer that is damaged or another checkpoint's is ``load_tokenizer``'s
    UserError (issue 30 round 4: export once wrote a model without it, exit 0)."""
    from ..value_rules import check_read_path

    check_read_path("saved_tokenizer", "path", path, "pass a run folder `leviathan train` wrote, or one of its checkpoints/step-XXXXXXXX folders")  # '' named '.' (round 23, U480's kind)
    step = find_checkpoint(path)
    if not any((step / name).is_file() for name in TOKENIZER_FILES) and not read_step_state(step).tokenizer:
        return None
    return load_tokenizer(step)


def check_tokenizer(step: Path, data_dir: str | os.PathLike, doing: str) -> None:
    """UserError unless the tokenizer saved in step folder ``step`` is the one ``data_dir`` was prepared with
    (same ids for every text). A checkpoint that records no tokenizer files is not checked."""
    from ..data.tokenizer import load_tokenizer as _load

    if not ((step / "tokenizer.json").is_file() or (step / "leviathan_tokenizer.json").is_file()):
        return
    checked_step(step, TOKENIZER_FILES)
    mine, theirs = _load(step), _load(data_dir)
    if mine.fingerprint() != theirs.fingerprint():
        raise UserError(f"cannot {doing}: the checkpoint {str(step)!r} was trained with tokenizer {mine.name!r} "
                        f"(vocabulary {mine.vocab_size:,}) but {str(data_dir)!r} was prepared with a different one "
                        f"({theirs.name!r}, vocabulary {theirs.vocab_size:,}) that maps text to other ids; use the "
                        f"data the checkpoint was trained on, or prepare the corpus with its tokenizer "
                        f"(leviathan prepare SOURCE --out DIR --tokenizer {step})")
