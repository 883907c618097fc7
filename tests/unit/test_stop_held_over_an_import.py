"""``cli._stop``: a stop that comes while a module is being imported is held and delivered again by a timer thread
(issue 30 round 8, round 15 B258). Two races of that timer, found by a loop of SIGTERMs into ``analyze throughput``
(which imports through most of its run), session 2026-12-05:

- the timer's own delivery came during an import again and was held anew before the timer cleared the hold, so the
  stop was dropped: exit 0 with the table printed (1 of 142 tries under load);
- a timer fired after ``_stoppable`` had raised the held stop and delivered it a second time, inside the first one's
  ``except``: a traceback, exit 1 (2 of 600).
"""

from __future__ import annotations

import os
import signal
import threading

import pytest

from leviathan import cli


class _Timer:
    """threading.Timer that records instead of starting a thread."""
    started: list = []

    def __init__(self, interval, function, args):
        self.function, self.args, self.daemon = function, args, False

    def start(self):
        _Timer.started.append(self)

    def fire(self):
        self.function(*self.args)


@pytest.fixture
def held_over_imports(monkeypatch):
    monkeypatch.setattr(cli, "_VERB_PID", os.getpid())
    monkeypatch.setattr(cli, "_PENDING", None)
    monkeypatch.setattr(cli, "_HELD", 0, raising=False)
    monkeypatch.setattr(cli, "_STOPPING", False, raising=False)
    monkeypatch.setattr(cli, "_importing", lambda frame: True)
    monkeypatch.setattr(cli.threading, "Timer", _Timer)
    _Timer.started.clear()
    yield monkeypatch


def test_a_stop_held_again_while_the_timer_delivers_the_first_stays_pending(held_over_imports):
    cli._stop(signal.SIGTERM, None)  # the first stop, during an import: held, a timer started
    handlers = []

    def kill(pid, signum):  # the main thread's handler runs beside the timer thread, during another import
        handler = threading.Thread(target=cli._stop, args=(signum, None))
        handler.start()
        handler.join(0.2)
        handlers.append(handler)

    held_over_imports.setattr(cli.os, "kill", kill)
    _Timer.started[0].fire()
    handlers[0].join()
    assert len(_Timer.started) == 2  # held anew, with its own timer
    assert cli._PENDING == signal.SIGTERM  # _stoppable raises it if the verb ends before the second timer fires


def test_a_delivered_stop_is_no_longer_pending(held_over_imports):
    """The verb's own handler took it (train's stop flag): raising it again was E160's three stop lines."""
    cli._stop(signal.SIGHUP, None)
    taken = []
    held_over_imports.setattr(cli.os, "kill", lambda pid, signum: taken.append(signum))
    _Timer.started[-1].fire()
    assert taken == [signal.SIGHUP] and cli._PENDING is None


def test_a_held_stop_raised_at_the_verbs_end_is_not_delivered_again(held_over_imports):
    cli._stop(signal.SIGTERM, None)
    with pytest.raises(cli.Stopped):
        cli._raise_stop(cli._PENDING)  # _stoppable: the verb ended with the stop still held
    taken = []
    held_over_imports.setattr(cli.os, "kill", lambda pid, signum: taken.append(signum))
    _Timer.started[-1].fire()  # the timer fires while the first Stopped unwinds
    assert taken == []


def test_a_second_stop_while_the_first_unwinds_is_let_go(held_over_imports):
    held_over_imports.setattr(cli, "_importing", lambda frame: False)
    with pytest.raises(cli.Stopped):
        cli._stop(signal.SIGTERM, None)
    assert cli._stop(signal.SIGTERM, None) is None  # inside the first one's except: no second Stopped
