"""The state of a training run, and how it is saved into and restored from checkpoints (FSDP included).

``TrainState`` is what the loop advances besides weights and optimizer moments: the step, the tokens seen, the
training time of all sessions and the last validation result. ``Checkpointer`` writes step folders
(``checkpoint/read.py`` lists what they hold); weights and optimizer state go through
``torch.distributed.checkpoint.state_dict`` as *full* state dicts keyed by parameter name, gathered and CPU-offloaded
on rank 0 under FSDP, so every checkpoint has the single-process format (train/distributed.py). Footguns:

- ``save`` is a collective under FSDP: every rank calls it, rank 0 writes.
- A snapshot (step, loader position, RNG) is taken at the end of a step, but a periodic checkpoint is
  written only during the next step, once those weights gave a finite loss and before the optimizer
  moves them (``keep`` then ``write_pending``): a checkpoint is never the state that diverged. The
  loader and the RNG have moved on by then, which is why the snapshot is taken first.

``load_resume`` finds and checks the checkpoint a run continues from (the same tokenizer, the same model
section); ``restore`` loads it into the freshly built model, optimizer and loader.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..checkpoint.read import check_tokenizer, load_model_state, run_config_from_dict
from ..config import to_dict
from ..errors import UserError
from .branch import refuse_linked_step, refuse_older_step, refuse_other_runs_step
from .data_identity import data_changed
from ..run_config import RunConfig
from .metrics import foreign_metrics
from . import checkpoint as ckpt
from . import distributed as D
from .optim import group_weight_decay


@dataclass
class TrainState:
    """Progress of a run: optimizer steps done, training tokens seen, training time of all sessions (seconds,
    evaluation and checkpoint writes excluded), and the last validation row of this session (None before one)."""

    step: int = 0
    tokens: int = 0
    train_time_s: float = 0.0
    last_eval: EvalResult | None = None
    last_eval_step: int | None = None  # the step ``last_eval`` validated (state.json records it at that step)


# ---- writing ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunFolder:
    """Where a run's step folders go and what each of them holds alike: the run folder, its config.yaml text, the
    data's tokenizer (rank 0; None elsewhere) and the tokenizer's name that state.json records."""

    run_dir: Path
    config_text: str
    tokenizer: Any
    tokenizer_name: str | None
    run_id: str | None = None  # recorded in every state.json (``leviathan.run_identity``; rank 0)
    data_fingerprint: str | None = None  # the data's meta.json fingerprint, in every state.json (``data_identity``)


class Checkpointer:
    """Writes the run's checkpoints; ``last_saved`` is the step on disk (None before the first save)."""

    def __init__(self, folder: RunFolder, model: torch.nn.Module, optimizer: torch.optim.Optimizer, loader,
                 cfg: RunConfig, info: D.DistInfo, last_saved: int | None = None):
        self.folder, self.model, self.optimizer, self.loader = folder, model, optimizer, loader
        self.cfg, self.info = cfg, info
        self.last_saved = last_saved
        self.pending: dict | None = None

    def snapshot(self, state: TrainState) -> dict:
        """Everything but weights and optimizer state, as of now (the end of ``state.step``)."""
        rng_json, rng_tensors = ckpt.capture_rng()
        return {"state": {"step": state.step, "tokens": state.tokens, "loader": self.loader.state_dict(),
                          "rng": rng_json, "world_size": self.info.world_size, "train_time_s": state.train_time_s,
                          "tokenizer": self.folder.tokenizer_name, "run_id": self.folder.run_id,
                          "data_fingerprint": self.folder.data_fingerprint,
                          # F34: the step's validation, which the model card quotes only where metrics.jsonl agrees
                          "validation": state.last_eval.metrics_row() if state.last_eval is not None
                          and state.last_eval_step == state.step else None},
                "rng": rng_tensors}

    def save(self, snap: dict) -> None:
        """Write the current weights and optimizer state with ``snap``'s step, loader and RNG state (all ranks)."""
        model_state = model_state_dict(self.model, self.cfg, self.info)  # collectives under FSDP
        optim_state = optimizer_state_dict(self.model, self.optimizer, self.cfg, self.info)
        if self.info.is_main:
            tied = self.model.config.tie_word_embeddings
            parts = ckpt.StepParts(model_state, tied, optim_state, snap["state"], snap["rng"], self.folder.config_text,
                                   self.folder.tokenizer)
            ckpt.save_checkpoint(self.folder.run_dir, parts, self.cfg.keep_last)
        self.last_saved = snap["state"]["step"]
        D.barrier(self.info)

    def keep(self, state: TrainState) -> None:
        """A periodic checkpoint is due: snapshot now, write during the next step (``write_pending``)."""
        self.pending = self.snapshot(state)

    def write_pending(self) -> None:
        """Write the kept snapshot; called once the next step's loss from these weights is known to be finite."""
        if self.pending is not None:
            self.save(self.pending)
            self.pending = None

    def save_now(self, state: TrainState) -> None:
        """Write the state at the end of ``state.step`` unless that step is on disk already (end of run, stop)."""
        if self.last_saved != state.step:
            self.save(self.pending or self.snapshot(state))
            self.pending = None


