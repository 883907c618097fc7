"""An evaluation's numbers as one type, from the scorer to the report.

    result = summarize(total_nats, predictions, num_bytes)   # eval.perplexity: EvalResult(loss, ppl, bpb, tokens)
    result.loss, result.bpb                                  # the validator, the train state, ``leviathan eval``,
    row.eval["val"].loss                                     # the sweep's evaluation, a results row, the report

``eval.perplexity.summarize`` derives the numbers (the one place); the validator, the train state,
``eval.score.evaluate_checkpoint``, the sweep's rows and the report pass the same dataclass along, never a dict
taken apart by string key. Its JSON is ``codec.encode`` (keys a later version adds kept in ``extra``).

Footgun: ``ppl`` is ``inf`` for a loss past exp's range (and for a NaN loss), and ``bpb`` None without a byte
count; a row's writer turns non-finite numbers into null (``experiments.machinery.results.json_safe``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..codec import decode, encode_fields, extra_keys


@dataclass
class EvalResult:
    """One eval set: mean loss (nats per token), perplexity exp(loss), bits per byte, tokens scored; with a
    restricted softmax, the targets outside its id set that were left out (count and share of the set)."""

    loss: float | None = None
    ppl: float | None = None
    bpb: float | None = None
    tokens: int | None = None
    targets_outside: int | None = None
    share_outside: float | None = None
    extra: dict = extra_keys()

    @classmethod
    def from_dict(cls, d: Mapping | EvalResult | None) -> EvalResult | None:
        """From its JSON (a results row's ``eval.<set>``), tolerant of any earlier version's."""
        if d is not None and not isinstance(d, (Mapping, cls)):
            raise TypeError(f"expected a mapping for EvalResult, got {type(d).__name__}")
        return decode(cls, d)

    def to_dict(self) -> dict:
        """Its JSON: every field, then the keys kept in ``extra``."""
        return encode_fields(self)

    @property
    def restricted(self) -> bool:
        """Scored on the targets inside a restricted softmax's id set (some were left out)."""
        return self.targets_outside is not None

    def metrics_row(self) -> dict:
        """The validation keys of a metrics.jsonl row (``train.metrics``): val_loss, val_ppl, val_bpb."""
        return {"val_loss": self.loss, "val_ppl": self.ppl, "val_bpb": self.bpb}
