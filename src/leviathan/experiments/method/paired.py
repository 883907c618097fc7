"""Paired differences across seeds: a model against its baseline, with a 95% interval, at the end and over training.

    rows = read_results("runs/cpu-bpe32k")
    for c in paired_comparisons(rows, plateau=7.134):   # PairedComparison: (regime, size, model, baseline variant)
        c.eval["val"].loss                                # TInterval: diffs, n, mean, sd, ci, verdict
        c.curve                                           # GapCurve: the gap at every validation point, its interval

Pairing (docs/DESIGN.md §7). Two runs are paired when they serve the same regime (§4) at the same size and seed:
the seed fixes the data order, so d_s = metric(model, s) - metric(baseline, s) cancels the noise both share. Over
n seeds: the mean, the sample standard deviation and the Student t interval mean +- t(1 - a/2, n - 1) * sd /
sqrt(n). Footgun: seeds are few, so the t quantile is large (4.30 for 95% at n = 3). Per eval set: loss, bits per
byte, and the perplexity change exp(mean loss difference) - 1 (the geometric mean of the per-seed ratios minus 1;
its interval is exp of the loss interval minus 1, so the verdict is the loss's). Verdict: "better" when the
interval lies below 0, "worse" above, "not resolved" when it contains 0, "one seed" when n = 1.

Which pairs: every variant against its regime's baseline (``results.BASELINES``); in iso_body also leviathan
against dense_untied, the control separating the generator from the untied head it brings. An iso_body size
without baselines of its own (an arm changing only the generator's shape) borrows those of a size with the same
backbone (``baseline_size``).

The unigram plateau: ``plateau`` is the training unigram entropy (nats). A model that merely reaches it sooner
leads early; that is optimisation speed, not capacity. Each comparison records the first validation point where
every seed's baseline is 0.5 nats below it (``past_plateau_tokens``). Footgun: the gap curve's intervals are
pointwise, not a simultaneous band.

Frequency buckets (``paired_buckets``): the same paired statistic per training-frequency bucket of the
validation targets (rarest first), where the paper's gain should concentrate.

Trend at the end (``gap_trend``): per seed, the slope of the gap over the last third of training; over
seeds its interval. It says whether a lead still grows or shrinks when the run stops.

Sample efficiency (``paired_efficiency``): per seed, baseline tokens over the tokens the model needs
to reach the baseline's final validation loss; over seeds the geometric mean with the interval of the
log factors (a ratio's natural scale).

The results are records (``records.Record``): analysis.json holds their ``as_dict()``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .records import Record
from ..machinery.results import (BASELINES, ResultRow, baseline_of, check_eval_set_held, check_typed_rows,
                                  comparison_groups)

CONTROLS: dict[str, tuple[tuple[str, str], ...]] = {"iso_body": (("leviathan", "dense_untied"),)}
PLATEAU_MARGIN = 0.5  # nats below the unigram entropy that count as "past the plateau"


@dataclass
class TInterval(Record):
    """Paired differences (the ones not None), their mean, sample sd and Student t interval, and the verdict."""

    diffs: list[float]
    n: int
    mean: float | None
    sd: float | None = None
    ci: list[float] | None = None
    verdict: str = "no pairs"  # better | worse | not resolved | one seed | no pairs


@dataclass
class PplChange(Record):
    """exp(.) - 1 of a mean loss difference and of its interval: the perplexity change."""

    mean: float | None
    ci: list[float] | None


@dataclass
class EndPoint(Record):
    """One eval set at the end of training, over the paired seeds."""

    loss: TInterval
    bpb: TInterval
    ppl_change: PplChange
    share_outside: float | None  # restricted softmax: the mean share of targets left out
    baseline_loss: float | None  # means over the seeds
    model_loss: float | None


@dataclass
class GapCurve(Record):
    """The mean gap (model - baseline validation loss) and its pointwise interval at the shared validation points."""

    tokens: list[int]
    mean: list[float | None]
    lo: list[float | None]
    hi: list[float | None]
    baseline_loss: list[float]  # the baselines' mean
    past_plateau_tokens: int | None  # first point where every seed's baseline is PLATEAU_MARGIN below the plateau


@dataclass
class GapTrend(Record):
    """The gap's least-squares slope per seed over the end of training (nats per million tokens), and over seeds."""

    from_tokens: int | None
    points: int
    slopes: list[float | None]
    end_gaps: list[float]
    slope: TInterval


