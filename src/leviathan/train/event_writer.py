"""TensorBoard's event writer in the product's words: a storage failure of its thread is one named error, not a trace.

    writer = event_writer(run_dir / "tensorboard", purge_step)     # None when tensorboard is not installed
    with events_named(writer, run_dir / "tensorboard"):
        writer.add_scalar("train/loss", 3.2, global_step=5)

TensorBoard writes its events file in a thread of its own. When that write failed (``ulimit -f`` hit, EFBIG; a folder
made immutable, EPERM) the thread printed its own 15-line "Exception in thread Thread-1: Traceback ..." to the user
and the next call of the main thread raised the same OSError again: with no file name (the train line named no
file, issue 30 round 18, F109) or a ``bytes`` one (F79). The thread's report of an OSError is silenced here (the
main thread raises it at its next write, flush or close) and that error is given the events file's name as ``str``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

_HOOKED = False


def _quiet_storage_errors_of_writer_threads() -> None:
    """Install, once, a ``threading.excepthook`` that lets an OSError of TensorBoard's writer thread pass unprinted
    (F109): the writer keeps it and raises it in the main thread, where the CLI prints its one line."""
    global _HOOKED
    if _HOOKED:
        return
    before = threading.excepthook

    def hook(args):
        if isinstance(args.exc_value, OSError) and type(args.thread).__name__ == "_AsyncWriterThread":
            return
        before(args)

    threading.excepthook = hook
    _HOOKED = True


def event_writer(folder: Path, purge_step: int | None):
    """A ``SummaryWriter`` writing into ``folder`` (its thread's storage errors quiet), or None when TensorBoard is
    not installed (JSON lines are the record)."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    _quiet_storage_errors_of_writer_threads()
    with events_named(None, folder):
        return SummaryWriter(log_dir=str(folder), purge_step=purge_step)


def _events_file(writer, folder: Path) -> str:
    """The events file ``writer`` writes (its folder when TensorBoard does not say)."""
    try:
        return os.fsdecode(writer.file_writer.event_writer._file_name)
    except (AttributeError, TypeError):
        return os.fspath(folder)


@contextlib.contextmanager
def events_named(writer, folder: Path):
    """Re-raise an OSError of TensorBoard as one naming its events file as ``str`` (F79: a ``bytes`` name broke the
    error line; F109: EFBIG named no file)."""
    try:
        yield
    except OSError as e:
        if e.errno is None:
            raise
        name = os.fsdecode(e.filename) if e.filename is not None else _events_file(writer, folder)
        raise OSError(e.errno, e.strerror, name) from None
