"""One module per CLI verb: ``add_arguments(parser)`` and ``run(args) -> int``."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """argparse ``type=`` for counts and sizes: ``--batch-size 0`` is refused with a message, not a traceback."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value
