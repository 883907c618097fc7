"""Sample efficiency, gains over training and throughput (docs/DESIGN.md §7; paper v2: 2.1x fewer tokens at 1.2B).

Sample efficiency: the training tokens model M needs to reach reference R's *final* validation loss. M's validation
curve (its ``metrics.jsonl`` rows with ``tokens`` and ``val_loss``) is scanned in token order for the first
evaluation at or below the target, the crossing linearly interpolated with the evaluation before it. The factor is
tokens_R / tokens_M (2.1: M needed 2.1x fewer tokens); if M never reaches the target the result says ``reached:
False`` and the factor is None. Validation noise can make a curve touch the target early and rise again; the first
crossing is what a practitioner stopping training would see, so that is what is reported.

Gains over training: at every token count where both curves were evaluated, the perplexity reduction
1 - exp(L_M - L_R) (the paper: "gains grow during training"). Throughput: each run's ``tokens_per_s`` against the
baseline variant of its (regime, size, seed): slowdown = 1 - tps / tps_baseline (the paper: 23%-51% lower at
iso-body); runs measured on different hardware are not compared unless told to.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ...errors import ArgumentTypeError, ArgumentValueError, UserError
from ...train.metrics import MetricsRow, read_metric_rows
from .records import Record, inline, optional
from ..machinery.results import BASELINES, ResultRow, check_comparison, check_typed_rows, comparison_groups


@dataclass
class Curve:
    """A validation curve: tokens seen and validation loss, sorted by tokens."""

    tokens: np.ndarray
    loss: np.ndarray

    def __post_init__(self):
        """Both arrays as 1-d float arrays, checked where a curve is made: an empty curve ended in numpy's IndexError,
        an unsorted one was read first point last and tokens of 2 beside losses of 3 were interpolated, without a
        word (issue 30 round 23, U438, U439, U442). Footgun: a loss may be NaN or infinite (a diverged evaluation,
        round 19, J280), a token count may not."""
        self.tokens = _points("tokens", self.tokens)
        self.loss = _points("loss", self.loss)
        problem = None
        if (bad := np.flatnonzero(~np.isfinite(self.tokens) | (self.tokens < 0))).size:
            problem = f"tokens[{bad[0]}] is {float(self.tokens[bad[0]])!r}, not a token count >= 0"
        elif len(self.tokens) != len(self.loss):
            problem = f"holds {len(self.tokens)} token counts but {len(self.loss)} losses"
        elif len(self.tokens) == 0:
            problem = "holds no points"
        elif (back := np.flatnonzero(np.diff(self.tokens) <= 0)).size:
            i = int(back[0]) + 1
            problem = (f"tokens are not in increasing order: tokens[{i}] is {self.tokens[i]:g} after "
                       f"{self.tokens[i - 1]:g}")
        if problem is not None:
            raise ArgumentValueError(f"Curve: {problem}; pass one loss per token count, the token counts increasing "
                                     f"(e.g. val_curve(read_metric_rows(path)))")

    @property
    def final_loss(self) -> float:
        return float(self.loss[-1])

    @property
    def final_tokens(self) -> float:
        return float(self.tokens[-1])


def _points(name: str, values) -> np.ndarray:
    """``values`` as a 1-d float array, else the ``Curve`` error naming ``name``. Bools and texts are no numbers
    (``scaling.not_numbers``, the test ``dense_equivalent`` and ``fit_power_law`` use): ``np.asarray(..., float)``
    read True as the token count 1 and '2' as 2.0 without a word (issue 30 round 30, Y188, Y189)."""
    from .scaling import not_numbers

    try:
        if isinstance(values, (str, bytes)) or (np.size(values) > 0 and not_numbers(values) is not None):
            raise TypeError(name)
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"Curve: {name} must be an array of numbers, got {type(values).__name__} "
                                f"{values!r:.60}; pass a 1-d numpy array") from None
    if out.ndim != 1:
        raise ArgumentValueError(f"Curve: {name} must be a 1-d array, got shape {out.shape}; pass one value per "
                                 f"validation point")
    return out


def _check_curve(api: str, name: str, value) -> None:
    """``ArgumentTypeError`` unless ``value`` is a ``Curve`` (a tuple of arrays ended in an AttributeError)."""
    if not isinstance(value, Curve):
        raise ArgumentTypeError(f"{api}: {name} must be a Curve, got {type(value).__name__} {value!r:.40}; pass "
                                f"Curve(tokens, loss) or row_curve(row)")


def row_curve(row: ResultRow, split: str | None = None) -> Curve:
    """The validation curve of a results row, read from the run's metrics.jsonl; where that file is gone (a
    committed results.jsonl on another machine), or is not the one the row measured, the curve the row keeps, which
    holds the validation rows. A run folder swapped for another run's (or a metrics.jsonl trained on since) had its
    curve drawn for the row, exit 0 (issue 30 round 9, N37): the file is used only while its validation points are
    the row's own."""
    kept = None
    if row.curve is not None and row.curve.tokens:
        kept = val_curve([MetricsRow(tokens=t, val_loss=v) for t, v in zip(row.curve.tokens, row.curve.val_loss)])
    try:
        if not row.metrics:
            raise UserError(f"row {row.name!r} names no metrics file")
        rows = read_metric_rows(row.metrics)
        if kept is not None and not _same_curve(val_curve(rows), kept):
            return kept
        return val_curve(rows, split)
    except (UserError, OSError):
        if kept is None:
            raise
        return kept


