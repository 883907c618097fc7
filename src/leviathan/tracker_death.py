"""multiprocessing's resource tracker, killed, is not launched again: one warning line instead of tracebacks.

    quiet_tracker_death(say=True)    # sweep's or demo's process (one "warning: ..." line); say=False in workers

A pool of worker processes (``sweep --jobs``) registers its semaphores with a resource tracker process. Killed
(``kill -9``, the OOM killer), it was launched again by each process that next used it: each printed a UserWarning
with its source line, and each new tracker a ``KeyError`` traceback per name the dead one had registered, five and
more reaching the user of a sweep whose rows were right (issue 30 round 20, K113). A tracker launched again knows none
of those names, so it cleans up nothing of them: here the process's link to it goes to ``os.devnull`` instead, and
the sweep's process says once that the names are no longer tracked.

Footgun: this reaches into CPython's ``multiprocessing.resource_tracker._resource_tracker`` (``_fd``, ``_pid``,
``_lock``, ``_check_alive``, as in 3.8 to 3.12); where those are missing, nothing is changed.
"""

from __future__ import annotations

import contextlib
import os
import warnings

FIELDS = ("_fd", "_pid", "_lock", "_check_alive", "ensure_running")


def quiet_tracker_death(say: bool) -> None:
    """Make this process's resource tracker, once dead, a sink instead of a new process (``say``: warn once)."""
    from .value_rules import check_switches

    check_switches("quiet_tracker_death", say=say)  # 'no' was true (round 30, Y621's kind)
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if tracker is None or not all(hasattr(tracker, f) for f in FIELDS) or getattr(tracker, "_quiet", False):
        return
    launch = tracker.ensure_running

    def ensure_running():
        with tracker._lock:
            dead = tracker._fd is not None and not tracker._check_alive()
            if dead:
                os.close(tracker._fd)
                with contextlib.suppress(ChildProcessError, TypeError):
                    os.waitpid(tracker._pid, 0)
                tracker._fd, tracker._pid = os.open(os.devnull, os.O_WRONLY), None
        if dead and say:
            warnings.warn("multiprocessing's resource tracker process died (killed from outside): the command goes "
                          "on and its results are not affected, but semaphores of its worker pool are no longer "
                          "tracked (a few may be left in /dev/shm if the command is killed)", RuntimeWarning,
                          stacklevel=2)
        if not dead:
            launch()

    tracker.ensure_running, tracker._quiet = ensure_running, True
