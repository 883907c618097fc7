"""The model a training run starts from, rebuilt from its resolved config and seed (its "step 0").

    model = initial_model(cfg)        # CausalLM on the CPU, weights as training's first step found them

A run folder keeps its resolved config (``config.yaml``) and periodic checkpoints, but in general no step-0
checkpoint. The initial weights are nevertheless fixed by the config: training seeds python's, numpy's and
torch's global generators with ``cfg.seed`` and then builds ``CausalLM(cfg.model)`` on the CPU (before any
move to a device, FSDP sharding or restricted softmax, none of which draws random numbers). ``train/loop.py``
builds its model with this function, so an analysis that calls it gets the same tensors bit for bit
(tests/integration/test_embeddings_cli.py compares them with the model a real run trained from).

Footguns:
- It reseeds the three global generators, as training does; a caller that draws random numbers afterwards
  draws the same ones a fresh run would.
- Bit-exactness holds for the torch version the run trained with (``versions.json``): a torch release that
  changes its CPU normal sampler changes every weight.
- A restricted softmax (``data.softmax: corpus``) is not applied here: it reads the data folder and does not
  touch the weights; training applies it after this call.
"""

from __future__ import annotations

import random

import numpy as np
import torch

from .model.llama import CausalLM
from .run_config import RunConfig


def seed_everything(seed: int) -> None:
    """Seed python's, numpy's (modulo 2^32, its range) and torch's global generators with ``seed``."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def initial_model(cfg: RunConfig) -> CausalLM:
    """The freshly initialised model of ``cfg`` on the CPU, as training builds it (see the module docstring)."""
    seed_everything(cfg.seed)
    return CausalLM(cfg.model)
