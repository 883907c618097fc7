"""An override that changes no run's settings is not recorded in a swept folder's grid.json as a change.

    base = recorded_overrides(grid, out_dir, build_run_config, log)   # the base overrides grid.json is to record

A sweep rerun on a finished folder with ``optim.lr=3e-3`` (the grid's own 0.003, spelt another way) trained nothing,
as its rows agree with the grid in value (``drift``), yet appended the override to grid.json's ``base_overrides``
without a word; from then on the folder and its own collected copy were refused as "started with different settings"
by report and collect_results.py, which compare the recorded overrides as written, though every row was trained
without it (issue 30 round 25, X66). Of the overrides grid.json does not record yet, those that change no run's
config (every run of the grid built with and without it, compared whole) are left out of the record, and a note says
so; the rest are recorded as before. A folder with no grid.json yet records the overrides as typed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from ...config import ConfigError, to_dict
from ...errors import UserError
from .sweep_grid import read_sweep_grid


def recorded_overrides(grid, out_dir: Path, config_fn: Callable, log: Callable[[str], None]) -> list[str]:
    """``grid.base_overrides`` less those new to ``out_dir``'s grid.json that change no run (see the module
    docstring); ``config_fn(grid, spec)`` builds a run's config (``sweep.build_run_config``)."""
    if not (out_dir / "grid.json").is_file() or not grid.runs:  # no run: nothing to prove an override idle by
        return list(grid.base_overrides)
    try:
        earlier = read_sweep_grid(out_dir).base_overrides
    except UserError:  # a damaged grid.json is the sweep's own checks' to name
        return list(grid.base_overrides)
    kept, idle = list(grid.base_overrides), []
    for text in [o for o in grid.base_overrides if o not in earlier]:
        without = [o for o in kept if o != text]
        if _same_runs(grid, kept, without, config_fn):
            kept, idle = without, idle + [text]
    if idle:
        log(f"note: {', '.join(idle)} changes no run's settings (the grid gives each run the same already); not "
            f"recorded in {str(out_dir / 'grid.json')!r} as a change")
    return kept


def _same_runs(grid, overrides: list[str], others: list[str], config_fn: Callable) -> bool:
    """Whether every run of ``grid`` is built alike under the two lists of base overrides."""
    a, b = dataclasses.replace(grid, base_overrides=overrides), dataclasses.replace(grid, base_overrides=others)
    try:
        return all(to_dict(config_fn(a, spec)) == to_dict(config_fn(b, spec)) for spec in grid.runs)
    except ConfigError:  # the override is needed for some run's config to be valid: it changes something
        return False
