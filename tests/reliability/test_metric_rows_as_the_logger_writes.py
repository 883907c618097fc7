"""``read_metric_rows`` holds a row to what ``MetricsLogger`` writes beside the rows before it (issue 30 round 29,
fix28d's ``train/metrics_order`` rules extended): a training row without ``run_id`` between rows carrying the run's id
was taken as the run's (W179: the logger writes the id into every row; only a log from before run ids lacks it, in
its first rows), and a training row at step 1 with tokens 0 (W181: every step trains its batch's tokens, so step N
comes after at least N). Each is skipped and named in one line, as fix28d's rules are.
"""

from __future__ import annotations

import re

import pytest

from leviathan.run_identity import RunIdentity, write_identity

from test_metric_rows_held_to_each_other import A, rows_read, train_row, val_row

pytestmark = [pytest.mark.reliability]

ID = f', "run_id": "{A}"'


@pytest.mark.parametrize(("lines", "steps", "said"), [
    ([train_row(1, 10, ID), train_row(2, 20), train_row(3, 30, ID)], [1, 3],  # W179
     rf"metrics\.jsonl:2: line 2 has no run_id, after line 1's {A} \(the logger writes the run's id into every row"),
    ([train_row(1, 0), val_row(1, 0), train_row(2, 20)], [2],  # W181 (the validation row of that step too)
     r"line 1 has tokens 0 at step 1 \(each step trains its batch's tokens, at least one, so step 1 comes after at "
     r"least 1\)"),
    ([train_row(1, 10), train_row(5, 4)], [1], r"line 2 has tokens 4 at step 5"),
])
def test_a_row_the_logger_never_writes_is_skipped_and_named(tmp_path, lines, steps, said):
    got, notes = rows_read(tmp_path, lines)
    assert got == steps
    assert notes and all("skipped, the run's other rows are used" in note for note in notes)
    assert re.search(said, notes[0]), notes[0]


def test_a_log_from_before_run_ids_resumed_reads_whole(tmp_path):
    """Rows without an id first, then the resumed rows with one (run.json's): what a later version writes."""
    write_identity(tmp_path, RunIdentity(run_id=A))
    assert rows_read(tmp_path, [train_row(1, 10), val_row(1, 10), train_row(2, 20, ID)]) == ([1, 1, 2], [])
    assert rows_read(tmp_path, [val_row(0, 0), train_row(1, 10, ID)]) == ([0, 1], [])  # step 0 before training
