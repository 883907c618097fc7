"""Frequency-stratified comparison across a sweep (docs/DESIGN.md §7): per (size, seed) of a regime, the baseline's
and each other variant's loss per training-frequency bucket (``eval.frequency``, as the sweep stored it in the rows)
and the relative perplexity reduction, a ``FrequencyEntry`` each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...eval.frequency import relative_reduction
from .records import Record
from ..machinery.results import (BucketScheme, ResultRow, check_comparison, check_eval_set_held, check_typed_rows,
                                  comparison_groups)


@dataclass
class FrequencyEntry(Record):
    """A model's and its baseline's losses per training-frequency bucket (rarest first) and the perplexity reduction."""

    regime: str
    size: str
    seed: int | None
    baseline: str
    variant: str
    eval_set: str
    buckets: dict  # the baseline row's bucket description, as written (``scheme`` reads it)
    count: list | None  # validation targets per bucket
    baseline_loss: list
    model_loss: list
    reduction: list  # 1 - ppl_model / ppl_baseline per bucket (None for an empty bucket)

    @property
    def scheme(self) -> BucketScheme:
        """The bucket description, typed (the rule, each bucket's range of training counts)."""
        return BucketScheme.of(self.buckets)


def frequency_from_results(rows: Iterable[ResultRow], regime: str = "iso_body", baseline: str | None = None,
                           eval_set: str = "val") -> list[FrequencyEntry]:
    """Per (size, seed) of ``regime``: the baseline's and each other variant's bucket losses and reductions.

    ``baseline`` defaults to the regime's (``results.BASELINES``: dense_tied for iso-body).
    """
    baseline = check_comparison("frequency_from_results", regime, baseline)
    out = []
    rows = check_typed_rows(rows, "frequency_from_results", compared=True)  # as read_results holds them (E322)
    check_eval_set_held("frequency_from_results", rows, eval_set)
    for (size, seed), by_variant in comparison_groups(rows, regime).items():
        base = by_variant.get(baseline)
        if base is None or eval_set not in base.buckets:
            continue
        b = base.buckets[eval_set]
        for variant, r in by_variant.items():
            if variant == baseline or eval_set not in r.buckets:
                continue
            m = r.buckets[eval_set]
            out.append(FrequencyEntry(regime, size, seed, baseline, variant, eval_set, b.buckets or {}, b.count,
                                      b.loss, m.loss, relative_reduction(b.loss, m.loss)))
    return out