def _same_curve(a: Curve, b: Curve) -> bool:
    """Whether two validation curves hold the same points (token counts and losses, to float rounding)."""
    return a.tokens.shape == b.tokens.shape and bool(np.array_equal(a.tokens, b.tokens)) and bool(
        np.allclose(a.loss, b.loss, rtol=1e-9, atol=0, equal_nan=True))


def val_curve(rows: list[MetricsRow], split: str | None = None) -> Curve:
    """Validation curve from metrics rows; ``split`` selects rows with that ``split`` (None: all val rows; a row naming no
    split counts as any). Rows at one token count: the last wins (``read_metric_rows`` already skips a step logged
    twice, which no logger writes since a resume rewrites the file: issue 30 round 28, U481)."""
    points: dict[float, float] = {}
    splits = {r.split for r in rows if r.val_loss is not None and r.split is not None}
    if split is not None and splits and split not in splits:  # round 15 (B86): blamed on training, 'nope' not named
        raise UserError(f"no validation rows of split {split!r} in the metrics (their splits: "
                        f"{', '.join(sorted(map(str, splits)))}); pass one of those to --split")
    for r in rows:
        if r.val_loss is None:
            continue
        if split is not None and r.split is not None and r.split != split:
            continue
        points[float(r.tokens)] = float(r.val_loss)
    if not points:
        raise UserError("no validation rows (val_loss) in the metrics; was validation enabled during training?")
    t = np.array(sorted(points), dtype=float)
    return Curve(t, np.array([points[v] for v in t], dtype=float))


def tokens_to_reach(curve: Curve, target: float) -> float | None:
    """First token count at which ``curve`` reaches ``target`` (linear interpolation), or None. ``target`` is a
    finite loss: NaN was never reached, so None, read as "the model does not get there" (issue 30 round 19, J280).
    After an evaluation whose loss is NaN or infinite (diverged) there is nothing to interpolate from: the point that
    reaches the target is the answer (interpolating made it NaN tokens, "reached", round 23, U440)."""
    from ...value_rules import api_check, number_problem

    _check_curve("tokens_to_reach", "curve", curve)
    api_check("tokens_to_reach", "target", number_problem(target, shown="a finite loss"),
              "pass the loss to reach, e.g. the reference's final_loss")
    t, L = curve.tokens, curve.loss
    hit = np.flatnonzero(L <= target)
    if len(hit) == 0:
        return None
    i = int(hit[0])
    if i == 0 or not math.isfinite(L[i - 1]):
        return float(t[i])
    t0, t1, l0, l1 = t[i - 1], t[i], L[i - 1], L[i]
    if l0 == l1:
        return float(t1)
    return float(t0 + (l0 - target) / (l0 - l1) * (t1 - t0))


