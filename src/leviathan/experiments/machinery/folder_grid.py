"""A sweep folder holds the rows of one grid: a sweep (or ``--reuse``) of another grid into it is refused.

    check_folder_grid(grid, kept_rows, out_dir)   # UserError when grid.json or a row names another grid

A copy of a sweep of grid 'g1', swept again with a grid file that differs only by ``name: g1b``, took g1's rows as
g1b's ('2 already in ... 0 to go'), exit 0, and rewrote grid.json as grid 'g1b' over them; the report then refused
the folder, its own grid.json gone (issue 30 round 16, C82). The settings of each row are ``drift``'s to compare
(and its size, variant, regimes, seed and data_seed, ``identity.identity_differences``); the grid's name is
this file's: the one grid.json records and the one every row records must be the grid's now. Rows or a grid.json
that name no grid (written before they did), and a grid.json that does not read (its reader names it), pass here.

    check_folder_runs(grid, kept_rows, out_dir)   # UserError when --seeds leaves out runs that have rows there

``sweep --seeds 1`` over a folder holding seed-0 rows rewrote grid.json with seeds [1] over them: the report then
called the seed-0 rows "runs grid.json does not list (or an edited grid.json)", and a grid.json that could not be
written was followed by a note that the grid "no longer has" runs its file still lists (issue 30 round 17, D20,
D61). A seeds flag selects runs of the one grid; it is refused (not widened to the union) when it leaves out runs
whose rows the folder holds, naming the seeds that keep them. An edited grid file with fewer seeds is ``drift``'s
(accepted with a note).
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UserError
from .sweep_grid import GRID_JSON, read_sweep_grid


def _grid_json_name(out_dir: Path) -> str | None:
    try:
        return read_sweep_grid(out_dir).name or None
    except (UserError, OSError, UnicodeDecodeError):
        return None  # a damaged grid.json is named where the folder is claimed, or rewritten by its own sweep


def check_folder_grid(grid, rows: list, out_dir: str | Path) -> None:
    """UserError before anything is written when ``out_dir``'s grid.json or one of its ``rows`` is of another grid
    than ``grid`` (a ``Grid``; module docstring)."""
    out_dir = Path(out_dir)
    found, where = _grid_json_name(out_dir), f"its {GRID_JSON} says so"
    others = [row.name for row in rows if isinstance(row.grid, str) and row.grid and row.grid != grid.name]
    if found in (None, grid.name) and others:
        found = next(row.grid for row in rows if row.name == others[0])
        where = f"its rows say so: {', '.join(others[:4])}{' ...' if len(others) > 4 else ''}"
    if found is None or found == grid.name:
        return
    path = getattr(grid, "path", None)
    rename = f"`name: {found}` in {str(path)!r}" if path else f"the name {found!r}"
    raise UserError(f"{str(out_dir)!r} holds the sweep of grid {found!r} ({where}), not of grid {grid.name!r}: a "
                    f"sweep folder holds one grid, and its rows would be taken as grid {grid.name!r}'s; nothing was "
                    f"written; sweep grid {grid.name!r} into a new --out, or give the grid its old name again "
                    f"({rename})")


def check_folder_runs(grid, rows: list, out_dir: str | Path) -> None:
    """UserError before anything is written when ``grid``'s seeds were given (``sweep --seeds``; ``Grid.seeds_given``)
    and leave out runs that have ``rows`` in ``out_dir``: grid.json, rewritten, would no longer list them (module
    docstring)."""
    if not getattr(grid, "seeds_given", False):
        return
    listed = {run.name for run in grid.runs}
    left = [row for row in rows if row.name not in listed]
    if not left:
        return
    seeds = sorted(set(grid.seeds) | {row.seed for row in left if isinstance(row.seed, int)})
    names = ", ".join(row.name for row in left[:4]) + (" ..." if len(left) > 4 else "")
    raise UserError(f"--seeds {','.join(map(str, grid.seeds))} leaves out {len(left)} run(s) whose rows "
                    f"{str(Path(out_dir) / 'results.jsonl')!r} holds ({names}): a sweep folder holds one grid, and "
                    f"grid.json, rewritten with these seeds, would no longer list them; nothing was written; pass "
                    f"their seeds too (--seeds {','.join(map(str, seeds))}), or sweep into a new --out")
