"""An override that changes no run's settings is not recorded in a swept folder's grid.json as a change.

    base = recorded_overrides(grid, out_dir, build_run_config, log)   # the base overrides grid.json is to record

A sweep rerun on a finished folder with ``optim.lr=3e-3`` (the grid's own 0.003, spelt another way) trained nothing,
as its rows agree with the grid in value (``drift``), yet appended the override to grid.json's ``base_overrides``
without a word; from then on the folder and its own collected copy were refused as "started with different settings"
by report and collect_results.py, which compare the recorded overrides as written, though every row was trained
without it (issue 30 round 25, X66). Of the overrides grid.json does not record yet, those that change no run's
config (every run of the grid built with and without it, compared whole) are left out of the record, and a note says
so; the rest are recorded as before. A folder with no grid.json yet records the overrides as typed.

"New to grid.json" counts copies: the grid's own base is flattened into the same list, so ``eval_interval=3`` typed
over a base of ``eval_interval: 3`` is a second copy of a text grid.json already holds. Asked "is the text in the
record?", it was never checked and was appended (round 26, P86, P87: eval_interval, log_interval,
checkpoint_interval, eval_tokens equal to the base's own); and taking it out meant taking out every copy, the base's
too, which does change the runs. Each copy beyond those recorded is new, and only that copy is taken out to test it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Callable

from ...config import ConfigError, to_dict
from ...errors import UserError
from .sweep_grid import read_sweep_grid


def recorded_overrides(grid, out_dir: Path, config_fn: Callable, log: Callable[[str], None]) -> list[str]:
    """``grid.base_overrides`` less those new to ``out_dir``'s grid.json that change no run (see the module
    docstring); ``config_fn(grid, spec)`` builds a run's config (``sweep.build_run_config``)."""
    from ...value_rules import check_callback

    check_callback("recorded_overrides", "log", log)  # a function of one message (round 31, AA281, AA714)
    log = print if log is None else log  # None is the default, as check_callback's line says
    if not (out_dir / "grid.json").is_file() or not grid.runs:  # no run: nothing to prove an override idle by
        return list(grid.base_overrides)
    try:
        earlier = read_sweep_grid(out_dir).base_overrides
    except UserError:  # a damaged grid.json is the sweep's own checks' to name
        return list(grid.base_overrides)
    kept, idle = list(grid.base_overrides), []
    for text in _new_copies(grid.base_overrides, earlier):
        without = _less_last(kept, text)
        if _same_runs(grid, kept, without, config_fn):
            kept, idle = without, idle + [text]
    if idle:
        verb = "changes" if len(idle) == 1 else "change"
        log(f"note: {', '.join(idle)} {verb} no run's settings (the grid gives each run the same already); not "
            f"recorded in {str(out_dir / 'grid.json')!r} as a change")
    return kept


def _new_copies(overrides: list[str], earlier: list[str]) -> list[str]:
    """The texts of ``overrides`` beyond the copies ``earlier`` holds of each, in order (a list, not a set: the base's
    ``eval_interval=3`` and a typed one are two copies)."""
    left, new = Counter(earlier), []
    for text in overrides:
        if left[text] > 0:
            left[text] -= 1
        else:
            new.append(text)
    return new


def _less_last(overrides: list[str], text: str) -> list[str]:
    """``overrides`` without the last copy of ``text`` (the later one is the one typed; earlier copies stay)."""
    i = len(overrides) - 1 - overrides[::-1].index(text)
    return overrides[:i] + overrides[i + 1:]


def _same_runs(grid, overrides: list[str], others: list[str], config_fn: Callable) -> bool:
    """Whether every run of ``grid`` is built alike under the two lists of base overrides."""
    a, b = dataclasses.replace(grid, base_overrides=overrides), dataclasses.replace(grid, base_overrides=others)
    try:
        return all(to_dict(config_fn(a, spec)) == to_dict(config_fn(b, spec)) for spec in grid.runs)
    except ConfigError:  # the override is needed for some run's config to be valid: it changes something
        return False
