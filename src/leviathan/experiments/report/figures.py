"""The figures of a sweep report (docs/DESIGN.md §7), drawn from result rows and the report's numbers.

One ``fig_*`` per PNG, named by ``Drawn``'s fields: validation loss curves per regime (each run's metrics.jsonl;
an unreadable one is left out), the parameter-loss frontier (the dense ladder, the fit with its bootstrap band,
every other run at its own count), perplexity reduction by size, parameters by group per model, reduction per
training-frequency bucket, gain over training, the paired gap over training (mean over seeds, pointwise t interval,
where the baseline leaves the unigram plateau) and the width panel (the generator - untied gap against body
parameters, its seeds, the mean per-seed slope and the paper's reported direction). Each returns whether it drew
anything (``experiments.plots``: the Agg backend, 120-dpi PNGs); ``draw_figures`` draws them all (``Drawn``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import UserError
from ...value_rules import level_percent
from ..method.efficiency import EfficiencyEntry, row_curve
from ..method.frequency import FrequencyEntry
from ..method.paired import PairedComparison
from ..plots import pyplot, save_figure
from ..machinery.results import BASELINES, COMPARISONS, ResultRow
from ..method.scaling import PowerLawFit, power_law
from ..method.width import WidthPanel
from .analysis import Analysis, ComparisonEntry, ParamRow


VARIANT_COLORS = {"dense_tied": "#1f77b4", "dense_untied": "#7f7f7f", "leviathan": "#d62728",
                  "factorized": "#2ca02c", "compositional": "#9467bd"}
DENSE = frozenset(BASELINES.values())  # drawn dashed


def _color(variant: str) -> str:
    return VARIANT_COLORS.get(variant, "#000000")


def fig_loss_curves(rows: list[ResultRow], path: Path) -> bool:
    plt = pyplot()
    regimes = [g for g, _ in COMPARISONS if any(g in r.regimes for r in rows)] or ["all"]
    fig, axes = plt.subplots(1, len(regimes), figsize=(6 * len(regimes), 4.2), squeeze=False)
    drawn = False
    # shade by size within a variant: small models light, large models dark
    totals = sorted({r.total_params or 0 for r in rows})
    shade = {t: 0.35 + 0.65 * (i + 1) / len(totals) for i, t in enumerate(totals)}
    for ax, regime in zip(axes[0], regimes):
        for r in rows:
            if regime != "all" and regime not in r.regimes:
                continue
            try:
                c = row_curve(r)
            except (UserError, OSError):
                continue
            ax.plot(c.tokens, c.loss, color=_color(r.variant), alpha=shade[r.total_params or 0], lw=1.4,
                    ls="--" if r.variant in DENSE else "-", label=r.name)
            drawn = True
        ax.set_title(regime.replace("_", "-"))
        ax.set_xlabel("training tokens")
        ax.set_ylabel("validation loss (nats)")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=6, ncol=1 if len(ax.lines) < 10 else 2)
    return _saved_if_drawn(plt, fig, path, drawn)


def fig_frontier(rows: list[ResultRow], fit: PowerLawFit | None, ladder: str | None, eval_set: str,
                 path: Path) -> bool:
    """Every run's loss against its total parameters; the ``ladder`` variant's fit ``fit`` with its band."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    drawn = False
    for r in rows:
        L = r.loss(eval_set)
        if L is None or not r.params:
            continue
        on_ladder = fit is not None and r.variant == ladder
        ax.scatter(r.params.total, L, color=_color(r.variant), marker="o" if on_ladder else "^", s=36,
                   zorder=3, label=r.variant + (" (ladder)" if on_ladder else ""))
        drawn = True
    if fit is not None:
        lo = min(fit.N_min, min(r.params.total for r in rows if r.params)) / 1.3
        hi = max(fit.N_max, max(r.params.total for r in rows if r.params)) * 1.3
        N = np.geomspace(lo, hi, 200)
        ax.plot(N, fit.predict(N), color="k", lw=1.2,
                label=f"fit E={fit.E:.3f} A={fit.A:.3g} alpha={fit.alpha:.3f}")
        if fit.draws is not None and len(fit.draws):
            curves = power_law(N[None, :], fit.draws[:, :1], fit.draws[:, 1:2], fit.draws[:, 2:3])
            q = (1 - fit.ci) / 2
            ax.fill_between(N, np.quantile(curves, q, axis=0), np.quantile(curves, 1 - q, axis=0), color="k",
                            alpha=0.12, label=f"{level_percent(fit.ci)}% bootstrap band")
    ax.set_xscale("log")
    ax.set_xlabel("parameters (total)")
    ax.set_ylabel(f"{eval_set} loss (nats)")
    ax.grid(alpha=0.3, which="both")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=7)
    return _saved_if_drawn(plt, fig, path, drawn)


