"""Live progress of the demo's runs, in every mode: a thread that follows each run's metrics.jsonl.

    with RunWatch({"dense_tied": run_dir / "dense_tied", ...}, total_steps=130):
        train the runs (worker processes, or one after the other here)

The demo's arms train in spawned worker processes whose progress bars would interleave (issue 31), but every run
writes metrics.jsonl (flushed per line), so one reader in the demo's process prints them as they come. Lines (on
stderr, so stdout stays the results): ``<arm> started`` when its file appears; per training row ``<arm> step S/N, T
tokens, loss L, R tok/s, ~M:SS left`` (steps to go at the rate of its steps so far); per validation row ``<arm>
validation loss V at T tokens``. Footgun: rows are read whole every ``interval`` seconds (the files are small); a
row cut short while being written is skipped and read on the next pass.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Callable


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


class RunWatch:
    """Prints the new rows of each run's metrics.jsonl every ``interval`` seconds while the block runs, and once
    more at its end (see the module docstring)."""

    def __init__(self, runs: dict[str, Path], total_steps: int, *, interval: float = 2.0,
                 say: Callable[[str], None] | None = None):
        self.runs = {label: Path(path) for label, path in runs.items()}
        self.total_steps = total_steps
        self.interval = interval
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self._seen: dict[str, int] = {}  # label -> rows printed
        self._started: dict[str, float] = {}  # label -> when its file appeared
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._width = max((len(label) for label in self.runs), default=0)

    def __enter__(self) -> RunWatch:
        self._thread = threading.Thread(target=self._loop, name="demo-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.poll()  # the rows written since the last pass

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()

    def poll(self) -> None:
        """Print every row not printed yet, for every run (from the watcher's thread or the caller's: one at a time)."""
        with self._lock:
            self._poll()

    def _poll(self) -> None:
        from ..errors import UserError
        from ..train.metrics import read_metric_rows

        for label, run_dir in self.runs.items():
            path = run_dir / "metrics.jsonl"
            if not path.is_file():
                continue
            if label not in self._started:
                self._started[label] = time.time()
                self._seen[label] = 0
                self.say(f"{label:<{self._width}}  started")
            try:
                rows = read_metric_rows(path, report=None)  # polled: the run's end says what matters
            except UserError:  # replaced between the check and the read (a resumed run rewrites it)
                continue
            for row in rows[self._seen[label]:]:
                self.say(self._line(label, row))
            self._seen[label] = max(self._seen[label], len(rows))

    def _line(self, label: str, row) -> str:
        name = f"{label:<{self._width}}"
        tokens = f"{int(row.tokens or 0):,} tokens"
        if row.val_loss is not None:
            return f"{name}  validation loss {row.val_loss:.4f} at {tokens}"
        step = int(row.step or 0)
        elapsed = time.time() - self._started[label]
        left = f", ~{_clock(elapsed / step * (self.total_steps - step))} left" if step else ""
        rate = f", {row.tokens_per_s:,.0f} tok/s" if row.tokens_per_s else ""
        loss = f", loss {row.train_loss:.4f}" if row.train_loss is not None else ""
        return f"{name}  step {step}/{self.total_steps}, {tokens}{loss}{rate}{left}"
