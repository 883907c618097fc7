"""AdamW with decoupled weight decay and the parameter groups it decays (see OptimConfig for why).

Groups, decided by parameter *name* on the unwrapped model (so DDP/compile prefixes never matter):
- ``decay``: matrices (ndim >= 2) of the decoder body and the output head;
- ``no_decay``: norm weights, biases (ndim < 2), and everything under ``model.embed_tokens.``
  (dense table, tied table, factorised table, codebooks, generator projections, LayerNorms,
  spline coefficients, output maps).
A tied head is the input table, so for ``dense_tied`` it is not decayed either.
"""

from __future__ import annotations

import torch
from torch import nn

from .config import OptimConfig

INPUT_PREFIX = "model.embed_tokens."


def is_no_decay(name: str, param: torch.Tensor) -> bool:
    return name.startswith(INPUT_PREFIX) or param.ndim < 2


def param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Two AdamW groups, ``decay`` and ``no_decay`` (key ``name``), with their parameter names (``names``)."""
    decay, no_decay, decay_names, no_decay_names = [], [], [], []
    seen: set[int] = set()
    for name, p in model.named_parameters():  # named_parameters() yields a tied tensor once, first name
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        if is_no_decay(name, p):
            no_decay.append(p)
            no_decay_names.append(name)
        else:
            decay.append(p)
            decay_names.append(name)
    return [
        {"name": "decay", "params": decay, "weight_decay": weight_decay, "names": decay_names},
        {"name": "no_decay", "params": no_decay, "weight_decay": 0.0, "names": no_decay_names},
    ]


def build_optimizer(model: nn.Module, cfg: OptimConfig, device_type: str = "cpu") -> torch.optim.AdamW:
    """AdamW over ``param_groups(model)``; fused kernels on CUDA, the default foreach path on CPU."""
    groups = param_groups(model, cfg.weight_decay)
    for g in groups:
        g.pop("names")
    groups = [g for g in groups if g["params"]]
    extra = {"fused": True} if device_type == "cuda" else {}
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, weight_decay=cfg.weight_decay, **extra)
