"""The width panel (results/o200k-width/PLAN.md, issue 33): does the generator's gap to the untied table move as the
body grows? Pure functions over result rows.

    panel = width_panel(rows)          # WidthPanel, or None when fewer than two body sizes have a paired seed
    panel.points[0].gap                # TInterval: generator - untied final validation loss at the smallest body
    panel.slope.slope                  # TInterval over seeds: the gap's slope against ln(body parameters)

A point is one body size: the iso-body rows (docs/DESIGN.md §4) whose ``params.body`` is equal (the width round
changes the width at a fixed depth; at the paper's sizes depth changes too, and the body count covers both). At
each point the generator (``leviathan``) and the untied table (``dense_untied``) are paired by seed as everywhere
(``paired``): d_{w,s} = L(generator, w, s) - L(untied, w, s). The tied table (``dense_tied``) is a descriptive
point, usually one seed: its gap is given, never tested.

The primary statistic (fixed in the plan before the runs): for each seed s with a pair at every point, the
least-squares slope b_s of d_{w,s} against x_w = ln(body parameters at w); over those seeds the mean of b_s with
its Student t interval (df = seeds - 1), in nats per e-fold of body parameters (``per_doubling``: times ln 2). Per
seed, not a regression over all points, because the widths of one seed share its data order (not independent);
the seeds are. With every seed complete the mean of the b_s is also the slope through the per-width mean gaps.

Direction. The paper (60M-1.2B parameters, o200k, against dense tables) reports the generator's advantage growing
with scale: here a gap that falls as the body grows, a negative slope, whether the gap is a deficit that shrinks or
a lead that widens. The verdict reads the interval: ``falls`` (upper end below 0: the paper's direction), ``rises``
(lower end above 0), ``not resolved``; ``one seed`` / ``no pairs`` as in ``paired.t_interval``. Footgun: three
widths over a 4-16x range of body parameters is a trend, not a scaling law; a slope says nothing about where the
gap crosses 0, and the plan says so before reading it.

A body with generator rows from two sizes (a reference and an option arm at one width, as in a fair-shot round) is
left out with a note: which generator the panel means is a choice the caller makes (``generator_sizes``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from .paired import (BucketDiff, GapTrend, TInterval, check_ci, gap_trend, least_squares_slope, mean_known,
                     paired_buckets, t_interval)
from .records import Record
from ..machinery.results import ResultRow, check_eval_set_held, check_typed_rows

GENERATOR, TABLE, TIED = "leviathan", "dense_untied", "dense_tied"
PAPER_DIRECTION = ("the paper (60M-1.2B parameters, o200k, against dense tables) reports the generator's advantage "
                   "growing with scale: here, a gap that falls as the body grows (a negative slope)")
VERDICTS = {"better": "falls", "worse": "rises"}  # t_interval's verdict on a slope, in this panel's words


@dataclass
class WidthPoint(Record):
    """One body size: the generator - untied gap over the paired seeds, and its secondaries."""

    body_params: int
    hidden_size: int | None
    num_hidden_layers: int | None
    generator_size: str
    table_size: str
    seeds: list[int]
    per_seed: list[float | None]  # d_s for each of ``seeds`` (None: a loss missing or not finite)
    generator_loss: float | None  # means over the paired seeds
    table_loss: float | None
    gap: TInterval  # generator - untied, final eval-set loss
    tied_gap: TInterval  # generator - tied, over the seeds the tied table ran (descriptive)
    trend: GapTrend  # the gap's slope over the last third of training (nats per million tokens)
    buckets: list[BucketDiff]  # per training-frequency bucket, rarest first


@dataclass
class WidthSlope(Record):
    """The primary statistic: per seed the least-squares slope of the gap against ln(body parameters)."""

    body_params: list[int]  # the points it is fitted over
    seeds: list[int]  # seeds with a pair at every point
    seeds_left_out: list[int]  # seeds missing a pair at some point
    per_seed: list[float]  # nats per e-fold of body parameters
    slope: TInterval  # over seeds; its verdict is t_interval's (better: < 0)
    direction: str  # falls | rises | not resolved | one seed | no pairs
    per_doubling: list[float] | None  # [mean, lo, hi] x ln 2 (None without an interval)


@dataclass
class WidthPanel(Record):
    eval_set: str
    generator: str
    table: str
    tied: str
    ci: float
    points: list[WidthPoint]  # smallest body first
    slope: WidthSlope
    paper_direction: str = PAPER_DIRECTION
    notes: list[str] = field(default_factory=list)


def gap_slope(xs: list[float], gaps: list[float]) -> float:
    """Least-squares slope of ``gaps`` against ``xs`` (at least two distinct x, as many gaps): ``paired``'s
    ``least_squares_slope``, whose refusals this shares (its numpy twin here returned nan for equal x and a broadcast
    ValueError for unequal lengths, issue 30 round 19, J281, J282)."""
    return least_squares_slope(xs, gaps, api="gap_slope")


def _arm(rows: list[ResultRow], variant: str, sizes: set[str] | None) -> tuple[str | None, dict[int, ResultRow], str]:
    """(size, {seed: row}, note) of one variant's rows at one body; size None (and a note) when two sizes compete."""
    rows = [r for r in rows if r.variant == variant and (sizes is None or str(r.size) in sizes)]
    names = sorted({str(r.size) for r in rows})
    if len(names) > 1:
        return None, {}, f"{variant} rows of {len(names)} sizes ({', '.join(names)})"
    return (names[0] if names else None), {r.seed: r for r in rows}, ""


