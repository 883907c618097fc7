"""``SweepOptions`` checked by the rules of ``leviathan sweep``'s flags, before any file is written.

    check_sweep_options(options)     # SweepOptions.__post_init__ calls it

The flags refuse ``--max-runs 0``, ``--threads 1.5`` and ``--shard 2/1``, and argparse gives ``--only`` as a list; the
Python options took what the flags refuse (issue 30 round 17): ``jobs=True`` ran one job (E64), ``max_runs=0`` created
the folder and stopped "after 0 runs" (E65), ``only='a-leviathan-s0'`` was read letter by letter ("--only 'a' --only
'-' ...", E66), ``shard=(2, 1)`` selected nothing and blamed the selection (E69), and ``threads=1.5`` reached torch's
set_num_threads after grid.json and the folder's marker were written (E70). Each value is judged by its flag's rule
(``value_rules``, ``shards.shard_problem``: one rule per value); the line names the option and what to pass.
"""

from __future__ import annotations

import os

from ...value_rules import api_check, switch_problem, thread_problem, whole_problem
from .grid import REGIMES
from .shards import shard_problem

API = "SweepOptions"


def _names_problem(value, known=None) -> str | None:
    """Why ``value`` is not None or a list of names (each one of ``known`` where given)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        return f"expected a list of names, got {type(value).__name__} {value!r:.60}"
    # any(), not next(..., None): a None among the names was taken for "none bad" (round 33, AE189's kind)
    if any(not isinstance(v, str) or not v or (known and v not in known) for v in value) or not value:
        among = f" among {', '.join(known)}" if known else ""
        return f"expected names{among}, got {value!r:.60}"
    return None


def check_sweep_options(o) -> None:
    """UserError naming the first option of ``o`` its flag would refuse (module docstring)."""
    api_check(API, "only", _names_problem(o.only), "pass a list of run names or glob patterns, e.g. ['a-*'] (as "
              "--only, repeatable), or None")
    api_check(API, "regimes", _names_problem(o.regimes, REGIMES), "pass a list of regimes (as --regime), or None")
    if o.shard is not None:
        api_check(API, "shard", shard_problem(o.shard), "pass (i, n) with 1 <= i <= n, e.g. (2, 4) as --shard 2/4")
    if o.max_runs is not None:
        api_check(API, "max_runs", whole_problem(o.max_runs, 1, "a positive integer"),
                  "pass how many runs to train before stopping (as --max-runs), or None for all")
    api_check(API, "jobs", whole_problem(o.jobs, 1, "a positive integer"), "pass the number of runs trained at once "
              "(as --jobs), e.g. 1")
    if o.threads is not None:
        api_check(API, "threads", thread_problem(o.threads), "pass torch threads per run (as --threads), or None")
    api_check(API, "skip_eval", switch_problem(o.skip_eval), "pass skip_eval=True or skip_eval=False")
    if o.root is not None and (not isinstance(o.root, (str, os.PathLike)) or os.fspath(o.root) == ""):
        api_check(API, "root", f"expected the data root's path, got {o.root!r:.60}",
                  "pass the folder eval texts resolve against (as --data-root), or None")