# ---- resuming -----------------------------------------------------------------------------------
def load_resume(cfg: RunConfig, run_dir: Path, resume: str | None) -> tuple[Path | None, dict | None]:
    """(step folder, its loaded state) to continue from, or (None, None) for a fresh start. ``resume`` is None (fresh: a
    run folder that holds checkpoints is refused), ``"auto"`` (the latest complete step, if any) or a checkpoint path;
    its tokenizer must be the data's and its model section the config's (other sections may differ: the config wins)."""
    path = ckpt.resolve_resume(resume, run_dir)
    if path is None and ckpt.list_checkpoints(run_dir):  # only a fresh start gets here with checkpoints
        raise UserError(f"run folder {str(run_dir)!r} already holds checkpoints; continue it with --resume auto "
                        f"or choose another --run-dir")
    if path is None:
        return None, None
    refuse_linked_step(path, run_dir, resume)  # the newest step a link to elsewhere (round 23, U325)
    own = ckpt.list_checkpoints(run_dir)
    if own and not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(run_dir)):
        # another run's checkpoint continued into this one: its step folders were replaced by the other run's, its
        # config.yaml and metrics mixed with the other run's, exit 0 (issue 30 round 7)
        steps = ", ".join(step.name for _, step in own[:3]) + (" ..." if len(own) > 3 else "")
        raise UserError(f"--resume {str(resume)!r} is a checkpoint of another run folder, but run folder "
                        f"{str(run_dir)!r} already holds checkpoints of its own ({steps}), which continuing there "
                        f"would replace and mix with the other run's; continue it into a new --run-dir, or continue "
                        f"this run with --resume auto")
    refuse_older_step(path, run_dir, resume)  # one folder, one history (round 14, A179)
    refuse_other_runs_step(path, run_dir)  # nor a step folder of another run copied in (round 14, A156)
    if (problem := foreign_metrics(run_dir)) is not None:  # nor another run's log kept as this one's (A239)
        raise UserError(f"cannot resume run folder {str(run_dir)!r}: {problem}; put the run's own metrics.jsonl back, "
                        f"or move that file out of the run folder to go on without the earlier lines")
    loaded = ckpt.load_state(path)
    loaded["path"] = path  # named by ``restore`` when the loader's saved state contradicts the data
    if int(loaded["state"]["step"]) > cfg.total_steps:  # round 8: resumed at step 48 with max_steps=3, exit 0
        # the checkpoint is evaluated where it is: "leviathan eval RUN_DIR" named a folder another run's checkpoint
        # was to continue into, which does not exist (issue 30 round 16, C247)
        own = Path(os.path.realpath(path)).is_relative_to(os.path.realpath(run_dir))
        raise UserError(f"{str(path)!r} is at step {int(loaded['state']['step'])}, past the {cfg.total_steps} steps "
                        f"this config trains (max_steps / max_tokens): there is nothing to continue; give a larger "
                        f"max_steps to train on, or evaluate the {'run' if own else 'checkpoint'} as it is (leviathan "
                        f"eval {str(run_dir if own else path)!r})")
    check_tokenizer(path, cfg.data.path, "resume")
    if (changed := data_changed(loaded["state"], cfg.data.path, path)) is not None:  # round 15 (A124), K8
        raise UserError(f"cannot resume {str(path)!r}: {changed}; resume with the data the run trained on (restore "
                        f"{str(cfg.data.path)!r}, or set data.path= to a copy of it), or train the new data in a new "
                        f"run (--run-dir NEW)")
    saved = to_dict(run_config_from_dict(loaded["config"], where=path / "config.yaml").model.resolved())
    current = to_dict(cfg.model.resolved())
    diff = [f"{k}: {saved.get(k)!r} in the checkpoint, {current.get(k)!r} now"
            for k in sorted(set(saved) | set(current)) if saved.get(k) != current.get(k)]
    if diff:
        raise UserError(f"cannot resume {str(path)!r}: the model section differs from the checkpoint's ("
                        + "; ".join(diff[:4]) + "); resume with the checkpoint's model settings")
    return path, loaded