def _point(body: int, rows: list[ResultRow], variants: tuple[str, str, str], eval_set: str, ci: float,
           sizes: set[str] | None) -> tuple[WidthPoint | None, str]:
    gen_v, tab_v, tied_v = variants
    gen_size, gen, note_g = _arm(rows, gen_v, sizes)
    tab_size, tab, note_t = _arm(rows, tab_v, None)
    _, tied, _ = _arm(rows, tied_v, None)
    if note_g or note_t:
        return None, f"body {body:,} left out: " + "; ".join(n for n in (note_g, note_t) if n)
    seeds = sorted(s for s in gen if s in tab)
    if not seeds:
        return None, ""
    pairs = [(gen[s], tab[s]) for s in seeds]
    diffs = [_diff(m.loss(eval_set), b.loss(eval_set)) for m, b in pairs]
    tied_seeds = sorted(s for s in gen if s in tied)
    first = pairs[0][0]
    return WidthPoint(
        body_params=body, hidden_size=first.hidden_size, num_hidden_layers=first.num_hidden_layers,
        generator_size=str(gen_size), table_size=str(tab_size), seeds=seeds,
        per_seed=[d if d is not None and math.isfinite(d) else None for d in diffs],
        generator_loss=mean_known([m.loss(eval_set) for m, _ in pairs]),
        table_loss=mean_known([b.loss(eval_set) for _, b in pairs]),
        gap=t_interval(diffs, ci),
        tied_gap=t_interval([_diff(gen[s].loss(eval_set), tied[s].loss(eval_set)) for s in tied_seeds], ci),
        trend=gap_trend(pairs, ci), buckets=paired_buckets(pairs, eval_set, ci)), ""


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def width_slope(points: list[WidthPoint], ci: float = 0.95) -> WidthSlope:
    """The primary statistic over ``points`` (module docstring): per-seed slopes, their mean and t interval."""
    all_seeds = sorted({s for p in points for s in p.seeds})
    per_point = [dict(zip(p.seeds, p.per_seed)) for p in points]
    complete = [s for s in all_seeds if all(d.get(s) is not None for d in per_point)]
    xs = [math.log(p.body_params) for p in points]
    per_seed = [gap_slope(xs, [d[s] for d in per_point]) for s in complete] if len(points) >= 2 else []
    stat = t_interval(per_seed, ci)
    doubling = None if stat.ci is None else [math.log(2) * v for v in (stat.mean, *stat.ci)]
    return WidthSlope(body_params=[p.body_params for p in points], seeds=complete if per_seed else [],
                      seeds_left_out=[s for s in all_seeds if s not in complete], per_seed=per_seed, slope=stat,
                      direction=VERDICTS.get(stat.verdict, stat.verdict), per_doubling=doubling)


def width_panel(rows: Iterable[ResultRow], eval_set: str = "val", ci: float = 0.95, generator: str = GENERATOR,
                table: str = TABLE, tied: str = TIED, generator_sizes: Iterable[str] | None = None,
                regime: str = "iso_body") -> WidthPanel | None:
    """The panel over every body size with a paired seed of ``generator`` and ``table`` among the rows of
    ``regime``; None with fewer than two. ``generator_sizes``: the sizes whose ``generator`` rows count (default:
    all; a body with two is left out).

    Parameters: the rows and the panel's independent settings, keyword-defaulted.
    """
    check_ci("width_panel", ci)  # round 18 (G469): as paired_comparisons
    rows = check_typed_rows(rows, "width_panel", compared=True)  # as read_results holds them (round 17, E322)
    check_eval_set_held("width_panel", rows, eval_set)
    by_body: dict[int, list[ResultRow]] = {}
    for r in rows:
        if r.in_regime(regime) and r.params is not None and r.params.body and r.variant in (generator, table, tied):
            by_body.setdefault(int(r.params.body), []).append(r)
    sizes = None if generator_sizes is None else {str(s) for s in generator_sizes}
    points, notes = [], []
    for body in sorted(by_body):
        point, note = _point(body, by_body[body], (generator, table, tied), eval_set, ci, sizes)
        if point is not None:
            points.append(point)
        if note:
            notes.append(note)
    if len(points) < 2:
        return None
    return WidthPanel(eval_set=eval_set, generator=generator, table=table, tied=tied, ci=ci, points=points,
                      slope=width_slope(points, ci), notes=notes)