@dataclass
class PairedEfficiency(Record):
    """Per seed the sample-efficiency factor (None: not reached or no curve); their geometric mean and interval."""

    factors: list[float | None]
    status: list[str]  # reached | not reached | no curve
    n: int
    reached: int
    geo_mean: float | None
    ci: list[float] | None


@dataclass
class BucketDiff(TInterval):
    """The paired loss difference in one training-frequency bucket, with its perplexity change and interval."""

    ppl_change: float | None = None
    ppl_change_ci: list[float] | None = None


@dataclass
class PairedComparison(Record):
    """A model variant against a baseline variant at one size, over the seeds both ran."""

    regime: str
    size: str
    baseline_size: str | None  # the size whose baseline runs were borrowed (same backbone), or None
    model: str
    baseline: str
    seeds: list[int]
    model_runs: list[str]
    baseline_runs: list[str]
    model_params: int | None
    baseline_params: int | None
    eval: dict[str, EndPoint]
    curve: GapCurve
    trend: GapTrend
    efficiency: PairedEfficiency
    buckets: list[BucketDiff]
    ci: float
    plateau: float | None


def _real(x) -> bool:
    """Whether ``x`` is a real number (a numpy float too), not a bool or a text."""
    import numbers

    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def t_interval(diffs: Iterable[float], ci: float = 0.95) -> TInterval:
    """Mean, sample sd and the Student t interval of paired differences; the verdict on their sign. None is a pair
    without a difference (a metric one run lacks) and is left out; a NaN or an infinity is refused
    (``_diffs_problem``)."""
    from scipy import stats

    from ...value_rules import api_check

    diffs = list(diffs)
    api_check("t_interval", "diffs", _diffs_problem(diffs), "pass the paired differences as finite numbers, None "
              "for a pair without one, e.g. [-0.21, None, -0.2]")
    check_ci("t_interval", ci)
    d = np.array([x for x in diffs if x is not None], dtype=np.float64)
    if len(d) < 2:
        return TInterval(d.tolist(), int(len(d)), float(d.mean()) if len(d) else None,
                         verdict="no pairs" if not len(d) else "one seed")
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(stats.t.ppf(0.5 + ci / 2, len(d) - 1)) * sd / math.sqrt(len(d))
    lo, hi = mean - half, mean + half
    return TInterval(d.tolist(), int(len(d)), mean, sd, [lo, hi],
                     "better" if hi < 0 else "worse" if lo > 0 else "not resolved")


def check_ci(api: str, ci) -> None:
    """UserError ``API: ci: ...`` unless ``ci`` is an interval's coverage in (0, 1): ``paired_comparisons(rows,
    ci=2.0)`` was taken without a word where no interval was drawn (one seed, no pairs), and refused by name only as
    ``t_interval``'s elsewhere (issue 30 round 18, G469; write_report refuses ci 2.0 by the same rule)."""
    from ...value_rules import api_check, fraction_problem

    api_check(api, "ci", fraction_problem(ci), "pass the interval's coverage, e.g. ci=0.95")


def check_plateau(api: str, plateau) -> None:
    """UserError unless ``plateau`` is None or a positive finite loss: a NaN plateau was taken as "never past it"
    without a word (issue 30 round 20, M234), as paired statistics refuse NaN since G213; a plateau of -1 nats, a
    loss no model has, too (round 24, W471)."""
    from ...value_rules import api_check, number_problem

    if plateau is not None:
        api_check(api, "plateau", number_problem(plateau, above=0.0, shown="a finite loss (nats) above 0"),
                  "pass the unigram plateau's loss (plateau.unigram_entropy), or None")


def check_from_frac(api: str, from_frac) -> None:
    """UserError unless ``from_frac`` lies in [0, 1): 1.5, a start past the end of training, gave a trend of 0
    points, "no pairs", without a word (issue 30 round 20, M233)."""
    from ...value_rules import api_check, number_problem

    problem = number_problem(from_frac, shown="a finite number")
    if problem is None and not 0 <= from_frac < 1:
        problem = f"must lie in [0, 1) (a fraction of the last shared point), got {from_frac!r}"
    api_check(api, "from_frac", problem, f"pass where the trend starts, e.g. from_frac={TREND_FROM:.4g}")


