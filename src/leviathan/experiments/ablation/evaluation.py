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
from ..machinery.identity import check_one_evaluation, evaluation_differences


def check_one_evaluation_across(per_folder: list[tuple[str, list]]) -> None:
    """UserError when the rows of one folder, or of two folders, of ``per_folder`` ((folder, its rows) pairs) were
    evaluated differently (see the module docstring)."""
    first = None
    for folder, rows in per_folder:
        check_one_evaluation(rows, folder)
        evaluation = next((row.evaluation for row in rows if row.evaluation is not None), None)
        if evaluation is None:
            continue
        if first is None:
            first = (folder, evaluation)
            continue
        differ = evaluation_differences(first[1], evaluation)
        if differ:
            shown = "; ".join(d.replace(" in the row,", f" in {first[0]},").replace(" now", f" in {folder}")
                              for d in differ[:4])
            raise UserError(f"the sweep folders of this ablation were evaluated differently ({shown}): their arms' "
                            f"numbers cannot share a table; evaluate them again with one eval section (sweeps with "
                            f"the same eval settings), or report each folder's ablation separately")
