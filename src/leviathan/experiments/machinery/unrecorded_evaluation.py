"""A sweep rerun holds rows that record no evaluation settings to the grid.json their folder holds.

    check_unrecorded_evaluation(grid, rows, out_dir)   # UserError before grid.json is written again

Rows written before rows carried their evaluation settings (``identity.Evaluation``) cannot be checked against the
grid's eval section (``drift.check_rows_against_grid`` notes them). A sweep of the same folder with another eval
section (``eval.max_tokens`` 1024, was 2048) was then taken with that note alone and grid.json rewritten to say the
rows were evaluated on 1,024 tokens, while the rows of a folder that kept their settings are refused "grid has
changed" (issue 30 round 31, Z77). The folder's grid.json, the evaluation its last sweep ran with, stands in for the
settings such rows do not record: an eval section that differs from it is refused the same way. A grid.json that
records no eval sets (written before grid.json carried them) leaves the note alone, as before.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UserError
from .identity import evaluation_differences, evaluation_settings
from .sweep_grid import read_sweep_grid


def check_unrecorded_evaluation(grid, rows: list, out_dir: str | Path) -> None:
    """UserError when a row of ``rows`` holds eval numbers but no evaluation settings and ``out_dir``'s grid.json
    evaluates otherwise than ``grid`` (a ``Grid``) does now."""
    names = sorted({row.name for row in rows if row.evaluation is None and row.eval})
    if not names:
        return
    kept = read_sweep_grid(out_dir)
    if not kept.eval_sets:
        return
    was = evaluation_settings(kept.eval_sets, kept.eval_options)
    now = evaluation_settings(grid.eval_sets, grid.eval_options)
    differences = [d.replace(" in the row, ", " in grid.json, ") for d in evaluation_differences(was, now)]
    if differences:
        shown = ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")
        raise UserError(f"grid {grid.name!r} evaluates otherwise than the grid.json of {str(out_dir)!r} ("
                        f"{'; '.join(differences[:6])}), which is all that says how {len(names)} row(s) that record "
                        f"no evaluation settings were evaluated ({shown}); nothing was written; sweep into a new "
                        f"--out, or remove those runs' rows (and their runs/<name> folders) from results.jsonl to "
                        f"evaluate them again")
