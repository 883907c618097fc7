"""What grid.json lists against the rows beside it: notes every reader of a sweep folder gives alike.

    for line in coverage_notes(rows, grid, "runs/cpu"):   # 'note: ...' lines; [] when they agree
        print(line, file=sys.stderr)

The report of one shard of two said nothing of the grid's other runs (issue 30 round 15, B203), and a row of a run
removed from grid.json was reported without a word (B163); both became notes of ``leviathan report``. Round 17 found
what those notes missed, and the verb that gave none:

- a grid.json whose ``runs`` were edited to ``[]`` passed every row without a word (D310): an empty list is not a
  grid.json without runs (an early version's, which says nothing of them), so its rows are runs it does not list;
- a grid.json whose ``seeds`` name seeds its runs do not have ([0, 1] over runs of seed 0) contradicts itself
  (E52): the sweep writes the runs of exactly its seeds;
- ``scripts/collect_results.py`` copied such a grid.json into the repository, exit 0 (E52, E56), where the report
  of the same folder noted it: it prints these notes too (one function, so the two cannot drift apart again).
"""

from __future__ import annotations

from .sweep_grid import SweepGrid

MAX_NAMED = 4


def _some(names: list) -> str:
    return ", ".join(map(str, names[:MAX_NAMED])) + (" ..." if len(names) > MAX_NAMED else "")


def coverage_notes(rows: list, grid: SweepGrid, source: str) -> list[str]:
    """``note:`` lines naming the runs grid.json lists that have no row in ``source``, the rows of runs it does not
    list, and seeds grid.json names that none of its runs has (see the module docstring); [] for a grid.json that
    records no runs (an early version's)."""
    if not grid.runs and not grid.runs_recorded:
        return []
    have, listed = {row.name for row in rows}, {run.name for run in grid.runs}
    absent = [run.name for run in grid.runs if run.name not in have]
    extra = sorted(have - listed)
    out = []
    if absent:
        out.append(f"note: {len(absent)} of grid {grid.name!r}'s {len(grid.runs)} runs (grid.json) have no row in "
                   f"{source} ({_some(absent)}): the tables compare the runs that have rows; for the whole grid pass "
                   f"every shard's folder (leviathan report SHARD... --out DIR), or finish the sweep")
    if extra:
        out.append(f"note: {len(extra)} row(s) of {source} are of runs grid.json does not list ({_some(extra)}): runs "
                   f"the grid no longer has (or an edited grid.json); they are reported with the grid's base settings "
                   f"checked")
    if (unrun := _seeds_without_runs(grid)):
        out.append(f"note: {source}'s grid.json lists seeds {grid.seeds}, but none of its runs has seed "
                   f"{_some(unrun)}: an edited grid.json (the sweep writes the runs of exactly its seeds); its runs, "
                   f"not its seeds, are what the rows are checked against; put back the sweep's own grid.json")
    return out


def _seeds_without_runs(grid: SweepGrid) -> list:
    """The seeds grid.json lists that none of its runs has (runs that record no seed: none judged)."""
    run_seeds = {run.seed for run in grid.runs}
    if not grid.runs or None in run_seeds:
        return []
    return [seed for seed in grid.seeds if seed not in run_seeds]
