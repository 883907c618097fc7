"""The learning rate of each arm: its seeds trained at one rate, or a warning naming the rows that did not.

    note = mixed_rates_note(rows)   # None, or one ``warning: ...`` line naming the arm and its rows per rate

Per-arm learning rates are by design (each variant has its own tuned rate, and a ladder's sizes may too), so rows of
different arms at different rates are compared without a word. The seeds of one arm (one regime, size and variant)
are averaged as repeats of the same training, so rows of one arm at different rates are not: a results file made by
concatenating shards trained with different ``optim.lr`` overrides averaged them without a word (issue 30 round 14,
B34, B220, B312). A folder with its grid.json refuses such rows outright when the grid sets the rate alike for every
run (``grid_agreement``); this warning is for the rows no grid.json describes.
"""

from __future__ import annotations

from .results import setting


def mixed_rates_note(rows: list) -> str | None:
    """One warning line naming each arm whose rows record different ``optim.lr`` (at most three arms shown)."""
    arms: dict[tuple, dict[float, list[str]]] = {}
    for row in rows:
        lr = setting(row.config, "optim.lr") if isinstance(row.config, dict) else None
        if isinstance(lr, (int, float)) and not isinstance(lr, bool):
            arms.setdefault((row.regime, row.size, row.variant), {}).setdefault(float(lr), []).append(row.name)
    mixed = [(arm, rates) for arm, rates in arms.items() if len(rates) > 1]
    if not mixed:
        return None
    shown = "; ".join(f"{size} {variant}" + (f" ({regime})" if regime else "") + ": "
                      + ", ".join(f"lr {lr:g} in {', '.join(names[:2])}{' ...' if len(names) > 2 else ''}"
                                  for lr, names in sorted(rates.items()))
                      for (regime, size, variant), rates in mixed[:3])
    more = f"; ... {len(mixed) - 3} more" if len(mixed) > 3 else ""
    return (f"warning: the seeds of one arm trained at different learning rates ({shown}{more}): they are averaged "
            f"as repeats of one training; report the rows of each rate on their own, or resweep the odd ones at the "
            f"arm's rate")
