"""Rows of metrics.jsonl a resumed run must still hold: the steps its checkpoint trained were logged, and a log
emptied or cut short is said so on resume (issue 30 round 16, C290).

    expect = expected_rows(loaded, identity, cfg)       # training-row steps the log holds for the checkpoint's steps
    note = lost_rows_note(path, kept_steps, expect, resume_step)   # None, or the one note line

Before, ``: > RUN/metrics.jsonl`` then ``train --resume auto`` went on without a word: the checkpoint said 4 steps were
trained, the curve began at step 5. Train logs a training row at step 1 and at every ``log_interval``
(``loop._logged_step``), so two rows are checked, not every one: step 1 (a run that did not fork from another's step)
and the last multiple of the checkpoint's ``log_interval`` at or before its step (after the fork's step). The rows
are not made up again and the run is not stopped (the steps were trained; only their record is gone): one note names
the missing steps and the file, so the curve's gap is known. Known limit: a run whose earlier session logged with a
larger log_interval and stopped between its rows may be told of a row it never wrote.
"""

from __future__ import annotations

from pathlib import Path

from ..checkpoint.layout import step_of
from ..run_config import RunConfig
from ..run_identity import RunIdentity


def expected_rows(loaded: dict, identity: RunIdentity | None, cfg: RunConfig) -> list[int]:
    """Training-row steps metrics.jsonl holds for a run resumed from the checkpoint ``loaded`` (``load_state``)."""
    step = int(loaded["state"]["step"])
    first = 0  # the last step trained elsewhere: a fork's rows begin after the step it continued from
    if identity is not None and identity.forked and identity.fork_step is not None:
        first = step_of(Path(identity.fork_step).name) or 0
    saved = (loaded.get("config") or {}).get("log_interval")
    interval = saved if isinstance(saved, int) and not isinstance(saved, bool) and saved > 0 else cfg.log_interval
    rows = {1} if first == 0 else set()
    rows.add(step - step % interval)
    return sorted(s for s in rows if first < s <= step)


def lost_rows_note(path: Path, kept: set[int], expected: list[int], step: int) -> str | None:
    """The note for the ``expected`` training rows that ``kept`` (the steps of the log's training rows at or before
    the checkpoint's ``step``) lacks, or None."""
    missing = [s for s in expected if s not in kept]
    if not missing:
        return None
    what = "is missing" if not path.exists() else "holds no training rows" if not kept else \
        f"holds training rows up to step {max(kept)} only" if max(kept) < missing[-1] else "lacks some training rows"
    steps = f"step {missing[0]}" if len(missing) == 1 else "steps " + ", ".join(str(s) for s in missing)
    return (f"note: '{path}' {what}, but the checkpoint trained {step} steps (no row of {steps}): the file was "
            f"emptied, cut short or removed; the run goes on and its curve lacks those steps' rows (restore "
            f"metrics.jsonl from a copy before resuming to keep them)")
