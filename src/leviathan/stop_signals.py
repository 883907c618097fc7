"""The signals that stop a verb cleanly (as ``kill`` does by default: SIGTERM), besides Ctrl-C.

    for sig in stop_signals(): signal.signal(sig, handler)   # SIGTERM, and SIGHUP unless it is ignored

SIGHUP comes when the terminal or the ssh session a command runs in closes. Unhandled, it killed ``train`` mid-step
without a checkpoint or a word (exit 129, issue 30 round 6); handled, it stops like SIGTERM: ``train`` saves a
checkpoint of the last finished step, every other verb removes its temporary files and says what it stopped.

Footgun: ``nohup`` starts a command with SIGHUP ignored so that it outlives its terminal (the project's own run
queues rely on it); a handler would undo that, so a SIGHUP that is ignored when the verb starts stays ignored.
"""

from __future__ import annotations

import signal


def stop_signals() -> list[signal.Signals]:
    """SIGTERM, and SIGHUP where the platform has it and the process does not ignore it."""
    found = [signal.SIGTERM]
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is not None and signal.getsignal(hangup) is not signal.SIG_IGN:
        found.append(hangup)
    return found


def stop_and_interrupt_signals() -> list[signal.Signals]:
    """``stop_signals()`` and SIGINT (Ctrl-C), unless SIGINT is ignored: a shell that is not interactive starts its
    background jobs with SIGINT ignored, and a handler undid that: a SIGINT meant for the shell ended `report` as it
    finished, exit 130 (issue 30 round 11, S196)."""
    found = stop_signals()
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        found.append(signal.SIGINT)
    return found


# True once the verb of this process has put its output in place, complete (``prepare`` after renaming its data folder
# into place, ``report`` after its swap): a stop from then on says the work is done rather than "run it again" (issue
# 30 round 22, Q106). The CLI sets it back to False as each verb starts.
output_in_place = False


# The output (a real path) whose placing ends the verb of this process, named by the verb before its writer runs
# (``final_output``); the CLI sets it back to None as each verb starts. See ``placed``.
_final: str | None = None


def final_output(path) -> None:
    """Name ``path`` (None: none) as the output whose placing ends this process's verb: once its writer has put it in
    place (``placed``), a stop says the work is complete. Export, analyze embeddings --out and a sweep said "run the
    same command again" beside a complete output (issue 30 round 23, T11, T13, T33)."""
    import os

    global _final
    _final = None if path is None else os.path.realpath(os.fspath(path))


def placed(path) -> None:
    """Note that the writer of ``path`` has put it in place, complete: ``output_in_place`` when it is the verb's
    ``final_output``. Footgun: the writers also serve callers that go on afterwards (lm-eval's own export, the demo's
    data folder, a sweep's records per run): setting the flag there said "its work is complete; nothing needs running
    again" of a stop during the demo's training (round 23), so only the output the verb named counts."""
    import os

    global output_in_place
    if _final is not None and os.path.realpath(os.fspath(path)) == _final:
        output_in_place = True


# A stop that arrived in a worker process before its training began (``remember_stop``), adopted by train's stop flag
# when it starts: the worker then stops before its first step instead of training on.
pending_stop: int | None = None


# True in a process whose caller says a stop itself (a demo's worker): train's own stop lines ("SIGTERM received ...
# (exit status 0)", "stopped by SIGTERM before the first step ...") are not printed, since the demo prints one line
# for all its models; a stopped demo printed seven lines, one promising exit status 0 (issue 30 round 14, A56, A166).
caller_says_stops = False


def remember_stop(signum, frame) -> None:
    """A worker's handler outside ``train``: note the stop (train adopts it) instead of dying. A demo worker killed by a
    SIGTERM while it sent its result held the result queue's lock forever, and the other workers and the demo then
    waited forever (issue 30 round 12, U271; round 13, V111)."""
    global pending_stop
    pending_stop = signum


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (before a pool of worker processes) with SIGHUP ignored: it ignores
    SIGINT and SIGTERM itself but not SIGHUP, so a SIGHUP to the process group (a closed terminal, ``kill -HUP -PGID``)
    killed it; it was started again and filled stderr with its KeyError tracebacks and "process died unexpectedly"
    warnings (issue 30 round 13, S4, S9). An ignored signal stays ignored in the process it starts."""
    import threading
    from multiprocessing import resource_tracker

    hangup = getattr(signal, "SIGHUP", None)
    if hangup is None or threading.current_thread() is not threading.main_thread():
        resource_tracker.ensure_running()
        return
    old = signal.signal(hangup, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(hangup, old)


class held_stops:
    """``with held_stops() as held:`` the stop signals (and Ctrl-C) are noted in ``held.signum`` instead of acting,
    for a few lines that must finish once begun. Main thread only (elsewhere this does nothing).

    ``deliver_after=False``: a held stop is dropped. Under torchrun the agent sends SIGTERM to the surviving ranks as
    soon as it sees one rank die, while they are saying which one died: the stop cut that line off and printed
    "stopped by SIGTERM" in its place (CI of 14f5786, test_rank_kill); the block is the verb's last act, and it ends
    with status 2 either way.

    ``deliver_after=True``: the block runs to its end and a stop that came meanwhile is sent again to this process
    when it ends without an error (a swap of a report's or a results folder's files that must not stop half-way,
    ``experiments/staged.py``, scripts/collect_results.py). Blocking the signals with pthread_sigmask does not do: a
    signal sent while another thread runs (the CLI's import-time redelivery timer) reaches that thread, and Python
    runs its handler in the main thread all the same.
    """

    def __init__(self, deliver_after: bool = False):
        self.signum: int | None = None
        self.deliver_after = deliver_after
        self._old: dict[int, object] = {}

    def _hold(self, signum, frame) -> None:
        self.signum = signum

    def __enter__(self) -> "held_stops":
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in stop_and_interrupt_signals():
                self._old[sig] = signal.signal(sig, self._hold)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        if self.deliver_after and self.signum is not None and exc_type is None:
            import os

            os.kill(os.getpid(), self.signum)
        return False