def _diffs_problem(diffs: list) -> str | None:
    """Why ``diffs`` are not paired differences: '1' was math's "must be real number, not str" (issue 30 round 18,
    G216), and a NaN was left out without a word, the interval drawn over the other seeds as if it had not been
    measured (G213: ``t_interval([1.0, nan, 2.0])`` gave n=2; the E322 kind: a diverged run's loss is no pair)."""
    for i, x in enumerate(diffs):
        if x is not None and not _real(x):
            return f"expected numbers (or None), got {x!r:.40} at diffs[{i}]"
        if x is not None and not math.isfinite(x):
            return (f"diffs[{i}] is {x!r}, not a finite difference (a diverged run's loss?); it is not left out "
                    f"silently: the interval would stand on the other seeds alone")
    return None


def _by_size(rows: list[ResultRow], regime: str) -> dict[str, dict[int, dict[str, ResultRow]]]:
    """{size: {seed: {variant: row}}} of the rows that serve ``regime``, smallest models first."""
    out: dict = {}
    for (size, seed), group in comparison_groups(rows, regime).items():
        out.setdefault(size, {})[seed] = group
    return out


def _pairs(regime: str, variants: set[str]) -> list[tuple[str, str]]:
    """(model, baseline) variant pairs of a regime that ran at a size, baseline pairs first."""
    base = baseline_of(regime)
    pairs = [(v, base) for v in sorted(variants) if v != base and base in variants]
    return pairs + [p for p in CONTROLS.get(regime, ()) if p[0] in variants and p[1] in variants]


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _ppl_change(stat: TInterval) -> PplChange:
    """exp(.) - 1 of a loss difference's mean and interval: the perplexity change (None where they are None)."""
    return PplChange(None if stat.mean is None else math.expm1(stat.mean),
                     None if stat.ci is None else [math.expm1(x) for x in stat.ci])


def _end_point(seeds: list[tuple[ResultRow, ResultRow]], eval_set: str, ci: float) -> EndPoint:
    """Loss, bits-per-byte and perplexity-change statistics of one eval set over the paired seeds."""
    loss, bpb = (t_interval([_diff(m.metric(eval_set, key), b.metric(eval_set, key)) for m, b in seeds], ci)
                 for key in ("loss", "bpb"))
    # a restricted softmax scores text from elsewhere on the targets inside its id set: the share left out
    return EndPoint(loss, bpb, _ppl_change(loss),
                    share_outside=mean_known([r.metric(eval_set, "share_outside") for pair in seeds for r in pair]),
                    baseline_loss=mean_known([b.metric(eval_set, "loss") for _, b in seeds]),
                    model_loss=mean_known([m.metric(eval_set, "loss") for m, _ in seeds]))


def mean_known(xs: list) -> float | None:
    """The mean of the values that are not None (None when none is); a value that is not a number is refused
    (``['1', 2.0]`` ended in numpy's "resolved dtypes are not compatible with add.reduce", issue 30 round 19,
    J289)."""
    from ...value_rules import api_check

    xs = [x for x in xs if x is not None]
    wrong = next((x for x in xs if not _real(x)), None)
    api_check("mean_known", "xs", None if wrong is None else f"expected numbers (or None), got "
              f"{type(wrong).__name__} {wrong!r:.40}", "pass the values as numbers, e.g. [1.0, 2.0]")
    return float(np.mean(xs)) if xs else None


def val_points(row: ResultRow) -> dict:
    """{training tokens: validation loss} of the curve a row keeps ({} without one)."""
    return {} if row.curve is None else dict(zip(row.curve.tokens, row.curve.val_loss))


def _shared_points(seeds: list[tuple[ResultRow, ResultRow]]) -> tuple[list[dict], list[dict], list]:
    """({tokens: loss} per model run, per baseline run, the token counts every one of them has, sorted)."""
    model = [val_points(m) for m, _ in seeds]
    base = [val_points(b) for _, b in seeds]
    shared = sorted(set.intersection(*(set(p) for p in model + base))) if seeds else []
    return model, base, shared


def gap_curve(seeds: list[tuple[ResultRow, ResultRow]], ci: float = 0.95, plateau: float | None = None) -> GapCurve:
    """Mean gap (model - baseline validation loss) and its t interval at every validation point all seeds share."""
    check_plateau("gap_curve", plateau)
    model, base, shared = _shared_points(seeds)
    stats_at = [t_interval([m[t] - b[t] for m, b in zip(model, base)], ci) for t in shared]
    base_max = [max(b[t] for b in base) for t in shared]  # the slowest seed's baseline
    past = None
    if plateau is not None:
        past = next((t for t, v in zip(shared, base_max) if v < plateau - PLATEAU_MARGIN), None)
    return GapCurve(tokens=[int(t) for t in shared], mean=[s.mean for s in stats_at],
                    lo=[s.ci[0] if s.ci else None for s in stats_at], hi=[s.ci[1] if s.ci else None for s in stats_at],
                    baseline_loss=[float(np.mean([b[t] for b in base])) for t in shared], past_plateau_tokens=past)


