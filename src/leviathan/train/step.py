"""One optimizer step: ``train_step(parts, cfg, info, lr) -> StepResult`` (docs/DESIGN.md §6).

One optimizer step = ``grad_accum`` micro steps of ``micro_batch_size`` sequences on each of ``world_size`` ranks =
``cfg.batch_tokens`` tokens: set the scheduled lr (times each group's ``lr_mult``); per micro step the next batch,
forward under autocast (if any), backward of loss / grad_accum (the DDP all-reduce / FSDP reduce-scatter on the last
micro step only, ``distributed.no_grad_sync``); average the loss over micro steps and ranks; clip the global
gradient norm to ``optim.grad_clip`` (or just measure it); if loss or norm is not finite, return without touching
weights or optimizer state; else ``before_update()`` (the loop writes a pending checkpoint there), AdamW, zero grad.

Footguns:
- A non-finite step returns ``finite=False`` and changes nothing but the data loader's position; the
  caller must stop (``NonFiniteLossError``), not call again as if the step happened.
- ``group_norms`` (the input side and an untied head, for the ablations) are measured before clipping
  and only in single-process runs: under DDP/FSDP each rank holds a partial or sharded gradient.
- ``parts.forward`` fixes the loss path: with ``chunked_loss`` the head is scored over chunks of
  positions and the (tokens x V) logits never exist (``leviathan.model.loss``).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import torch

from ..errors import UserError
from . import distributed as D
from ..run_config import RunConfig
from .optim import HEAD_NAME, INPUT_PREFIX
from .schedule import set_lr


class NonFiniteLossError(UserError):
    """Training diverged: the loss (or gradient norm) is NaN or infinite."""


@dataclass
class TrainParts:
    """What an optimizer step works on, built once by the loop."""

    model: torch.nn.Module  # the plain CausalLM (FSDP-sharded in place): clipping, norms, checkpoints
    train_model: torch.nn.Module  # model, its DDP wrapper, or either compiled: what forward/backward run through
    forward: Callable  # train_model with the loss path fixed: forward(x, labels=y) -> (logits or None, loss)
    optimizer: torch.optim.Optimizer
    loader: object  # data.loader.BatchLoader: next_batch() -> (x, y)
    device: torch.device
    accum: int  # micro steps per optimizer step
    amp_dtype: torch.dtype | None  # autocast dtype; None = plain fp32


@dataclass(frozen=True)
class StepResult:
    loss: float  # mean over micro steps and ranks
    grad_norm: float  # global norm before clipping
    group_norms: dict = field(default_factory=dict)  # grad_norm_input / grad_norm_head when asked for

    @property
    def finite(self) -> bool:
        return math.isfinite(self.loss) and math.isfinite(self.grad_norm)


def train_step(parts: TrainParts, cfg: RunConfig, info: D.DistInfo, lr: float, *, group_norms: bool = False,
               before_update: Callable[[], None] | None = None) -> StepResult:
    """One optimizer step of ``cfg.batch_tokens`` tokens at learning rate ``lr`` (steps 1-6 of the module)."""
    from ..value_rules import check_switches

    check_switches("train_step", group_norms=group_norms)  # 'no' was true (round 30, Y621's kind)
    set_lr(parts.optimizer, lr)
    autocast = (lambda: torch.autocast(parts.device.type, dtype=parts.amp_dtype)) if parts.amp_dtype \
        else contextlib.nullcontext
    loss_sum = torch.zeros((), device=parts.device)
    for micro in range(parts.accum):
        x, y = parts.loader.next_batch()
        x, y = x.to(parts.device, non_blocking=True), y.to(parts.device, non_blocking=True)
        last = micro == parts.accum - 1
        with D.no_grad_sync(parts.train_model, parts.model, cfg.parallel, skip=info.enabled and not last):
            with autocast():
                loss = parts.forward(x, labels=y)[1]
            (loss / parts.accum).backward()
        loss_sum += loss.detach().float()
    loss_mean = D.all_reduce_mean(loss_sum / parts.accum, info)
    norms = group_grad_norms(parts.model) if group_norms and not info.enabled else {}
    params = parts.model.parameters()
    if cfg.optim.grad_clip:
        grad_norm = D.grad_norm_value(torch.nn.utils.clip_grad_norm_(params, cfg.optim.grad_clip))
    else:
        grad_norm = D.grad_norm_value(torch.nn.utils.get_total_norm([p.grad for p in params if p.grad is not None]))
    result = StepResult(float(loss_mean.item()), float(grad_norm.item()), norms)
    if not result.finite:
        parts.optimizer.zero_grad(set_to_none=True)
        return result
    if before_update is not None:
        before_update()
    parts.optimizer.step()
    parts.optimizer.zero_grad(set_to_none=True)
    return result


def group_grad_norms(model: torch.nn.Module) -> dict:
    """Gradient norms (before clipping) of the input side and of an untied head, for the metrics: how much
    signal the generator or table receives compared with the rest (single-process runs only)."""
    groups: dict[str, list[torch.Tensor]] = {"grad_norm_input": [], "grad_norm_head": []}
    seen: set[int] = set()
    for name, p in model.named_parameters():
        if p.grad is None or id(p) in seen:
            continue
        seen.add(id(p))
        key = "grad_norm_input" if name.startswith(INPUT_PREFIX) else "grad_norm_head" if name == HEAD_NAME else None
        if key:
            groups[key].append(p.grad.detach().float().norm())
    return {k: float(torch.stack(v).norm()) for k, v in groups.items() if v}


def autocast_dtype(cfg: RunConfig, device: torch.device) -> torch.dtype | None:
    """None = plain fp32; else the autocast dtype (``dtype: auto`` is bf16 on CUDA, fp32 on CPU)."""
    if cfg.dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else None
    if cfg.dtype == "bfloat16":
        if device.type == "cpu":
            warnings.warn("dtype=bfloat16 on CPU is far slower than float32 on most CPUs; use dtype=float32")
        return torch.bfloat16
    return None
