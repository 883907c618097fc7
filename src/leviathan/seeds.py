"""The range of a seed, checked in one place for every way one is given (config, grid, command line, Python).

    check_seed(cfg.seed, "seed")     # ConfigError unless an integer in [0, 4294967295]; returns it as an int

A seed feeds python's, numpy's and torch's generators and the data loader's permutation. Negative seeds and seeds
past 64 bits ended in numpy's or torch's tracebacks after the run folder was written, and numpy's legacy seeding
reduced anything past 32 bits modulo 2^32 (two seeds, one model). One range for all: ``[0, MAX_SEED]``.
"""

from __future__ import annotations

from typing import Any

from .integers import is_integer

MAX_SEED = 2**32 - 1


def seed_problem(value: Any) -> str | None:
    """Why ``value`` is not a seed (None when it is one)."""
    if not is_integer(value):  # numpy integers are integers (round 9, Q11)
        return f"must be an integer in [0, {MAX_SEED}], got {value!r}"
    if not 0 <= value <= MAX_SEED:
        return f"must be an integer in [0, {MAX_SEED}] (32 bits, numpy's seed range), got {value}"
    return None


def check_seed(value: Any, where: str) -> int:
    """``value`` when it is a seed (see the module docstring), else a ConfigError naming ``where`` and the range."""
    from .config import ConfigError

    problem = seed_problem(value)
    if problem is not None:
        raise ConfigError(f"{where}: a seed {problem}")
    return int(value)
