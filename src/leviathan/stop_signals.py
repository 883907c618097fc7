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
