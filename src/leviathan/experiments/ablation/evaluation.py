"""The grids of one ablation report were evaluated alike: their arms share the "Final numbers" table.

    check_one_evaluation_across([("runs/abA", rows_a), ("runs/abB", rows_b)])   # UserError naming the difference

Each folder's rows must record one evaluation (``identity.check_one_evaluation``, the plain report's rule, B2), and
every folder the same one: two grids evaluated on 1024 and on 512 tokens of validation text had their arms' perplexity
changes (-9.6% and -9.9%) put side by side without a word (issue 30 round 14, B247). Rows that record no evaluation
(older rows, the committed results/ablations) are not compared. Footgun: the vocabulary ablation compares grids of
different tokenizers, whose eval sections must still agree for their numbers to share a table.
"""

from __future__ import annotations

from ...errors import UserError
from ..machinery.identity import check_one_evaluation, evaluation_mismatch


def check_one_evaluation_across(per_folder: list[tuple[str, list]]) -> None:
    """UserError when the rows of one folder, or of two folders, of ``per_folder`` ((folder, its rows) pairs) were
    evaluated differently (see the module docstring)."""
    shown = evaluation_mismatch(_first_evaluations(per_folder), "in")
    if shown:
        raise UserError(f"the sweep folders of this ablation were evaluated differently ({shown}): their arms' "
                        f"numbers cannot share a table; evaluate them again with one eval section (sweeps with "
                        f"the same eval settings), or report each folder's ablation separately")


def _first_evaluations(per_folder: list[tuple[str, list]]):
    """(folder, the first evaluation its rows record, or None), each folder's own rows checked first, lazily: a
    folder's own mix is named before a later folder is read."""
    for folder, rows in per_folder:
        check_one_evaluation(rows, folder)
        yield folder, next((row.evaluation for row in rows if row.evaluation is not None), None)