def _saved_if_drawn(plt, fig, path: Path, drawn: bool) -> bool:
    """Write ``fig`` at ``path`` when something was ``drawn``, else free it and write nothing: a figure that returns
    "nothing drawn" (False) wrote an empty PNG at the path all the same (``fig_loss_curves([], path)``, issue 30 round
    25, Y639), where its siblings return False before writing (``fig_param_allocation([])``)."""
    if not drawn:
        plt.close(fig)
        return False
    save_figure(fig, path)
    return True


def fig_reduction_by_size(comparisons: dict[str, list[ComparisonEntry]], path: Path) -> bool:
    plt = pyplot()
    entries = [e for regime in ("iso_body", "isoparametric") for e in comparisons[regime] if e.reduction is not None]
    if not entries:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    keys = sorted({(e.regime, e.variant) for e in entries})
    for regime, variant in keys:
        pts: dict[float, list[float]] = {}
        for e in entries:
            if (e.regime, e.variant) == (regime, variant) and e.baseline_params:
                pts.setdefault(e.baseline_params, []).append(100 * e.reduction)
        xs = sorted(pts)
        ax.plot(xs, [np.mean(pts[x]) for x in xs], marker="o" if regime == "iso_body" else "s",
                color=_color(variant), ls="-" if regime == "iso_body" else "--",
                label=f"{variant} vs {BASELINES[regime]} ({regime.replace('_', '-')})")
        for x in xs:
            if len(pts[x]) > 1:
                ax.errorbar(x, np.mean(pts[x]), yerr=np.std(pts[x]), color=_color(variant), capsize=3)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("baseline parameters (total)")
    ax.set_ylabel("perplexity reduction (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    save_figure(fig, path)
    return True


def fig_param_allocation(params: list[ParamRow], path: Path) -> bool:
    plt = pyplot()
    if not params:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(params) + 2), 4.5))
    x = np.arange(len(params))
    inp = np.array([p.input for p in params], dtype=float)
    body = np.array([p.body for p in params], dtype=float)
    head = np.array([p.head for p in params], dtype=float)
    tied = np.array([bool(p.tied) for p in params])
    ax.bar(x[~tied], inp[~tied], label="input side", color="#ff7f0e")
    if tied.any():
        ax.bar(x[tied], inp[tied], label="input side = head (tied)", color="#ff7f0e", hatch="//", edgecolor="#7f7f7f")
    ax.bar(x, body, bottom=inp, label="body", color="#1f77b4")
    ax.bar(x, head, bottom=inp + body, label="head", color="#7f7f7f")
    ax.set_xticks(x)
    ax.set_xticklabels([p.model for p in params], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("parameters")
    ax.set_yscale("log" if (inp + body + head).max() / max((inp + body + head).min(), 1) > 50 else "linear")
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return True


def fig_frequency(freq: list[FrequencyEntry], path: Path) -> bool:
    plt = pyplot()
    if not freq:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for f in freq:
        red = [None if v is None else 100 * v for v in f.reduction]
        xs = [i for i, v in enumerate(red) if v is not None]
        ax.plot(xs, [red[i] for i in xs], marker="o", color=_color(f.variant),
                alpha=0.5 + 0.5 / max(1, len(freq)), label=f"{f.variant} {f.size} s{f.seed} ({f.regime})")
    ax.axhline(0, color="k", lw=0.8)
    n = len(freq[0].reduction)
    ranges = freq[0].scheme.ranges
    if ranges:
        ax.set_xticks(range(n))
        ax.set_xticklabels([f"{lo:,}-{hi:,}" for lo, hi in ranges], rotation=30, fontsize=7)
    ax.set_xlabel("training-frequency bucket (count per token id; rare -> frequent)")
    ax.set_ylabel("perplexity reduction (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    save_figure(fig, path)
    return True


def fig_gain_over_training(eff: list[EfficiencyEntry], path: Path) -> bool:
    plt = pyplot()
    entries = [e for e in eff if e.gain_over_training and e.gain_over_training.tokens]
    if not entries:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for e in entries:
        g = e.gain_over_training
        ax.plot(g.tokens, [100 * v for v in g.reduction], color=_color(e.variant),
                ls="-" if e.regime == "iso_body" else "--", label=f"{e.name} vs {e.baseline_name}")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("training tokens")
    ax.set_ylabel("perplexity reduction vs baseline (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    save_figure(fig, path)
    return True


def fig_paired_gap(paired: list[PairedComparison], path: Path) -> bool:
    """One panel per paired comparison: mean gap over training with its interval band (``experiments.method.paired``)."""
    items = [c for c in paired if len(c.curve.tokens) > 1]
    if not items:
        return False
    plt = pyplot()
    cols = min(3, len(items))
    nrows = -(-len(items) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax, c in zip(axes.flat, items):
        cur = c.curve
        t = np.array(cur.tokens, dtype=float) / 1e6
        ax.plot(t, cur.mean, color=_color(c.model), lw=1.6, label=f"mean over {len(c.seeds)} seed(s)")
        if all(v is not None for v in cur.lo):
            ax.fill_between(t, cur.lo, cur.hi, color=_color(c.model), alpha=0.2, label=f"{level_percent(c.ci)}% t interval")
        ax.axhline(0, color="black", lw=0.8)
        if cur.past_plateau_tokens is not None:
            ax.axvline(cur.past_plateau_tokens / 1e6, color="gray", ls=":", lw=1, label="baseline 0.5 nats below unigram")
        ax.set_title(f"{c.regime} {c.size}: {c.model} - {c.baseline}", fontsize=9)
        ax.set_xlabel("training tokens (M)")
        ax.set_ylabel("validation loss gap (nats)")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(items):]:
        ax.set_visible(False)
    save_figure(fig, path)
    return True


def fig_width_gap(panel: WidthPanel | None, path: Path) -> bool:
    """The width panel: the gap per body size (mean, t interval, each seed), the mean slope, the paper's direction."""
    if panel is None:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    x = np.array([p.body_params for p in panel.points], dtype=float)
    mean = np.array([np.nan if p.gap.mean is None else p.gap.mean for p in panel.points])
    lo = np.array([m if p.gap.ci is None else p.gap.ci[0] for p, m in zip(panel.points, mean)])
    hi = np.array([m if p.gap.ci is None else p.gap.ci[1] for p, m in zip(panel.points, mean)])
    color = _color(panel.generator)
    for p in panel.points:
        seeds = [d for d in p.per_seed if d is not None]
        ax.scatter([p.body_params] * len(seeds), seeds, color=color, s=10, alpha=0.45, zorder=2)
    ax.errorbar(x, mean, yerr=[mean - lo, hi - mean], fmt="o", color=color, capsize=4, zorder=3,
                label=f"{panel.generator} - {panel.table}: mean over seeds, {level_percent(panel.ci)}% t interval")
    for p, m in zip(panel.points, mean):
        ax.annotate(f"d {p.hidden_size}" if p.hidden_size else "", (p.body_params, m), textcoords="offset points",
                    xytext=(6, 6), fontsize=8)
    st = panel.slope
    if st.slope.mean is not None:
        lx = np.log(x)
        ax.plot(x, np.nanmean(mean) + st.slope.mean * (lx - lx.mean()), color=color, ls="--", lw=1,
                label=f"mean per-seed slope {st.slope.mean:+.4f} per e-fold ({st.direction})")
    # the paper's direction (a sign, not a magnitude): a short arrow in the corner, in axes coordinates
    ax.annotate("", xy=(0.97, 0.80), xytext=(0.87, 0.95), xycoords="axes fraction",
                arrowprops=dict(arrowstyle="->", color="gray", lw=1.4))
    ax.text(0.85, 0.95, "paper's reported direction:\nthe generator's advantage\ngrows with scale", fontsize=7,
            color="gray", ha="right", va="top", transform=ax.transAxes)
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.margins(x=0.15)
    ax.set_xlabel("body parameters (log scale)")
    ax.set_ylabel(f"final {panel.eval_set} loss gap (nats)")
    ax.set_title(f"{panel.generator} - {panel.table} against the body's size (> 0: the generator is behind)",
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    save_figure(fig, path)
    return True


@dataclass
class Drawn:
    """Which figures of a report were drawn (a figure without data is not, and the report says so)."""

    loss_curves: bool
    frontier: bool
    reduction_by_size: bool
    param_allocation: bool
    frequency_reduction: bool
    gain_over_training: bool
    paired_gap: bool
    width_gap: bool


def draw_figures(rows: list[ResultRow], a: Analysis, out: Path) -> Drawn:
    """Every figure of the report into ``out`` (``<name>.png``, the names of ``Drawn``'s fields). A figure this
    report does not draw is not written (``FIGURE_NAMES``: the earlier report's is removed when this one is put in
    place)."""
    ladder = a.ladder
    drawn = Drawn(
        loss_curves=fig_loss_curves(rows, out / "loss_curves.png"),
        frontier=a.scaling is not None and fig_frontier(rows, ladder and ladder.fit, ladder and ladder.variant,
                                                        a.eval_set, out / "frontier.png"),
        reduction_by_size=fig_reduction_by_size(a.comparisons, out / "reduction_by_size.png"),
        param_allocation=fig_param_allocation(a.params, out / "param_allocation.png"),
        frequency_reduction=fig_frequency(a.frequency, out / "frequency_reduction.png"),
        gain_over_training=fig_gain_over_training(a.efficiency, out / "gain_over_training.png"),
        paired_gap=fig_paired_gap(a.paired, out / "paired_gap.png"),
        width_gap=fig_width_gap(a.width, out / "width_gap.png"))
    return drawn


# Every figure a report may draw: one of these an earlier report left and this one does not draw goes when the new
# report is put in place (``experiments.staged``), so the folder holds only the figures report.md links.
FIGURE_NAMES = tuple(f"{f.name}.png" for f in dataclasses.fields(Drawn))
