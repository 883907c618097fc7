"""AdamW with decoupled weight decay and its parameter groups, chosen by parameter *name* on the unwrapped model (so
DDP/compile prefixes never matter). Which parameters are decayed and why: ``OptimConfig``; the groups:
``param_groups``. Every group carries ``lr_mult``, which ``schedule.set_lr`` applies.
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import nn

from ..run_config import OptimConfig

INPUT_PREFIX = "model.embed_tokens."
HEAD_NAME = "lm_head.weight"


def is_no_decay(name: str, param: torch.Tensor) -> bool:
    return name.startswith(INPUT_PREFIX) or param.ndim < 2


def param_groups(model: nn.Module, weight_decay: float, head_weight_decay: float | None = None,
                 input_lr_mult: float = 1.0) -> list[dict]:
    """AdamW groups (key ``name``) with their parameter names (``names``) and ``lr_mult``: always ``decay`` and
    ``no_decay``; for the ablations of the tied table / untied head asymmetries, ``head`` (``head_weight_decay`` set and
    different: an untied ``lm_head.weight`` with its own decay) and ``input`` (``input_lr_mult != 1``: every input-side
    parameter, undecayed, at ``lr * input_lr_mult``).
    """
    _check_setting("weight_decay", weight_decay, positive=False)
    if head_weight_decay is not None:  # None: the head's decay is weight_decay
        _check_setting("head_weight_decay", head_weight_decay, positive=False)
    _check_setting("input_lr_mult", input_lr_mult, positive=True)
    groups = {name: {"name": name, "params": [], "names": [], "weight_decay": wd, "lr_mult": mult}
              for name, wd, mult in (("decay", weight_decay, 1.0), ("no_decay", 0.0, 1.0),
                                     ("head", head_weight_decay, 1.0), ("input", 0.0, input_lr_mult))}
    split_head = head_weight_decay is not None and head_weight_decay != weight_decay
    seen: set[int] = set()
    for name, p in model.named_parameters():  # named_parameters() yields a tied tensor once, first name
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        if name.startswith(INPUT_PREFIX) and input_lr_mult != 1.0:
            group = "input"
        elif is_no_decay(name, p):
            group = "no_decay"
        elif name == HEAD_NAME and split_head:
            group = "head"
        else:
            group = "decay"
        groups[group]["params"].append(p)
        groups[group]["names"].append(name)
    return [groups["decay"], groups["no_decay"]] + [groups[g] for g in ("head", "input") if groups[g]["params"]]


def _check_setting(name: str, value, positive: bool) -> None:
    """``ArgumentValueError`` unless ``value`` is a finite number >= 0 (> 0 with ``positive``), the rule of the train
    config's ``optim.NAME`` (``OptimConfig``; its upper bounds are left to the config, which waives them for a run
    trained before them): ``param_groups(model, -1)`` and ``weight_decay=nan`` gave groups torch's AdamW takes (it
    checks only its default decay, not a group's) without a word (issue 30 round 23, U466, U467)."""
    from ..errors import ArgumentTypeError, ArgumentValueError

    what = "a finite number > 0" if positive else "a finite number >= 0"
    fix = "pass the value of the train config's optim." + name + (" (1 = no multiplier)" if positive else " (0: none)")
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise ArgumentTypeError(f"param_groups: {name} must be {what}, got {type(value).__name__} {value!r:.40}; {fix}")
    if not math.isfinite(value) or not (value > 0 if positive else value >= 0):
        raise ArgumentValueError(f"param_groups: {name} must be {what}, got {value!r}; {fix}")


def build_optimizer(model: nn.Module, cfg: OptimConfig, device_type: str = "cpu") -> torch.optim.AdamW:
    """AdamW over ``param_groups(model)``; fused kernels on CUDA, the default foreach path on CPU."""
    groups = param_groups(model, cfg.weight_decay, cfg.head_weight_decay, cfg.input_lr_mult)
    for g in groups:
        g.pop("names")
    groups = [g for g in groups if g["params"]]
    extra = {"fused": True} if device_type == "cuda" else {}
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, weight_decay=cfg.weight_decay, **extra)


def group_weight_decay(cfg: OptimConfig, group_name: str | None) -> float:
    """The configured decay of a group by name (resume re-applies the current config's values)."""
    if group_name == "decay":
        return cfg.weight_decay
    if group_name == "head":
        return cfg.head_weight_decay if cfg.head_weight_decay is not None else cfg.weight_decay
    return 0.0
