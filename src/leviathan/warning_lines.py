"""Python warnings shown by a verb as one line each: ``warning: MESSAGE``.

    with one_line_warnings():
        status = one_line_errors(run)

A library's ``warnings.warn`` printed two lines in Python's format, ``FILE:LINE: RuntimeWarning: ...`` and the
source line of the call (``return library() is not None``), where the contract is one ``warning: ...`` line
(issue 30 round 10, P101: the fused spline kernel could not be loaded under `ulimit -n 6`). Warnings raised as
errors (``-W error``) and filters stay Python's; only how a shown warning is printed changes, while the verb runs.
"""

from __future__ import annotations

import contextlib
import sys
import warnings


def _show(message, category, filename, lineno, file=None, line=None) -> None:
    text = " ".join(str(message).split())
    text = text[len("leviathan: "):] if text.startswith("leviathan: ") else text
    try:
        print(f"warning: {text}", file=file or sys.stderr)
    except OSError:  # stderr gone: a warning is not worth a failure
        pass


@contextlib.contextmanager
def one_line_warnings():
    """Within the block, every warning shown is one ``warning:`` line on stderr (its category and the source line
    of the call left out)."""
    previous = warnings.showwarning
    warnings.showwarning = _show
    try:
        yield
    finally:
        warnings.showwarning = previous
