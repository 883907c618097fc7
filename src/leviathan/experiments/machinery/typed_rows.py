"""Rows handed to an analysis in Python are held to the rules the file reader applies to the same rows.

    rows = check_typed_rows(rows, "paired_comparisons")   # a list of ResultRow; TypeError / ValueError otherwise

``read_results`` warns about and skips a line holding NaN, a seed that is not a whole number or a variant its own
config contradicts (``results.row_problem``), and refuses two rows of one run that differ. A list of rows edited in
Python skipped all of that: ``paired_comparisons`` compared a pair whose loss was NaN as "no pairs" beside the same
pair's bits per byte (issue 30 round 17, E322), dropped a row whose seed was ``True`` (E323) and a second row of one
size, seed and variant (E324) without a word. Footgun: the check is on the rows as given, so call it where a public
function first takes them, before grouping them (``comparison_groups`` keeps the last of two rows of one arm).
"""

from __future__ import annotations

import os
from typing import Iterable

from .results import ResultRow, row_problem


def check_typed_rows(rows: Iterable, who: str, one_per_arm: bool = False) -> list[ResultRow]:
    """``rows`` as a list, or the error naming the first row the file reader would refuse (see the module
    docstring): a TypeError for a path or objects that are not rows, a ValueError for a row's values. With
    ``one_per_arm`` (a function that pairs rows by size, seed and variant), two rows of one arm under two names are a
    ValueError too (a pre-sweep's rows of one arm at several lrs are not: they are not paired)."""
    if isinstance(rows, (str, os.PathLike)):  # round 8: a sweep's path ended in an AttributeError
        raise TypeError(f"rows must be results rows, e.g. {who}(read_results({os.fspath(rows)!r})), got the path "
                        f"{os.fspath(rows)!r}")
    rows = list(rows)
    if not all(isinstance(r, ResultRow) for r in rows):
        raise TypeError(f"rows must be ResultRow objects (leviathan.experiments.machinery.results.read_results), "
                        f"got {', '.join(sorted({type(r).__name__ for r in rows if not isinstance(r, ResultRow)}))}")
    arms: dict[tuple, str] = {}
    for i, row in enumerate(rows):
        problem = row_problem(row.to_dict())
        if problem is not None:
            raise ValueError(f"{who}: rows[{i}] ({row.name!r}) {problem}; pass the rows as read_results reads them, "
                             f"or correct that value")
        for regime in (row.regimes or [row.regime]) if one_per_arm else []:
            arm = (regime, str(row.size), row.seed, row.variant)
            if arm in arms and arms[arm] != row.name:
                raise ValueError(f"{who}: rows[{i}] ({row.name!r}) and the row {arms[arm]!r} are both variant "
                                 f"{row.variant!r} of size {row.size!r}, seed {row.seed} in regime {regime!r}: one "
                                 f"would hide the other; drop one, or correct the edited variant, size or seed")
            arms[arm] = row.name
    return rows
