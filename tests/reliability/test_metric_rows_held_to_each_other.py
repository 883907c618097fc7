"""``read_metric_rows`` takes only rows the logger writes, each alone and each after the rows before it (issue 30
round 28, U481, U484, U544, U545, U547). The logger (``MetricsLogger``, which rewrites the file on resume to the rows
up to the resumed step) lists each step once per kind of row (training; validation of a split), in order, with tokens
that never go down, under one run id, and never logs a negative learning rate, speed, time or gradient norm. A row
that breaks this was taken without a word (a curve with two points at one step, an lr of -1, two runs' rows in one
curve); it is now skipped and reported in one line naming the file, the line and the field, as the reader's
docstring says of every line that is not a metrics row. A real run's log reads whole and quietly.
"""

from __future__ import annotations

import re

import pytest

from leviathan.run_identity import RunIdentity, write_identity
from leviathan.train.metrics import read_metric_rows

pytestmark = [pytest.mark.reliability]

A, B = "a" * 32, "b" * 32


def rows_read(folder, lines: list[str]) -> tuple[list[int], list[str]]:
    (folder / "metrics.jsonl").write_text("".join(line + "\n" for line in lines))
    said: list[str] = []
    return [row.step for row in read_metric_rows(folder, report=said.append)], said


def train_row(step: int, tokens: int, extra: str = "") -> str:
    return f'{{"step": {step}, "tokens": {tokens}, "train_loss": 3.0, "lr": 0.001{extra}}}'


def val_row(step: int, tokens: int) -> str:
    return f'{{"step": {step}, "tokens": {tokens}, "val_loss": 3.0, "split": "val"}}'


@pytest.mark.parametrize(("lines", "steps", "said"), [
    ([train_row(1, 10), train_row(1, 10)], [1],  # U481
     r"metrics\.jsonl:2: line 2 has step 1 again \(the training row on line 1; one file lists each step once"),
    ([train_row(2, 20), train_row(1, 10)], [2],  # U484
     r"line 2 has step 1 after step 2 \(the training row on line 1"),
    ([train_row(1, 100), train_row(2, 50)], [1],  # U545
     r"line 2 has tokens 50, fewer than the 100 on line 1 \(the tokens trained never go down\)"),
    ([train_row(1, 10, f', "run_id": "{A}"'), train_row(2, 20, f', "run_id": "{B}"')], [1],  # U547
     rf"line 2 has run_id {B}, not line 1's {A} \(the rows of two runs in one file\)"),
    ([train_row(2, 20), val_row(2, 20), val_row(1, 10)], [2, 2],
     r"line 3 has step 1 after step 2 \(the validation \(val\) row on line 2"),
    ([train_row(1, 10).replace("0.001", "-1.0"), train_row(2, 20)], [2],  # U544
     r"line 1 has lr -1\.0, not a number >= 0"),
    ([train_row(1, 10, ', "grad_norm": -2.0')], [], r"line 1 has grad_norm -2\.0, not a number >= 0"),
])
def test_a_row_no_logger_writes_is_skipped_and_named(tmp_path, lines, steps, said):
    got, notes = rows_read(tmp_path, lines)
    assert got == steps
    assert len(notes) == 1 and notes[0].startswith("warning: ") and "skipped, the run's other rows are used" in notes[0]
    assert re.search(said, notes[0]), notes[0]


def test_run_json_says_whose_rows_they_are(tmp_path):
    write_identity(tmp_path, RunIdentity(run_id=B))
    got, notes = rows_read(tmp_path, [train_row(1, 10, f', "run_id": "{A}"'), train_row(2, 20, f', "run_id": "{B}"')])
    assert got == [2] and f"line 1 has run_id {A}, not run.json's {B}" in notes[0]


def test_the_logs_a_run_writes_read_whole(tmp_path, finished_run):
    lines = [train_row(1, 10), val_row(1, 10), train_row(2, 20), train_row(3, 30), val_row(3, 30),
             '{"step": 3, "tokens": 30, "val_loss": 3.1, "split": "test"}', train_row(4, 40).replace("0.001", "0.0")]
    assert rows_read(tmp_path, lines) == ([1, 1, 2, 3, 3, 3, 4], [])
    said: list[str] = []
    rows = read_metric_rows(finished_run, report=said.append)  # a real run of 4 steps
    assert said == [] and [r.step for r in rows if r.train_loss is not None] == [1, 2, 3, 4]