TREND_FROM = 2 / 3  # the gap's trend is fitted over the last third of training


def gap_trend(seeds: list[tuple[ResultRow, ResultRow]], ci: float = 0.95, from_frac: float = TREND_FROM) -> GapTrend:
    """Whether the gap still moves at the end of training: per seed, the least-squares slope of the gap against tokens
    over the curve points from ``from_frac`` of the last shared point on, in nats per million tokens; over seeds its t
    interval. With the model ahead (a negative gap) a negative slope means the lead grows. Footgun: near the end of a
    cosine schedule the lr is at its floor, so a flat stretch there is the schedule as much as the models."""
    check_from_frac("gap_trend", from_frac)
    model, base, shared = _shared_points(seeds)
    if len(shared) < 3:
        return GapTrend(from_tokens=None, points=0, slopes=[], end_gaps=[], slope=t_interval([], ci))
    start = from_frac * shared[-1]
    ts = [t for t in shared if t >= start]
    slopes, ends = [], []
    for m, b in zip(model, base):
        gaps = [m[t] - b[t] for t in ts]
        slopes.append(least_squares_slope([t / 1e6 for t in ts], gaps) if len(ts) >= 2 else None)
        ends.append(float(gaps[-1]))
    return GapTrend(from_tokens=int(ts[0]), points=len(ts), slopes=slopes, end_gaps=ends, slope=t_interval(slopes, ci))


def least_squares_slope(xs: list[float], ys: list[float], api: str = "least_squares_slope") -> float:
    """The slope of the least-squares line through (xs, ys), in closed form over correctly rounded sums
    (``math.fsum``): the same bits on every machine, where ``np.polyfit`` (LAPACK) changed the last digits of
    analysis.json between two CPUs. ``api``: the caller's name in the refusal (``width.gap_slope`` is this slope:
    its numpy twin returned nan for equal x and a broadcast error for unequal lengths, issue 30 round 19, J281,
    J282)."""
    from ...value_rules import api_check

    xs, ys = list(xs), list(ys)
    wrong = [v for v in xs + ys if not _real(v)]  # not next(..., None): a None was "none wrong" (round 33, AE189's kind)
    api_check(api, "xs, ys", None if not wrong else f"expected numbers, got {type(wrong[0]).__name__} "
              f"{wrong[0]!r:.40}", "pass the points' coordinates as numbers")
    problem = (f"expected as many numbers as ys ({len(ys)}), at least 2, got {len(xs)}" if len(xs) != len(ys)
               or len(xs) < 2 else "are all equal, so no line has a slope through them (a ZeroDivisionError before, "
               "issue 30 round 18, G217)" if len(set(xs)) < 2 else None)
    api_check(api, "xs", problem, "pass at least two points with different x")
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.fsum((x - mx) ** 2 for x in xs)


def paired_efficiency(seeds: list[tuple[ResultRow, ResultRow]], ci: float = 0.95) -> PairedEfficiency:
    """Sample efficiency over seeds: per seed the factor baseline tokens / the tokens the model needs to reach the
    baseline's final validation loss (``efficiency.sample_efficiency``); the geometric mean of the factors of the
    seeds that reach it, with the t interval of their logarithms. A seed that does not reach it counts in ``n``
    but not in ``reached``: the mean is then over the others and says so."""
    from ...errors import UserError
    from .efficiency import row_curve, sample_efficiency

    factors, status = [], []
    for m, b in seeds:
        try:
            factors.append(sample_efficiency(row_curve(m), row_curve(b)).factor)
            status.append("not reached" if factors[-1] is None else "reached")
        except (UserError, OSError):  # no validation curve for one of the two runs
            factors.append(None)
            status.append("no curve")
    logs = t_interval([math.log(f) for f in factors if f], ci)
    return PairedEfficiency(factors=factors, status=status, n=len(factors), reached=logs.n,
                            geo_mean=None if logs.mean is None else math.exp(logs.mean),
                            ci=None if logs.ci is None else [math.exp(x) for x in logs.ci])


