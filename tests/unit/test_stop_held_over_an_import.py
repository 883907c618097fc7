"""``cli._stop``: a stop that comes while a module is being imported is held and delivered again by a timer thread
(issue 30 round 8, round 15 B258). The timer's own delivery may come during an import again and be held anew; the
timer then must not clear the new hold, or the stop is lost when the verb ends before the new timer fires (1 of 142
SIGTERMs into ``analyze throughput`` ended 0 with its table printed)."""

from __future__ import annotations

import os
import signal

import pytest

from leviathan import cli


class _Timer:
    """threading.Timer that records instead of starting a thread."""
    started: list = []

    def __init__(self, interval, function, args):
        self.function, self.args, self.daemon = function, args, False

    def start(self):
        _Timer.started.append(self)


@pytest.fixture
def held_over_imports(monkeypatch):
    monkeypatch.setattr(cli, "_VERB_PID", os.getpid())
    monkeypatch.setattr(cli, "_PENDING", None)
    monkeypatch.setattr(cli, "_HELD", 0, raising=False)
    monkeypatch.setattr(cli, "_importing", lambda frame: True)
    monkeypatch.setattr(cli.threading, "Timer", _Timer)
    _Timer.started.clear()
    yield


def test_a_stop_held_again_while_the_timer_delivers_the_first_stays_pending(held_over_imports, monkeypatch):
    cli._stop(signal.SIGTERM, None)  # the first stop, during an import: held, a timer started
    first = _Timer.started[-1]
    # the timer's kill reaches the main thread's handler during another import: held again, a second timer
    monkeypatch.setattr(cli.os, "kill", lambda pid, signum: cli._stop(signum, None))
    first.function(*first.args)
    assert len(_Timer.started) == 2
    assert cli._PENDING == signal.SIGTERM  # _stoppable raises it if the verb ends before the second timer fires


def test_a_delivered_stop_is_no_longer_pending(held_over_imports, monkeypatch):
    """The verb's own handler took it (train's stop flag): raising it again was E160's three stop lines."""
    cli._stop(signal.SIGHUP, None)
    taken = []
    monkeypatch.setattr(cli.os, "kill", lambda pid, signum: taken.append(signum))
    _Timer.started[-1].function(*_Timer.started[-1].args)
    assert taken == [signal.SIGHUP] and cli._PENDING is None