@dataclass
class SampleEfficiency(Record):
    """Tokens a model needs to reach a reference's final loss, and the factor reference tokens / those tokens."""

    target_loss: float  # the reference's final loss
    reference_tokens: float
    reached: bool
    tokens: float | None  # None: not reached
    factor: float | None
    model_final_loss: float
    model_final_tokens: float
    factor_upper_bound: float | None = optional()  # not reached: reference tokens / the model's final tokens


@dataclass
class GainCurve(Record):
    """Relative perplexity reduction vs the reference at the token counts both curves share."""

    tokens: list[float]
    reduction: list[float]


@dataclass
class EfficiencyEntry(Record):
    """One model vs its baseline of the same (regime, size, seed): its sample efficiency and gain over training,
    or the ``error`` that kept them from being measured (a curve that could not be read)."""

    regime: str
    size: str
    seed: int | None
    baseline: str
    variant: str
    name: str
    baseline_name: str
    error: str | None = optional()
    result: SampleEfficiency | None = inline()
    gain_over_training: GainCurve | None = optional()


@dataclass
class ThroughputEntry(Record):
    """A run's training tokens/s and its slowdown vs the baseline of its (regime, size, seed)."""

    regime: str | None
    size: str | None
    seed: int | None
    variant: str | None
    name: str
    tokens_per_s: float | None
    hardware: str
    baseline: str | None = None
    slowdown: float | None = None  # 1 - tokens/s / the baseline's
    note: str | None = optional()  # why it was not compared


def sample_efficiency(model: Curve, reference: Curve) -> SampleEfficiency:
    """Tokens ``model`` needs to reach ``reference``'s final loss, and the factor tokens_ref / tokens_model."""
    _check_curve("sample_efficiency", "model", model)
    _check_curve("sample_efficiency", "reference", reference)
    target = reference.final_loss
    tokens = tokens_to_reach(model, target) if math.isfinite(target) else None  # a diverged reference: not reached
    out = SampleEfficiency(target_loss=target, reference_tokens=reference.final_tokens, reached=tokens is not None,
                           tokens=tokens, factor=None, model_final_loss=model.final_loss,
                           model_final_tokens=model.final_tokens)
    if tokens is not None and tokens > 0:
        out.factor = reference.final_tokens / tokens
    elif tokens is None and model.final_tokens:  # a curve of one point at 0 tokens bounds nothing
        out.factor_upper_bound = reference.final_tokens / model.final_tokens
    return out


def gain_over_training(model: Curve, reference: Curve) -> GainCurve:
    """Relative perplexity reduction 1 - exp(L_model - L_ref) at the token counts both curves share (a UserError
    naming both curves' spans when they share none)."""
    _check_curve("gain_over_training", "model", model)
    _check_curve("gain_over_training", "reference", reference)
    common = np.intersect1d(model.tokens, reference.tokens)
    if not len(common):  # an empty GainCurve drew an empty figure, no word (issue 30 round 29, W540)
        raise UserError(f"gain_over_training: the model's curve (tokens {_span(model)}) and the reference's (tokens "
                        f"{_span(reference)}) share no token count, so there is no point to compare; pass curves "
                        f"validated at the same token counts (the same eval interval and tokens per step)")
    lm = model.loss[np.searchsorted(model.tokens, common)]
    lr = reference.loss[np.searchsorted(reference.tokens, common)]
    return GainCurve(common.tolist(), (1.0 - np.exp(lm - lr)).tolist())


def _span(curve: Curve) -> str:
    """A curve's token counts as ``first to last (n points)``, for a message."""
    return f"{curve.tokens[0]:,.0f} to {curve.tokens[-1]:,.0f}, {len(curve.tokens):,} points"


def _checked_baselines(baselines) -> dict[str, str]:
    """``throughput_table``'s ``baselines``: None, or a dict of regime -> baseline variant (``check_comparison``; a
    variant None: the regime's own)."""
    if baselines is None:
        return {}
    if not isinstance(baselines, dict):
        raise UserError(f"throughput_table: baselines: expected a dict of regime -> baseline variant, got "
                        f"{baselines!r:.60}; pass e.g. {{'iso_body': 'dense_tied'}}, or None for the defaults")
    return {regime: check_comparison("throughput_table", regime, variant) for regime, variant in baselines.items()}