def paired_buckets(seeds: list[tuple[ResultRow, ResultRow]], eval_set: str = "val",
                   ci: float = 0.95) -> list[BucketDiff]:
    """Per training-frequency bucket (rarest first), the paired loss difference over seeds with its interval and the
    perplexity change exp(mean) - 1; [] when a run has no buckets for ``eval_set``, UserError when no row was
    evaluated on it (a typo)."""
    # eval_set='nope' returned [] as for rows without buckets (issue 30 round 20, M235)
    check_eval_set_held("paired_buckets", [r for pair in seeds for r in pair], eval_set)
    return _bucket_diffs(seeds, eval_set, ci)


def _bucket_diffs(seeds: list[tuple[ResultRow, ResultRow]], eval_set: str, ci: float) -> list[BucketDiff]:
    """``paired_buckets`` after its checks (a comparison's own call: rows without "val" have no buckets, [])."""
    losses = []
    for m, b in seeds:
        bm, bb = m.buckets.get(eval_set), b.buckets.get(eval_set)
        if bm is None or bb is None or len(bm.loss) != len(bb.loss):
            return []
        losses.append([_diff(x, y) for x, y in zip(bm.loss, bb.loss)])
    out = []
    for diffs in zip(*losses):
        st = t_interval(diffs, ci)
        ppl = _ppl_change(st)
        out.append(BucketDiff(**vars(st), ppl_change=ppl.mean, ppl_change_ci=ppl.ci))
    return out


def _check_arms_held(rows: list[ResultRow], **arms: tuple) -> None:
    """UserError naming an arm (size, variant) no row holds: ``paired_of`` returned None, documented as "no seed has
    both", for a typo or for the tuple given the other way round (variant, size) (issue 30 round 20, M239)."""
    from ...value_rules import api_check

    held = sorted({(str(r.size), r.variant) for r in rows})
    for name, arm in arms.items():
        ok = isinstance(arm, tuple) and len(arm) == 2 and tuple(map(str, arm)) in held
        turned = isinstance(arm, tuple) and len(arm) == 2 and tuple(map(str, arm[::-1])) in held
        api_check("paired_of", name, None if ok else f"no row is the arm {arm!r:.60}" + (
            " (given as (variant, size)?)" if turned else ""), "pass (size, variant), one of " + ", ".join(
            f"({s!r}, {v!r})" for s, v in held[:12]))


def _backbone(by_seed: dict[int, dict[str, ResultRow]]) -> tuple:
    r = next(iter(next(iter(by_seed.values())).values()))
    return (r.hidden_size, r.num_hidden_layers, r.intermediate_size)


def _with_donor(size: str, by_size: dict, regime: str) -> tuple[dict, set[str], str | None]:
    """A size without the regime's baseline (an arm that changes only the generator, say) borrows the runs of a
    size with the same backbone that has it: ({seed: {variant: row}} merged, the size's own variants, donor)."""
    by_seed = by_size[size]
    own = {v for group in by_seed.values() for v in group}
    base = baseline_of(regime)
    if regime != "iso_body" or base in own:
        return by_seed, own, None
    donor = next((d for d, g in by_size.items() if d != size and _backbone(g) == _backbone(by_seed)
                  and any(base in group for group in g.values())), None)
    if donor is None:
        return by_seed, own, None
    merged = {seed: {**{v: r for v, r in by_size[donor].get(seed, {}).items() if v not in own}, **group}
              for seed, group in by_seed.items()}
    return merged, own, donor


def paired_comparisons(rows: Iterable[ResultRow], ci: float = 0.95, plateau: float | None = None,
                       eval_sets: list[str] | None = None) -> list[PairedComparison]:
    """Every (regime, size, model, baseline) comparison with its per-seed pairs, end-point statistics per eval
    set and gap curve (see the module docstring). ``baseline_size`` names the size whose baseline runs were
    borrowed (same backbone), or is None."""
    check_ci("paired_comparisons", ci)
    check_plateau("paired_comparisons", plateau)
    # as read_results holds them (round 17, E322-E324), evaluated alike (round 23, U416)
    rows = check_typed_rows(rows, "paired_comparisons", one_per_arm=True, compared=True)
    _check_eval_sets(rows, eval_sets)
    out = []
    for regime in BASELINES:
        by_size = _by_size(rows, regime)
        for size in by_size:
            by_seed, own, donor = _with_donor(size, by_size, regime)
            variants = {v for group in by_seed.values() for v in group}
            for model, base in _pairs(regime, variants):
                if model not in own:
                    continue  # the donor's own comparisons are listed under the donor
                seeds = sorted(s for s, g in by_seed.items() if model in g and base in g)
                pairs = [(by_seed[s][model], by_seed[s][base]) for s in seeds]
                if pairs:
                    lender = donor if base not in own else None  # a baseline of the size's own is not borrowed
                    out.append(_comparison(_Arms(regime, size, lender, model, base), pairs, ci, plateau, eval_sets))
    return out


