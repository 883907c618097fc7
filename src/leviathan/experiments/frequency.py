"""Frequency-stratified comparison across a sweep (docs/DESIGN.md §7): per (size, seed) of a regime, the
baseline's and each other variant's loss per training-frequency bucket and the relative perplexity reduction.

The buckets and the per-bucket losses of one model are ``eval.frequency``; this module reads them from
results rows (``experiments.results``), where the sweep stored them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..eval.frequency import relative_reduction
from .results import ResultRow, baseline_of, comparison_groups


def frequency_from_results(rows: Iterable[ResultRow], regime: str = "iso_body", baseline: str | None = None,
                           eval_set: str = "val") -> list[dict]:
    """Per (size, seed) of ``regime``: the baseline's and each other variant's bucket losses and reductions.

    ``baseline`` defaults to the regime's (``results.BASELINES``: dense_tied for iso-body).
    """
    baseline = baseline or baseline_of(regime)
    out = []
    for (size, seed), by_variant in comparison_groups(rows, regime).items():
        base = by_variant.get(baseline)
        if base is None or eval_set not in base.buckets:
            continue
        b = base.buckets[eval_set]
        for variant, r in by_variant.items():
            if variant == baseline or eval_set not in r.buckets:
                continue
            m = r.buckets[eval_set]
            out.append({"regime": regime, "size": size, "seed": seed, "baseline": baseline, "variant": variant,
                        "eval_set": eval_set, "buckets": b.buckets or {}, "count": b.count,
                        "baseline_loss": b.loss, "model_loss": m.loss,
                        "reduction": relative_reduction(b.loss, m.loss)})
    return out
