"""A sweep run's training summary (``sweep_train.json``) against itself and against its own metrics.jsonl (issue 30
round 14, A233, A234), and a results row against its run's metrics.jsonl (round 24, V14).

    problem = summary_contradiction(summary, run_dir)   # None, or why the summary's final numbers cannot be
    problem = row_contradiction(row, sweep_folder)      # the same for a row of the sweep folder's results.jsonl

Before, ``final_val_loss`` edited to 1.0 (its perplexity 246.23 kept, A233; or loss, perplexity and bpb all edited
consistently, A234) became the run's results row, exit 0, while the run's metrics.jsonl and the row's own curve ended
at 5.506 at that step. ``train`` writes the summary's final numbers from the same ``EvalResult`` it logs as the last
validation line of metrics.jsonl (``train.loop``: the final step always validates and logs); a resumed finished run
validates the same weights on the same tokens again. So: perplexity = exp(loss) always, and the line of metrics.jsonl
at the summary's step holds the same numbers (to ``RELATIVE``, generous for an accelerator's reduction order).
Footgun: a run without such a line (metrics.jsonl missing, edited apart, or of another step) is not compared: the
rule proves nothing there, and the steps themselves are ``drift``'s check.
"""

from __future__ import annotations

from pathlib import Path

from ...eval.consistency import exp_shown, ppl_contradicts
from ...train.summary import TrainSummary

RELATIVE = 1e-3  # the same evaluation repeated agrees far closer; any edit that matters differs far more
TRAIN_SUMMARY = "sweep_train.json"  # a sweep run's training summary (``sweep`` writes it, and reads it on a rerun)


def summary_contradiction(summary: TrainSummary, run_dir: Path) -> str | None:
    """Why ``summary``'s final validation numbers cannot be the run's (None: nothing contradicts them)."""
    loss, ppl = summary.final_val_loss, summary.final_val_ppl
    if ppl_contradicts(loss, ppl):
        return f"final_val_ppl {ppl!r} is not exp(final_val_loss) = {exp_shown(loss)} (fields edited apart)"
    return _against_metrics({key: getattr(summary, f"final_val_{key}") for key in ("loss", "ppl", "bpb")},
                            summary.steps, run_dir)


def row_contradiction(row, folder: Path) -> str | None:
    """Why a results ``row`` (``ResultRow``) of the sweep folder ``folder`` holds final validation numbers that its
    run's own metrics.jsonl (``folder/runs/<name>``) does not: a row whose final_val_loss, final_val_ppl and curve were
    edited consistently was collected, and reported, as the run's (issue 30 round 24, V14), where the sweep holds its
    summary to the same file. None when nothing contradicts them, or the run folder is not there (a collected
    folder: the rule proves nothing)."""
    if not isinstance(row.steps, int):
        return None
    problem = _against_metrics({"loss": row.final_val_loss, "ppl": row.final_val_ppl}, row.steps,
                               Path(folder) / "runs" / row.name)
    if problem is None:
        problem = _curve_against_metrics(row, Path(folder) / "runs" / row.name)
    if problem is None:
        problem = _speed_against_summary(row, Path(folder) / "runs" / row.name)
    if problem is None:
        from .bpb_check import bpb_contradiction

        return bpb_contradiction(row, Path(folder))  # eval bpb against the data's bytes (round 27, R56)
    return f"the row of run {row.name!r}: {problem}"


def _speed_against_summary(row, run_dir: Path) -> str | None:
    """Why the row's ``tokens_per_s`` or ``wall_time_s`` is not its run's training summary's (``sweep_train.json``,
    from which the sweep copies them: ``sweep.make_row``); None when they agree, or the summary is not there or holds
    no speed (a resumed finished run: the row's speed then comes from metrics.jsonl). A row's tokens_per_s edited
    x1000 was reported by ``analyze throughput`` as 76005% faster, exit 0 (issue 30 round 35, AH171)."""
    from ... import json_text

    try:
        summary = json_text.read_file(run_dir / TRAIN_SUMMARY)
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict):
        return None
    for key in ("tokens_per_s", "wall_time_s"):
        value, recorded = getattr(row, key, None), summary.get(key)
        if _is_float(value) and _is_float(recorded) and recorded and _differs(value, recorded):
            return (f"{key} {value!r} is not the run's own training summary's ({key} {recorded!r} in "
                    f"{str(run_dir / TRAIN_SUMMARY)!r})")
    return None


