"""metrics.jsonl's rows held to each other as the logger writes them (``read_metric_rows``' second check).

Each row alone is checked by ``metrics.metrics_row_problem``; a file of rows each possible alone can still be no log
the logger wrote (issue 30 round 28, U481, U484, U545, U547): a step listed twice (a curve then reads two points at
one step), steps going backwards, tokens going down, or the rows of two runs in one file. ``MetricsLogger`` appends
a training row and then, at an evaluation, a validation row of the same step and tokens; on resume it rewrites the
file to the rows up to the resumed step first, so one file lists each step once per kind of row, in order, with
tokens that never go down, all under one run id. Such a row is skipped and reported like a damaged line.

Footguns: the rows are compared with the rows kept before them, in file order: a row skipped here does not move
the reference on, so one edited row costs only itself. Which run a file is is run.json's run id where the folder
has one (``run_identity``), else the first row's: a file whose first rows are another run's keeps its own rows.
A log written before run ids (no ``run_id``) is not compared by id; once a row carries an id, every later row does
(a pre-id log resumed by a later version gains ids, never loses them: round 29, W179). Every step trains its batch's
tokens, so a row at step N counts at least N tokens (step 1 at tokens 0 was taken: round 29, W181).
"""

from __future__ import annotations

from typing import Any


def _kind(row: dict) -> str:
    """The kind of row, each of which lists a step once: training rows, and validation rows of each split."""
    return f"validation ({row.get('split') or 'val'})" if row.get("val_loss") is not None else "training"


class _Log:
    """What the rows kept so far say: the last step of each kind, the last step and tokens, the run id."""

    def __init__(self, run_id: str | None) -> None:
        self.run_id, self.id_line = run_id, None  # id_line None: the id is run.json's
        self.steps: dict[str, tuple[int, int]] = {}  # kind -> (step, line)
        self.last_step: tuple[int, int] | None = None
        self.last_tokens: tuple[Any, int] | None = None
        self.id_row: int | None = None  # the first kept row carrying an id

    def problem(self, row: dict) -> str | None:
        """Why ``row`` cannot follow the rows kept (None: it can)."""
        step, tokens, run_id = row.get("step"), row.get("tokens"), row.get("run_id")
        if run_id is not None and self.run_id is not None and run_id != self.run_id:
            whose = "run.json's" if self.id_line is None else f"line {self.id_line}'s"
            return f"has run_id {run_id}, not {whose} {self.run_id} (the rows of two runs in one file)"
        if run_id is None and self.id_row is not None:  # round 29, W179
            return (f"has no run_id, after line {self.id_row}'s {self.run_id} (the logger writes the run's id into "
                    f"every row; only a log from before run ids lacks it, in its first rows)")
        if step is not None and tokens is not None and tokens < step:  # round 29, W181: step 1 at tokens 0
            return (f"has tokens {tokens} at step {step} (each step trains its batch's tokens, at least one, so step "
                    f"{step} comes after at least {step})")
        if step is not None and (seen := self.steps.get(_kind(row))) is not None and step <= seen[0]:
            said = "again" if step == seen[0] else f"after step {seen[0]}"
            return (f"has step {step} {said} (the {_kind(row)} row on line {seen[1]}; one file lists each step once, "
                    f"in order)")
        if step is not None and self.last_step is not None and step < self.last_step[0]:
            return f"has step {step}, before step {self.last_step[0]} on line {self.last_step[1]} (steps go forward)"
        if tokens is not None and self.last_tokens is not None and tokens < self.last_tokens[0]:
            return (f"has tokens {tokens}, fewer than the {self.last_tokens[0]} on line {self.last_tokens[1]} (the "
                    f"tokens trained never go down)")
        return None

    def keep(self, number: int, row: dict) -> None:
        step, tokens = row.get("step"), row.get("tokens")
        if self.run_id is None and row.get("run_id") is not None:
            self.run_id, self.id_line = row["run_id"], number
        if self.id_row is None and row.get("run_id") is not None:
            self.id_row = number
        if step is not None:
            self.steps[_kind(row)] = (step, number)
            self.last_step = (step, number)
        if tokens is not None:
            self.last_tokens = (tokens, number)


def in_order(numbered: list[tuple[int, dict]], run_id: str | None) -> tuple[list[tuple[int, dict]],
                                                                            list[tuple[int, str]]]:
    """(the rows that follow the rows before them, [(line number, why)] of the others), ``numbered`` being
    (line number, row) in file order, each row a metrics row alone; ``run_id``: run.json's (None: unknown)."""
    log = _Log(run_id)
    kept, bad = [], []
    for number, row in numbered:
        if (problem := log.problem(row)) is not None:
            bad.append((number, problem))
        else:
            log.keep(number, row)
            kept.append((number, row))
    return kept, bad
