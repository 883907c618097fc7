"""A failed print told apart from a failed file write: the standard output, watched.

    with watched_stdout():              # in the CLI's entry points
        ...                             # a verb prints its result
    line = lost_output(error)           # "could not print to the standard output ('/dev/full'): ..." or None

A print to a full disk (``> /dev/full``, a redirect onto a full tmpfs) raises an ``OSError`` that names no file, and
the CLI's line said "no space left on device; free disk space (delete old runs or checkpoints ...)" naming nothing,
after the verb's files had been written whole (issue 30 round 8). ``watched_stdout`` puts a thin proxy in front of
``sys.stdout`` that remembers a failed write or flush; ``lost_output`` then names the standard output, and closes it
off so that the interpreter's own flush at exit does not fail on it once more. Footgun: writes that go around
``sys.stdout`` (``sys.stdout.buffer``, ``os.write(1, ...)``) are not watched.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator


class _Watched:
    """``stream`` with every attribute passed through; ``write`` and ``flush`` remember an OSError they raise."""

    def __init__(self, stream):
        self._stream = stream
        self.failed = False

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError:
            self.failed = True
            raise

    def flush(self):
        try:
            return self._stream.flush()
        except OSError:
            self.failed = True
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def watched_stdout() -> Iterator[None]:
    """``sys.stdout`` watched for the duration (nothing changes when it is None or already watched)."""
    if sys.stdout is None or isinstance(sys.stdout, _Watched):
        yield
        return
    original = sys.stdout
    sys.stdout = _Watched(original)
    try:
        yield
        try:
            sys.stdout.flush()  # the verb's last lines, still buffered, fail here rather than at exit
        except BrokenPipeError:  # its reader took what it wanted and left (`| head`): the verb's work is done
            sys.stdout = open(os.devnull, "w")
    finally:
        if isinstance(sys.stdout, _Watched) and not sys.stdout.failed:  # a failed one stays, for ``lost_output``
            sys.stdout = original


def check_stdout_open() -> None:
    """UserError when the standard output is closed (``>&-``; Python then sets ``sys.stdout`` to None and every print
    is dropped): eval's scores, generate's text and params' table were lost, exit 0 and no word, while a full
    ``/dev/full`` said so and exit 2 (issue 30 round 20, K152). Checked before the command does anything."""
    if sys.stdout is None:
        from .errors import UserError

        raise UserError("the standard output is closed (>&-), so what the command prints (its result) would be lost "
                        "without a word; nothing was done; run it with the standard output open (> FILE, or "
                        "> /dev/null to discard it)")


def reader_left(e: BaseException) -> bool:
    """Whether ``e`` is the watched standard output's reader having left (``| head``: EPIPE) while the verb printed;
    stdout is then closed off, and the verb ends quietly as a Unix tool does on SIGPIPE (status 141)."""
    if isinstance(e, BrokenPipeError) and isinstance(sys.stdout, _Watched) and sys.stdout.failed:
        sys.stdout = open(os.devnull, "w")
        return True
    return False


def stdout_failed() -> bool:
    """Whether a print to the CLI's watched standard output failed (``storage.api_writes`` then leaves the error to
    ``lost_output``'s line, which names the standard output, not the API's folder)."""
    return isinstance(sys.stdout, _Watched) and sys.stdout.failed


def lost_output(e: BaseException | None) -> str | None:
    """The line for a storage error that came from printing to the watched standard output (None otherwise)."""
    from .errors import _STORAGE_ERRORS, process_limit_fix

    stream = sys.stdout
    if not (isinstance(stream, _Watched) and stream.failed and isinstance(e, OSError) and not e.filename
            and e.errno in _STORAGE_ERRORS):
        return None
    try:
        where = repr(os.readlink("/proc/self/fd/1"))
    except OSError:
        where = "where it was redirected"
    sys.stdout = open(os.devnull, "w")  # the interpreter's flush at exit would fail on it again
    fix = (f"{limit}, or run the command without redirecting it" if (limit := process_limit_fix(e)) else  # B244
           "redirect it (> FILE) to a disk with room, or run the command without redirecting it")
    return (f"could not print to the standard output ({where}): {_STORAGE_ERRORS[e.errno][0]}; the files the command "
            f"writes are whole or absent as always, only its printed output was lost; {fix}")
