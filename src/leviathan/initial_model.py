"""The model a training run starts from, rebuilt from its resolved config and seed (its "step 0").

    model = initial_model(cfg)        # CausalLM on the CPU, weights as training's first step found them

A run folder keeps its resolved config but in general no step-0 checkpoint. The initial weights are nevertheless
fixed by the config: this seeds python's, numpy's and torch's global generators with ``cfg.seed`` and builds
``CausalLM(cfg.model)`` on the CPU (before any move to a device, FSDP sharding or restricted softmax, none of which
draws random numbers). ``train/loop.py`` builds its model with it, so an analysis that calls it gets the same
tensors bit for bit (tests/integration/test_embeddings_cli.py compares them with a real run's).

Footguns: it reseeds the three global generators, as training does; bit-exactness holds for the torch version the
run trained with (``versions.json``: a release that changes its CPU normal sampler changes every weight); a
restricted softmax (``data.softmax: corpus``) is applied by training after this call, not here.
"""

from __future__ import annotations

import random

import numpy as np
import torch

from .model.llama import CausalLM
from .integers import is_integer
from .run_config import RunConfig
from .seeds import seed_problem


def seed_everything(seed: int) -> None:
    """Seed python's, numpy's and torch's global generators with ``seed``, a seed of ``leviathan.seeds``' range: True
    was taken as seed 1 without a word and '3' reached a % formatting's TypeError (issue 30 round 25, Y589, Y590)."""
    from .errors import ArgumentTypeError, ArgumentValueError

    problem = seed_problem(seed)
    if problem is not None:
        error = ArgumentValueError if is_integer(seed) else ArgumentTypeError
        raise error(f"seed_everything: seed {problem}; pass a run's seed, a whole number such as 0")
    seed = int(seed)  # a numpy integer is a seed (integers.is_integer); random.seed refuses one
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def initial_model(cfg: RunConfig) -> CausalLM:
    """The freshly initialised model of ``cfg`` on the CPU, as training builds it (see the module docstring). ``cfg``
    is a RunConfig, as ``train`` takes: a ModelConfig was "'ModelConfig' object has no attribute 'seed'" (issue 30
    round 25, Y592)."""
    if not isinstance(cfg, RunConfig):
        from .errors import ArgumentTypeError

        raise ArgumentTypeError(f"initial_model: cfg must be a RunConfig (with the seed the weights are drawn from), "
                                f"got {type(cfg).__name__}; pass load_run_config(CONFIG, OVERRIDES) or a run folder's "
                                f"config (leviathan.checkpoint.read.load_model(RUN)[1])")
    seed_everything(cfg.seed)
    return CausalLM(cfg.model)