def _curve_against_metrics(row, run_dir: Path) -> str | None:
    """Why the row's validation curve (``curve.tokens``, ``curve.val_loss``, which the sweep copies from the run's
    metrics.jsonl: ``sweep._curve``) holds a point its run's log does not (None: every point the log holds at those
    tokens agrees). Checked only where the log is proven the row's: its last validation at the row's steps is the
    row's final_val_loss (``_against_metrics`` passed on it). A point edited from 5.4495 to 0.5 was reported, and
    entered analysis.json's gain over training, exit 0 (issue 30 round 28, T27)."""
    curve, final = row.curve, _last_validation(run_dir, row.steps)
    if curve is None or final is None or not (_is_float(row.final_val_loss) and _is_float(final.val_loss)):
        return None
    from ...errors import UserError
    from ...train.metrics import read_metric_rows

    try:
        logged = {r.tokens: r.val_loss for r in read_metric_rows(run_dir / "metrics.jsonl", report=None)
                  if r.val_loss is not None}
    except (UserError, OSError):
        return None
    for tokens, loss in zip(curve.tokens or [], curve.val_loss or []):
        if _is_float(tokens) and _is_float(loss) and _is_float(logged.get(tokens)) and _differs(loss, logged[tokens]):
            return (f"curve.val_loss {loss!r} at {tokens:,} tokens is not the run's own validation there (val_loss "
                    f"{logged[tokens]!r} in {str(run_dir / 'metrics.jsonl')!r})")
    return None


def check_rows_match_runs(rows, results, after: str = "") -> None:
    """UserError naming the first of ``rows`` (read from ``results``, a sweep folder or its results.jsonl) that
    ``row_contradiction`` finds against its run folder; ``after``: what the caller adds to the problem ("nothing was
    written")."""
    import os

    from ...errors import UserError

    folder = Path(results) if os.path.isdir(results) else Path(results).parent
    for row in rows:
        if (problem := row_contradiction(row, folder)) is not None:
            raise UserError(f"{str(folder / 'results.jsonl')!r}: {problem}: the row was edited, or its run folder "
                            f"holds another run{after}; delete the row's line and run the sweep's command again (the "
                            f"sweep makes the row anew from its run folder), or put the run's own folder back")


def _against_metrics(finals: dict, steps: int, run_dir: Path) -> str | None:
    """Why the final numbers ``finals`` ({"loss": .., "ppl": .., "bpb": ..}) are not the last validation line of
    ``run_dir``'s metrics.jsonl at ``steps`` (None: they are, or there is no such line)."""
    row = _last_validation(run_dir, steps)
    if row is None:
        return None
    for key, logged in (("loss", row.val_loss), ("ppl", row.val_ppl), ("bpb", row.val_bpb)):
        value = finals.get(key)
        if _is_float(value) and _is_float(logged) and _differs(value, logged):
            return (f"final_val_{key} {value!r} is not the run's own last validation at step {steps} "
                    f"(val_{key} {logged!r} in {str(run_dir / 'metrics.jsonl')!r})")
    return None


def _is_float(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _last_validation(run_dir: Path, step: int):
    """The last validation row of the run's metrics.jsonl at ``step`` (None: none, or no readable file)."""
    from ...errors import UserError
    from ...train.metrics import read_metric_rows

    try:
        rows = read_metric_rows(run_dir / "metrics.jsonl", report=None)
    except (UserError, OSError):
        return None
    vals = [r for r in rows if r.step == step and r.val_loss is not None and r.split in (None, "val")]
    return vals[-1] if vals else None


def _differs(a: float, b: float) -> bool:
    """Whether two finite numbers differ by more than ``RELATIVE`` of the larger (non-finite ones: left alone)."""
    import math

    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) > RELATIVE * max(abs(a), abs(b), 1e-12)


def summary_row_problem(summary: TrainSummary, batch_tokens: int) -> str | None:
    """Why the results row the sweep would make of ``summary`` breaks a row's own rules (``results.row_problem``:
    params.total the sum of its parts, params.tied beside an empty head, tokens = steps x batch_tokens), or None.
    A sweep_train.json edited to params.total 1, tokens 10**9 or params.tied true was refused only when the row was
    appended, by append_result's API line ("correct that value") that named no file (issue 30 round 20, K191, K192,
    K194); checked before any work, the caller names the file and says to delete it."""
    from .results import row_problem

    n = summary.resumed_from  # the note the row gets (``sweep._resume_notes``), which row_problem reads
    notes = [f"resumed from its step-{n} checkpoint"] if n and n < summary.steps else []  # identity.RESUMED_NOTE
    row = {"name": "run", "steps": summary.steps, "tokens": summary.tokens, "notes": notes,
           "params": summary.params.as_dict() if summary.params is not None else None,
           "config": {"batch_tokens": batch_tokens}}
    problem = row_problem(row)
    return None if problem is None else f"the results row made of it {problem}"
