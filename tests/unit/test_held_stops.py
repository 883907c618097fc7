"""``stop_signals.held_stops``: the one way a block that must finish once begun holds the stop signals back.

Three copies of this existed (a pthread_sigmask in experiments/staged.py, a note-and-drop for torchrun's rank-failure
line, a note-and-deliver in scripts/collect_results.py); they are now one helper with a ``deliver_after`` switch.
"""

from __future__ import annotations

import os
import signal
import threading

import pytest

from leviathan.stop_signals import held_stops


class Stop(BaseException):
    pass


@pytest.fixture
def raising_handler():
    def handler(signum, frame):
        raise Stop(signum)

    old = signal.signal(signal.SIGTERM, handler)
    yield
    signal.signal(signal.SIGTERM, old)


def _block_with_a_stop(deliver_after: bool, finished: list) -> held_stops:
    with held_stops(deliver_after=deliver_after) as held:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler would run at any of these bytecodes if the stop were not held
            pass
        finished.append(True)
    return held


def test_a_held_stop_is_delivered_after_the_block_when_asked(raising_handler):
    finished = []
    with pytest.raises(Stop):
        _block_with_a_stop(True, finished)
        for _ in range(1000):
            pass
    assert finished == [True]  # the block ran to its end first


def test_a_held_stop_is_dropped_by_default(raising_handler):
    finished = []
    held = _block_with_a_stop(False, finished)
    for _ in range(1000):
        pass
    assert finished == [True] and held.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is not held._hold  # the caller's handler is back


def test_a_stop_during_a_failing_block_gives_way_to_the_error(raising_handler):
    """The block's own error is what the verb reports (one line); the held stop is not sent again on top of it."""
    with pytest.raises(OSError):
        with held_stops(deliver_after=True):
            os.kill(os.getpid(), signal.SIGTERM)
            raise OSError(28, "No space left on device")
    for _ in range(1000):
        pass


def test_outside_the_main_thread_it_holds_nothing():
    seen = []

    def work():
        with held_stops(deliver_after=True) as held:
            seen.append(held._old)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [{}]
