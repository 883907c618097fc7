"""The ``--lr-sweep`` of a report is the pre-sweep of the reported grid: its picks are the rates the rows trained at.

    check_presweep_of_grid(lr_rows, rows, "o200k", ["results/o200k/o200k-lr"])   # UserError when it is another's

The report's pre-sweep section says "Each arm's main runs use the lr picked here." A pre-sweep of another grid
(``tinylr``, other sizes) beside rows that all trained at 0.003 was tabled with "picked 0.01", exit 0 (issue 30
round 15, B178). A pre-sweep is taken as the grid's when its rows are of grid ``GRID-lr`` (the name
``sweep --presweep`` and the committed rounds use), or when every arm it picks for that has rows here trained at the
pick; otherwise the report is refused, naming the pre-sweep's grid, its picks and the rates the rows trained at.
Footgun: a fair-shot round re-examines its own pre-sweep (``o200k-fair-lr``): the name rule keeps it.
"""

from __future__ import annotations

from ...errors import UserError
from ..machinery.results import setting
from ..method.lr_sweep import arm_key, pick_learning_rates


def _rates_of(rows: list, arm: str) -> set[float]:
    """The ``optim.lr`` the rows of ``arm`` (``BODY:VARIANT``, or a variant for a one-body pre-sweep) trained at."""
    out = set()
    for row in rows:
        key = arm_key(row.size, str(row.variant))
        if key == arm or (":" not in arm and row.variant == arm):
            lr = setting(row.config, "optim.lr") if isinstance(row.config, dict) else None
            if isinstance(lr, (int, float, str)) and not isinstance(lr, bool):
                try:
                    out.add(float(lr))
                except ValueError:
                    continue
    return out


def check_presweep_of_grid(lr_rows: list, rows: list, grid_name: str | None, sweeps: list,
                           eval_set: str = "val") -> None:
    """UserError when the pre-sweep's rows are neither of grid ``GRID-lr`` nor picked the rates ``rows`` trained at
    (see the module docstring)."""
    theirs = sorted({str(row.grid) for row in lr_rows if row.grid})
    if grid_name and theirs == [f"{grid_name}-lr"]:
        return
    wrong = []
    for arm, choice in pick_learning_rates(lr_rows, eval_set).items():
        rates = _rates_of(rows, arm)
        if choice.lr is not None and rates and rates != {choice.lr}:
            wrong.append(f"{arm}: picked {choice.lr:g}, the runs trained at "
                         f"{', '.join(f'{lr:g}' for lr in sorted(rates))}")
    if wrong:
        raise UserError(f"--lr-sweep {' '.join(map(str, sweeps))} is a pre-sweep of grid "
                        f"{', '.join(theirs) or '(unnamed)'}, not of {grid_name!r}'s runs ({'; '.join(wrong[:3])}"
                        f"{' ...' if len(wrong) > 3 else ''}); pass the pre-sweep these runs' rates came from (grid "
                        f"{grid_name}-lr), or leave --lr-sweep out")
