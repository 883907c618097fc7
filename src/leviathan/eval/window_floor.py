"""The floor of a cap on the tokens scored: one evaluation window (``seq_len`` + 1 tokens).

    short_cap_problem("eval.max_tokens", 10, 64, "eval.seq_len")   # the line naming the cap, or None

A cap is set in three places, each held to the same floor: a grid's ``eval.max_tokens``, a run config's ``eval_tokens``
(train's validation) and ``--max-tokens`` of ``leviathan eval`` / ``analyze frequency --runs``. Its own module, with no
import, because ``run_config`` asks it and ``eval.stream`` (the split's floor, ``short_split_problem``) imports what
imports ``run_config``: a function-level import closes an import circle too (tests/unit/test_import_cycles.py).
"""

from __future__ import annotations


def short_cap_problem(cap: str, max_tokens: int | None, seq_len: int, setting: str,
                      unset: str = "leave it out (the whole set)") -> str | None:
    """The line for a cap on the tokens scored (``cap``, the option that sets it: a grid's eval.max_tokens, a run's
    eval_tokens, eval's --max-tokens) below one evaluation window of ``seq_len`` + 1 tokens (named by ``setting``), or
    None. ``short_split_problem`` held the split's size to that floor, not the cap actually scored: a grid's eval
    max_tokens 10 with seq_len 64 scored every run on 9 targets without a word (issue 30 round 29, W692)."""
    if max_tokens is None or max_tokens >= seq_len + 1:
        return None
    return (f"{cap} {max_tokens:,} is fewer than one evaluation window ({setting} {seq_len:,} + 1 tokens): each loss "
            f"would be measured on {max(max_tokens - 1, 0):,} target(s); set {cap} to at least {seq_len + 1:,}, or "
            f"{unset}")
