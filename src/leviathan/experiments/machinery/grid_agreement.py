"""A sweep folder's grid.json read beside its rows must describe them.

    check_grid_describes_rows(rows, grid, "sweep/grid.json", "sweep/results.jsonl")   # UserError naming what differs

A report reads the grid's name, unigram plateau and run order from grid.json. A grid.json copied from another sweep
of the same grid name (one started with ``max_steps=3``) was taken as the rows' own, exit 0 (issue 30 round 9, N27):
only the name was compared. Now every row whose run grid.json lists is compared with what grid.json says that run
trained with (its ``base_overrides`` and ``run_overrides`` on the settings that decide the numbers, ``drift``'s
keys; its ``model`` fields), with the grid's seeds and with its evaluation. The sweep rewrites grid.json only when
every kept row agrees with it (``drift``), so its own grid.json always passes. Rows of runs grid.json no longer lists
(the grid dropped them) and rows or grid.json fields that record nothing are not compared.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...errors import UserError
from .drift import COMPARED_KEYS, COMPARED_SECTIONS
from .identity import evaluation_differences, evaluation_settings, plain
from .results import setting
from .sweep_grid import SweepGrid

MAX_SHOWN = 4


def _compared(key: str) -> bool:
    return key in COMPARED_KEYS or key.split(".", 1)[0] in COMPARED_SECTIONS


def _said(grid: SweepGrid, run) -> dict[str, Any]:
    """{dotted key: value} grid.json says ``run`` trained with: its overrides in order (the last wins), then its
    model fields."""
    from ...config import ConfigError, parse_override

    said: dict[str, Any] = {}
    for text in [*grid.base_overrides, *run.run_overrides]:
        try:
            parts, value = parse_override(text)
        except ConfigError:
            continue  # not an override the sweep wrote; the sweep's own would have parsed
        said[".".join(parts)] = value
    said.update({f"model.{k}": v for k, v in run.model.items()})
    return {k: v for k, v in said.items() if _compared(k)}


def _same(a: Any, b: Any) -> bool:
    """Equal as the config reads them (YAML 1.1 reads ``1e-3`` as text; the config makes it a number)."""
    a, b = plain(a), plain(b)
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _differences(row, said: dict[str, Any], grid: SweepGrid) -> list[str]:
    out = []
    config = row.config if isinstance(row.config, dict) else {}
    for key, value in sorted(said.items()):
        recorded = setting(config, key)
        if recorded is not None and not _same(recorded, value):
            out.append(f"{row.name}: {key}: {plain(recorded)!r} in the row, {plain(value)!r} in grid.json")
    if grid.seeds and row.seed is not None and row.seed not in grid.seeds:
        out.append(f"{row.name}: seed {row.seed} is not among grid.json's seeds {grid.seeds}")
    if grid.eval_sets:
        now = evaluation_settings(grid.eval_sets, grid.eval_options)
        out += [f"{row.name}: " + d.replace(" now", " in grid.json")
                for d in evaluation_differences(row.evaluation, now)]
    return out


def check_grid_describes_rows(rows: Iterable, grid: SweepGrid, grid_file: str, source: str) -> None:
    """UserError when ``grid`` (read from ``grid_file``) says the runs of ``source``'s rows trained or were evaluated
    otherwise than the rows record (see the module docstring)."""
    runs = {run.name: run for run in grid.runs}
    differ: list[str] = []
    for row in rows:
        if row.name in runs:
            differ += _differences(row, _said(grid, runs[row.name]), grid)
    if differ:
        shown = "; ".join(differ[:MAX_SHOWN]) + (f"; ... {len(differ) - MAX_SHOWN} more" if len(differ) > MAX_SHOWN
                                                  else "")
        raise UserError(f"{grid_file} does not describe the rows of {source} ({len(differ)} difference(s): {shown}): "
                        f"it was copied from another sweep of grid {grid.name!r} or edited; put back the sweep's own "
                        f"grid.json (the sweep's own command, `leviathan sweep --grid {grid.name} --out FOLDER` with "
                        f"the overrides its rows trained with, writes it again without training a run that has its "
                        f"row)")