def restore(model: torch.nn.Module, optimizer: torch.optim.Optimizer, loader, loaded: dict, cfg: RunConfig,
            info: D.DistInfo) -> TrainState:
    """Load a checkpoint (``ckpt.load_state``) into the built model, optimizer and loader and restore the RNGs; the
    *current* config's hyperparameters win over the saved ones (the lr is set from the schedule every step)."""
    from torch.distributed.checkpoint.state_dict import set_model_state_dict, set_optimizer_state_dict

    if "output_ids" in loaded["model"] and not model.restricted:
        raise UserError("cannot resume: the checkpoint was trained with a restricted softmax (data.softmax=corpus) "
                        "but this config has data.softmax=full; resume with the checkpoint's data.softmax")
    if cfg.parallel == "fsdp" and info.enabled:
        set_model_state_dict(model, loaded["model"], options=_state_options(cfg, info, strict=False))
    else:
        load_model_state(model, loaded["model"])  # copies into the existing (possibly tied) parameters
    set_optimizer_state_dict(model, optimizer, loaded["optimizer"], options=_state_options(cfg, info))
    for group in optimizer.param_groups:
        group["betas"], group["eps"] = cfg.optim.betas, cfg.optim.eps
        group["weight_decay"] = group_weight_decay(cfg.optim, group.get("name"))
    state = loaded["state"]
    try:
        loader.load_state_dict(state["loader"])
    except UserError as e:  # round 7 (B2): the line named no file, and only the data as the cause
        where = loaded.get("path")
        raise UserError(f"{str(where / 'state.json') + ': ' if where is not None else ''}{e} (if the data, "
                        f"seq_len, seed and shuffle settings are the run's own, the saved state was edited or "
                        f"damaged: restore state.json from a copy, or move the step folder out of checkpoints/ "
                        f"to go on from the previous one)") from None
    if loaded["rng"] is not None:
        ckpt.restore_rng(state["rng"], loaded["rng"])
    return TrainState(step=int(state["step"]), tokens=int(state["tokens"]),
                      train_time_s=float(state.get("train_time_s", 0.0)))


# ---- full state dicts, FSDP-aware ---------------------------------------------------------------
def _state_options(cfg: RunConfig, info: D.DistInfo, **kwargs):
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    fsdp = cfg.parallel == "fsdp" and info.enabled
    return StateDictOptions(full_state_dict=True, cpu_offload=fsdp, **kwargs)


def model_state_dict(model: torch.nn.Module, cfg: RunConfig, info: D.DistInfo) -> dict:
    """The full model state dict (gathered to rank 0's CPU under FSDP: a collective)."""
    if cfg.parallel == "fsdp" and info.enabled:
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        return get_model_state_dict(model, options=_state_options(cfg, info))  # collective
    return model.state_dict()


def optimizer_state_dict(model: torch.nn.Module, optimizer: torch.optim.Optimizer, cfg: RunConfig,
                         info: D.DistInfo) -> dict:
    """AdamW state keyed by parameter name, on the CPU (a collective under FSDP)."""
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    state = get_optimizer_state_dict(model, optimizer, options=_state_options(cfg, info))  # collective under FSDP
    if cfg.parallel == "fsdp" and info.enabled or next(model.parameters()).device.type != "cpu":
        state = _to_cpu(state)
    return state


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_cpu(v) for v in obj]
    return obj
