"""Whether a saved perplexity is exp of the saved loss beside it: the one rule every reader of saved numbers applies.

    ppl_contradicts(5.45, 232.55)   # False: exp(5.45) to rounding
    ppl_contradicts(0.1, 237.09)    # True: a field edited apart from the other

``eval.perplexity.summarize`` writes both from one number (``ppl = exp(loss)``, inf past exp's range), so any pair it
wrote agrees to rounding. Readers: results rows (``experiments.machinery.results``, issue 30 round 7), metrics.jsonl
rows (``train.metrics``, issue 30 round 14, A130) and a sweep run's summary (``experiments.machinery.summary_check``,
round 14, A233). Footgun: values that are not numbers, or out of range (loss < 0, ppl < 1), are left to the caller's
range checks and pass here.
"""

from __future__ import annotations

import math
from typing import Any


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def ppl_contradicts(loss: Any, ppl: Any) -> bool:
    """Whether ``ppl`` is not exp(``loss``) to rounding (a relative 1e-6 on the log); unknown (None), NaN or
    range-checked-away values pass; a loss past exp's range must have ppl inf and the other way round, and a NaN loss
    an infinite (or NaN) one, as ``summarize`` writes it: a NaN loss beside ppl 230 passed (issue 30 round 20, M19)."""
    if _is_number(loss) and _is_number(ppl) and math.isnan(loss):
        return math.isfinite(ppl)
    if not (_is_number(loss) and _is_number(ppl)) or math.isnan(loss) or math.isnan(ppl) or loss < 0 or ppl < 1:
        return False
    if loss >= 700 or math.isinf(ppl):
        return not (loss >= 700 and math.isinf(ppl))
    return abs(math.log(ppl) - loss) > 1e-6 * max(1.0, loss)


def exp_shown(loss: float) -> str:
    """exp(loss) as a perplexity is written: inf past float64's range (round 10, Q16: OverflowError on 800) and for a
    NaN loss (``summarize``'s rule)."""
    return "inf" if loss >= 700 or math.isnan(loss) else f"{math.exp(loss):.6g}"
