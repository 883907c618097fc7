"""``python -m leviathan.bench --rss``: the fresh process in which the ``modes`` section measures a training
step's peak resident memory (reads a JSON request on stdin, prints ``{"peak_rss_mb": ...}``).
The benchmark itself runs as ``leviathan bench``."""

import sys

from .sections.modes import rss_child

if sys.argv[1:] == ["--rss"]:
    rss_child()
else:
    raise SystemExit("usage: python -m leviathan.bench --rss  (reads a JSON request on stdin); "
                     "the benchmark is `leviathan bench`")