def paired_of(rows: Iterable[ResultRow], model: tuple[str, str], baseline: tuple[str, str], regime: str,
              ci: float = 0.95, plateau: float | None = None) -> PairedComparison | None:
    """One comparison between two arms named (size, variant), whatever their sizes, paired by seed (None: no seed
    has both). For rounds whose arms differ in more than the variant (a generator option against a table option)."""
    check_ci("paired_of", ci)
    check_plateau("paired_of", plateau)
    rows = check_typed_rows(rows, "paired_of", one_per_arm=True, compared=True)
    _check_arms_held(rows, model=model, baseline=baseline)
    by = {(str(r.size), r.variant, r.seed): r for r in rows}
    seeds = sorted({r.seed for r in rows if (str(r.size), r.variant, r.seed) in by
                    and (model[0], model[1], r.seed) in by and (baseline[0], baseline[1], r.seed) in by})
    if not seeds:
        return None
    pairs = [(by[(model[0], model[1], s)], by[(baseline[0], baseline[1], s)]) for s in seeds]
    donor = baseline[0] if baseline[0] != model[0] else None
    return _comparison(_Arms(regime, model[0], donor, model[1], baseline[1]), pairs, ci, plateau, None)


def _check_eval_sets(rows: list[ResultRow], eval_sets) -> None:
    """UserError unless ``eval_sets`` is None or a list of eval sets the rows hold (``check_eval_set_held``, as
    ``analyze`` holds its eval_set): a set no row holds gave comparisons of n=0 and a text was iterated letter by
    letter, 'v', 'a', 'l', without a word (issue 30 round 24, W472, W473); [] was read as None (round 25, Y450)."""
    from ...value_rules import api_check, eval_set_problem

    if eval_sets is None:
        return
    held = sorted({s for r in rows for s in r.eval})
    fix = f"pass a list of the sets the rows hold ({', '.join(held) or 'none'}), or None for those both arms hold"
    if not isinstance(eval_sets, (list, tuple)):
        api_check("paired_comparisons", "eval_sets", f"expected a list of eval set names, got {eval_sets!r:.60}", fix)
    if not eval_sets:  # [] was read as None, "every set" (round 25, Y450; SweepOptions(only=[]) refuses it, Y479)
        api_check("paired_comparisons", "eval_sets", "is an empty list: no eval set to compare on", fix)
    for name in eval_sets:
        problem = eval_set_problem(name)
        if problem is None and held and name not in held:
            problem = f"no row was evaluated on {name!r:.40}"
        api_check("paired_comparisons", "eval_sets", problem, fix)


@dataclass(frozen=True)
class _Arms:
    """Which two arms a comparison pairs: the regime, the model's size and variant, the baseline's variant and the
    size it was borrowed from (None: the model's own)."""

    regime: str
    size: str
    baseline_size: str | None
    model: str
    baseline: str


def _comparison(arms: _Arms, pairs: list[tuple[ResultRow, ResultRow]], ci: float, plateau: float | None,
                eval_sets: list[str] | None) -> PairedComparison:
    """The comparison of ``arms`` over ``pairs`` (model row, baseline row), one pair per seed in seed order."""
    sets = eval_sets or sorted(set(pairs[0][0].eval) & set(pairs[0][1].eval))
    return PairedComparison(
        regime=arms.regime, size=arms.size, baseline_size=arms.baseline_size, model=arms.model, baseline=arms.baseline,
        seeds=[m.seed for m, _ in pairs],
        model_runs=[m.name for m, _ in pairs], baseline_runs=[b.name for _, b in pairs],
        model_params=pairs[0][0].total_params, baseline_params=pairs[0][1].total_params,
        eval={s: _end_point(pairs, s, ci) for s in sets}, curve=gap_curve(pairs, ci, plateau),
        trend=gap_trend(pairs, ci), efficiency=paired_efficiency(pairs, ci), buckets=_bucket_diffs(pairs, "val", ci),
        ci=ci, plateau=plateau)
