"""The trained input table a fit is asked to follow, checked before the fit (``adopt(model, fit=Fit(...))``).

    check_fit_table(embedding.weight)    # UserError: rows holding NaN or inf (named), an all-zero table, a scale
                                         # no fit can follow

The fit's target is the table itself: a row holding NaN made the fit diverge and the error blamed the rate ("the
generator's fit diverged at Fit.lr=0.003 ... adopt it with a lower rate"), and so did a table multiplied by 1e30
(its mean square overflows float32); an all-zero table fitted "successfully", objective 1.2e+35 and cosine 0
(issue 30 round 14, B252, B253, B254). The rate was never the cause: the table is named, with the fix (load the
model again, or adopt without ``fit=``: a fresh generator).

Footgun: the bounds are on the rows' root mean square (float64): a trained table's is about 0.01 to 1; the generator
starts near its init scale and Adam moves it by about ``Fit.lr`` per step, so a table beyond ``MAX_RMS`` cannot be
reached, and one below ``MIN_RMS`` has squares below float32's smallest normal numbers.
"""

from __future__ import annotations

import torch

from ..errors import UserError

MAX_RMS = 1e4
MIN_RMS = 1e-15
CHUNK = 8192  # rows checked at a time
_FIX = "load the trained model again (or repair its input table), or adopt it without fit= (a fresh generator)"


def check_fit_table(table: torch.Tensor) -> None:
    """UserError when the (V, D) ``table`` cannot be a fit's target (see the module docstring)."""
    from ..meta_device import refuse_meta

    refuse_meta(table, "the model's input table (the fit's target)", "load the trained model with its weights (e.g. "
                "from_pretrained), or adopt it without fit= (a fresh generator)")  # round 15, B56
    if table.dtype == torch.float16:  # round 15 (B54): blamed on Fit.lr at every rate
        raise UserError("the model is float16: the generator would be fitted in float16, where Adam's eps (1e-8) "
                        "underflows to 0 and the fit diverges at any Fit.lr; load the model in float32 or bfloat16 "
                        "(dtype=torch.bfloat16), adopt it with fit=, then cast the adopted model with .half() if "
                        "float16 is needed")
    bad, squares = [], 0.0
    for start in range(0, table.shape[0], CHUNK):  # a float64 copy of a 256k x 4096 table would be 8 GB
        rows = table[start:start + CHUNK].detach().to(torch.float64)
        bad += [start + i for i in (~torch.isfinite(rows).all(dim=1)).nonzero().flatten().tolist()]
        squares += float(rows.pow(2).sum()) if not bad else 0.0
    if bad:
        shown = ", ".join(str(i) for i in bad[:8]) + (f" and {len(bad) - 8:,} more" if len(bad) > 8 else "")
        raise UserError(f"the model's input table holds NaN or inf in {len(bad):,} of its {table.shape[0]:,} rows (ids "
                        f"{shown}): the fit's target, so the fit would diverge at any Fit.lr; {_FIX}")
    rms = (squares / max(1, table.numel())) ** 0.5
    if rms == 0.0:
        raise UserError(f"the model's input table is all zeros: there is nothing to fit (every cosine would be 0); "
                        f"{_FIX}")
    if not MIN_RMS <= rms <= MAX_RMS:
        raise UserError(f"the model's input table has a root mean square of {rms:.3g}, outside [{MIN_RMS:g}, "
                        f"{MAX_RMS:g}] where a fit can follow it (a trained table's is about 0.01 to 1): it was "
                        f"scaled or damaged; {_FIX}")
