"""The rows of one sweep folder agree with each other and with the folder's grid.json: one rule, read by every verb
that takes a sweep's rows as a whole.

    check_one_sweep(rows, grid, "runs/cpu", "runs/cpu/grid.json")    # UserError naming the first disagreement

The rows must record one evaluation (``identity.check_one_evaluation``), one grid, the one grid.json names
(``identity.check_one_grid``), and what grid.json says of their runs (``grid_agreement.check_grid_describes_rows``).
``leviathan report`` applied the three and ``scripts/collect_results.py`` none: a row whose
evaluation.options.max_tokens or whose grid was edited was copied into the repository, exit 0, while the report of
the same folder refused it (issue 30 round 14, B217, B263). Footgun: a verb that checks only some of the three lets
the others' rows through; call this, not its parts.
"""

from __future__ import annotations

from typing import Iterable

from .grid_agreement import check_grid_describes_rows
from .identity import check_one_evaluation, check_one_grid
from .sweep_grid import SweepGrid


def check_one_sweep(rows: Iterable, grid: SweepGrid, source: str, grid_file: str) -> None:
    """UserError when the rows of ``source`` (a sweep folder or its results.jsonl) measured different things, or not
    what ``grid`` (read from ``grid_file``) says (see the module docstring)."""
    rows = list(rows)
    check_one_evaluation(rows, source)
    check_one_grid(rows, source, grid.name, grid_file)
    check_grid_describes_rows(rows, grid, grid_file, source)