def throughput_table(rows: Iterable[ResultRow], baselines: dict[str, str] | None = None,
                     allow_mixed_hardware: bool = False) -> list[ThroughputEntry]:
    """Per run: tokens/s and the slowdown vs the baseline variant of the same (regime, size, seed) (``baselines``,
    default ``results.BASELINES``); runs without a same-group baseline get ``slowdown: None``. Each given entry is
    checked as ``efficiency_from_results``'s regime and baseline are (``check_comparison``): ``{'iso_body': 'nope'}``
    left every slowdown None and an unknown regime key was ignored, without a word (issue 30 round 21, P460).
    """
    from ...value_rules import check_switches

    check_switches("throughput_table", allow_mixed_hardware=allow_mixed_hardware)  # 'no' was true (round 30, Y621's kind)
    baselines = {**BASELINES, **_checked_baselines(baselines)}
    groups: dict[tuple, dict[str, ResultRow]] = {}
    for r in check_typed_rows(rows, "throughput_table"):  # as read_results holds them (round 17, E322)
        for regime in r.all_regimes:
            groups.setdefault((regime, r.size, r.seed), {})[r.variant] = r
    out = []
    for (regime, size, seed), by_variant in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        base = by_variant.get(baselines.get(regime, ""))
        for variant, r in sorted(by_variant.items()):
            tps = r.tokens_per_s
            entry = ThroughputEntry(regime, size, seed, variant, r.name, tps, r.hardware_key())
            if base is not None and base is not r and tps and base.tokens_per_s:
                if base.hardware_key() != r.hardware_key() and not allow_mixed_hardware:
                    entry.note = "baseline ran on different hardware; not compared"
                else:
                    entry.baseline = base.variant
                    entry.slowdown = 1.0 - tps / base.tokens_per_s
            out.append(entry)
    return out


def format_efficiency(name: str, ref_name: str, res: SampleEfficiency) -> str:
    if res.reached and res.factor is None:  # reached at 0 tokens: a validation before the first step (round 9, M26c)
        return (f"{name} reaches {ref_name}'s final loss {res.target_loss:.4f} before any training (at "
                f"{res.tokens:,.0f} tokens) vs {res.reference_tokens:,.0f}: no factor")
    if res.reached:
        return (f"{name} reaches {ref_name}'s final loss {res.target_loss:.4f} after {res.tokens:,.0f} tokens "
                f"vs {res.reference_tokens:,.0f}: {res.factor:.2f}x fewer tokens")
    return (f"{name} does not reach {ref_name}'s final loss {res.target_loss:.4f} within {res.model_final_tokens:,.0f} "
            f"tokens (its final loss {res.model_final_loss:.4f})")


def efficiency_from_results(rows: Iterable[ResultRow], regime: str = "iso_body", baseline: str | None = None,
                            split: str | None = None) -> list[EfficiencyEntry]:
    """Sample efficiency and gains over training of every variant vs the baseline of each (size, seed)."""
    baseline = check_comparison("efficiency_from_results", regime, baseline)
    out = []
    rows = check_typed_rows(rows, "efficiency_from_results")  # as read_results holds them (round 17, E322)
    for (size, seed), by_variant in comparison_groups(rows, regime).items():
        base = by_variant.get(baseline)
        if base is None:
            continue
        for variant, r in by_variant.items():
            if variant == baseline:
                continue
            entry = EfficiencyEntry(regime, size, seed, baseline, variant, r.name, base.name)
            try:
                mc = row_curve(r, split)
                bc = row_curve(base, split)
            except (UserError, OSError) as e:
                entry.error = str(e)
            else:
                entry.result = sample_efficiency(mc, bc)
                try:
                    entry.gain_over_training = gain_over_training(mc, bc)
                except UserError as e:  # curves at other token counts: the gain says why it is missing (W540)
                    entry.error = str(e)
            out.append(entry)
    return out
