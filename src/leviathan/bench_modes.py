"""Moved to ``leviathan.bench.sections.modes`` (the ``modes`` section of ``leviathan bench``); this name is
kept so that existing imports and ``python -m leviathan.bench_modes --rss`` keep working."""

import sys

from .bench.report import format_modes
from .bench.sections.modes import MODES, VARIANTS, ModeStep, bench_modes, mode_ratios, peak_rss_mb, rss_child

__all__ = ["MODES", "VARIANTS", "ModeStep", "bench_modes", "format_modes", "mode_ratios", "peak_rss_mb", "rss_child"]

if __name__ == "__main__":
    if sys.argv[1:] == ["--rss"]:
        rss_child()
    else:
        raise SystemExit("usage: python -m leviathan.bench --rss  (reads a JSON request on stdin)")
