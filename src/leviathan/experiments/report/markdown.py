"""The text of a sweep report: report.md from the report's numbers (``analysis.Analysis``) and the figures drawn.

Sections follow docs/DESIGN.md §7 in the order of ``render_markdown``; a section whose numbers are missing says so
instead of failing, so a half-finished sweep reports what it has.
"""

from __future__ import annotations

import math

from ...tables import markdown_table
from ...value_rules import few_draws, level_percent
from ..method.efficiency import EfficiencyEntry
from ..method.paired import PairedComparison, PairedEfficiency, PplChange, TInterval
from ..machinery.results import COMPARISONS
from ..method.scaling import Equivalent
from .analysis import Analysis, NotComputed
from .embeddings import render_embeddings
from ..method.width import WidthPanel
from .figures import Drawn


def _fmt(v, spec=".4f", none="-"):
    """``v`` formatted with ``spec``; ``none`` for a missing or non-finite number."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return none
    return format(v, spec)


def _pct(v):
    """A reduction as a signed percentage; ``-`` for a missing or non-finite one."""
    return "-" if v is None or not math.isfinite(v) else f"{100 * v:+.1f}%"


def _ci(stat: TInterval | PplChange, spec: str = "+.4f", scale: float = 1.0) -> str:
    """``mean [lo, hi]`` of a paired statistic (the interval omitted for one seed)."""
    if stat.mean is None:
        return "-"
    text = format(scale * stat.mean, spec)
    return text if not stat.ci else f"{text} [{format(scale * stat.ci[0], spec)}, {format(scale * stat.ci[1], spec)}]"


def _size(c: PairedComparison) -> str:
    """A comparison's size, with the size whose baselines it borrowed (same backbone)."""
    return c.size if not c.baseline_size else f"{c.size} (vs {c.baseline_size})"


def _pair(c: PairedComparison) -> str:
    """``model - baseline`` of a comparison."""
    return f"{c.model} - {c.baseline}"


def _factor(eff: PairedEfficiency) -> str:
    if eff.geo_mean is None:
        return "-"
    text = f"{eff.geo_mean:.2f}x"
    return text if not eff.ci else f"{text} [{eff.ci[0]:.2f}, {eff.ci[1]:.2f}]"


def _paired_section(a: Analysis, figures: Drawn) -> list[str]:
    """Paired differences across seeds (``experiments.method.paired``): the end point on every eval set, the gap curve."""
    paired = a.paired
    md = ["## Paired differences across seeds", ""]
    if not paired:
        return md + ["_No comparison has both of its runs at a size and seed yet._", ""]
    ci = level_percent(paired[0].ci)
    md += [f"Per seed, model minus baseline (same size, same seed: same tokens in the same order); mean over seeds "
           f"with the {ci}% Student t interval. Loss in nats per token (negative: the model is better); perplexity "
           f"change = exp(mean loss difference) - 1. Verdict: `better`/`worse` only when the interval excludes 0; "
           f"`one seed` has no interval. Unigram plateau (entropy of the training unigram distribution): "
           f"{_fmt(a.unigram_entropy, '.3f')} nats; `past plateau` is the first validation point where every seed's "
           f"baseline is 0.5 nats below it.", ""]
    sets = sorted({s_ for c in paired for s_ in c.eval}, key=lambda s_: (s_ != a.eval_set, s_))
    md += _end_point_table(paired, a.eval_set, sets)
    md += ["", f"Sample efficiency: baseline tokens / the tokens the model needs to reach the baseline's final "
           f"validation loss, per seed; geometric mean over the seeds that reach it, with the {ci}% interval of "
           f"the log factors.", ""]
    md.append(markdown_table(["regime", "size", "model - baseline", "per seed", "reached", "factor"],
                             [[c.regime, _size(c), _pair(c),
                               ", ".join(st if f is None else f"{f:.2f}x"
                                         for f, st in zip(c.efficiency.factors, c.efficiency.status)),
                               f"{c.efficiency.reached}/{c.efficiency.n}", _factor(c.efficiency)]
                              for c in paired]))
    md += _trend_table(paired, ci)
    md += _bucket_table(paired, ci)
    md += ["", f"Loss difference on every eval set (nats, mean [{ci}% interval]; verdict in brackets).", ""]
    md.append(markdown_table(["regime", "size", "model - baseline"] + sets,
                             [[c.regime, _size(c), _pair(c)] +
                              [("-" if s_ not in c.eval else f"{_ci(c.eval[s_].loss)} ({c.eval[s_].loss.verdict})")
                               for s_ in sets] for c in paired]))
    outside = {s_: e.share_outside for c in paired for s_, e in c.eval.items() if e.share_outside}
    if outside:
        md += ["", "Restricted softmax: every model is scored on the targets inside its id set (inputs unchanged); "
               "targets left out: " + ", ".join(f"{s_} {v:.1%}" for s_, v in sorted(outside.items())) +
               ". Those sets have no bits per byte."]
    md.append("")
    if figures.paired_gap:
        md += ["![paired gap over training](paired_gap.png)", ""]
    return md


def _width_section(panel: WidthPanel | None, figures: Drawn) -> list[str]:
    """The width panel (``experiments.method.width``): the gap per body size, the primary slope, the secondaries."""
    if panel is None:
        return []
    ci = level_percent(panel.ci)
    st = panel.slope
    md = ["## Width: the generator's gap to the untied table against the body's size", "",
          f"Per body size, d_s = L({panel.generator}, s) - L({panel.table}, s), the final `{panel.eval_set}` loss "
          f"paired by seed (> 0: the generator is behind), mean with its {ci}% t interval; {panel.tied} is one "
          f"descriptive point per size (its gap is not tested). Primary statistic: per seed with a pair at every "
          f"size, the least-squares slope of d_s against ln(body parameters); over seeds their mean and {ci}% t "
          f"interval. Paper's direction: {panel.paper_direction}.", ""]
    md.append(markdown_table(
        ["body params", "width", "layers", "generator / table", "seeds", "d_s per seed", "gap", "verdict",
         f"- {panel.tied}", "late slope (nats / M tokens)"],
        [[f"{p.body_params:,d}", _fmt(p.hidden_size, "d"), _fmt(p.num_hidden_layers, "d"),
          f"{p.generator_size} / {p.table_size}", ", ".join(map(str, p.seeds)),
          ", ".join("-" if d is None else f"{d:+.4f}" for d in p.per_seed), _ci(p.gap), p.gap.verdict,
          f"{_ci(p.tied_gap)} ({p.tied_gap.n} seed{'s' if p.tied_gap.n != 1 else ''})",
          _ci(p.trend.slope)] for p in panel.points]))
    slope = _ci(st.slope)
    doubling = "" if st.per_doubling is None else \
        f" ({st.per_doubling[0]:+.4f} [{st.per_doubling[1]:+.4f}, {st.per_doubling[2]:+.4f}] per doubling)"
    left = f"; seeds left out (a size without a pair): {', '.join(map(str, st.seeds_left_out))}" \
        if st.seeds_left_out else ""
    md += ["", f"**Primary:** slope per e-fold of body parameters {slope}{doubling}, over seeds "
           f"{', '.join(map(str, st.seeds)) or 'none'} (per seed: "
           f"{', '.join(f'{b:+.4f}' for b in st.per_seed) or '-'}): the gap **{st.direction}** as the body grows"
           f"{left}.", ""]
    buckets = [p for p in panel.points if p.buckets]
    if buckets:
        n = max(len(p.buckets) for p in buckets)
        md += [f"Perplexity change of {panel.generator} against {panel.table} by training-frequency bucket (rarest "
               f"first, {ci}% interval), per body size.", ""]
        md.append(markdown_table(["body params"] + [f"bucket {i + 1}" for i in range(n)],
                                 [[f"{p.body_params:,d}"] +
                                  [_ci(PplChange(b.ppl_change, b.ppl_change_ci), "+.1f", 100) + "%"
                                   if b.ppl_change is not None else "-" for b in p.buckets] for p in buckets]))
        md.append("")
    md += [f"_Note: {n}_" for n in panel.notes] + ([""] if panel.notes else [])
    if figures.width_gap:
        md += ["![width gap](width_gap.png)", ""]
    return md


def _end_point_table(paired: list[PairedComparison], eval_set: str, sets: list[str]) -> list[str]:
    """The end of training on ``eval_set`` (else the first of ``sets``), one row per comparison."""
    rows = []
    for c in paired:
        e = c.eval[eval_set] if eval_set in c.eval else c.eval[sets[0]]
        rows.append([c.regime, _size(c), _pair(c), len(c.seeds),
                     f"{_fmt(c.model_params, ',d')} / {_fmt(c.baseline_params, ',d')}",
                     _fmt(e.baseline_loss, ".4f"), _ci(e.loss),
                     _ci(e.ppl_change, "+.1f", 100) + ("%" if e.ppl_change.mean is not None else ""),
                     _ci(e.bpb), e.loss.verdict,
                     "-" if c.plateau is None else _fmt(c.curve.past_plateau_tokens, ",d", "not reached")])
    return [markdown_table(["regime", "size", "model - baseline", "seeds", "params", "baseline loss", "loss diff",
                            "ppl change", "bpb diff", "verdict", "past plateau"], rows)]


def _bucket_table(paired: list[PairedComparison], ci: int) -> list[str]:
    """The perplexity change per training-frequency bucket of the comparisons that have buckets."""
    with_buckets = [c for c in paired if c.buckets]
    if not with_buckets:
        return []
    n = max(len(c.buckets) for c in with_buckets)
    md = ["", f"Perplexity change by training-frequency bucket of the validation targets (rarest first; "
          f"exp of the mean paired loss difference - 1, with its {ci}% interval; negative: the model is better).", ""]
    md.append(markdown_table(["regime", "size", "model - baseline"] + [f"bucket {i + 1}" for i in range(n)],
                             [[c.regime, _size(c), _pair(c)] +
                              [_ci(PplChange(b.ppl_change, b.ppl_change_ci), "+.1f", 100) + "%"
                               if b.ppl_change is not None else "-" for b in c.buckets]
                              for c in with_buckets]))
    return md


def _trend_table(paired: list[PairedComparison], ci: int) -> list[str]:
    """The gap's slope over the last third of training, per seed and over seeds (``paired.gap_trend``)."""
    rows = [c for c in paired if c.trend.from_tokens is not None]
    if not rows:
        return []
    md = ["", f"Trend at the end of training: per seed, the least-squares slope of the gap over the validation "
          f"points from two thirds of training on, in nats per million tokens (with a negative gap, a negative "
          f"slope means the lead still grows and a positive one that it shrinks); mean with its {ci}% interval.",
          ""]
    md.append(markdown_table(["regime", "size", "model - baseline", "from tokens", "gap at the end, per seed",
                              "slope per seed", "slope"],
                             [[c.regime, _size(c), _pair(c), f"{c.trend.from_tokens:,d}",
                               ", ".join(f"{g:+.3f}" for g in c.trend.end_gaps),
                               ", ".join("-" if x is None else f"{x:+.4f}" for x in c.trend.slopes),
                               _ci(c.trend.slope)] for c in rows]))
    return md


def _comparisons_section(a: Analysis, figures: Drawn) -> list[str]:
    """One table per comparison regime (iso-body, isoparametric, variants) and its figure."""
    md = []
    titles = {"iso_body": "Iso-body: same backbone, leviathan vs dense-tied",
              "isoparametric": "Isoparametric: equal total parameters, leviathan deeper vs dense-untied",
              "variants": "Other input variants at equal total parameters"}
    for regime, _ in COMPARISONS:
        entries = a.comparisons[regime]
        if not entries:
            continue
        md += [f"## {titles[regime]}", ""]
        md.append(markdown_table(["size", "seed", "model", "layers", "params", "ppl", "bpb", "baseline", "layers",
                                  "params", "ppl", "bpb", "ppl reduction"],
                                 [[e.size, e.seed, e.variant, e.layers, _fmt(e.params, ",d"), _fmt(e.ppl, ".3f"),
                                   _fmt(e.bpb, ".4f"), e.baseline, _fmt(e.baseline_layers, "d"),
                                   _fmt(e.baseline_params, ",d"),
                                   _fmt(e.baseline_ppl, ".3f"), _fmt(e.baseline_bpb, ".4f"), _pct(e.reduction)]
                                  for e in entries]))
        md.append("")
    if figures.reduction_by_size:
        md += ["![perplexity reduction by size](reduction_by_size.png)", ""]
    return md


def _per_set_section(a: Analysis, figures: Drawn) -> list[str]:
    """Every run's perplexity (bits per byte) on every eval set."""
    md = []
    if a.eval_sets:
        md += ["## Every run on every eval set", "", "Perplexity (bits per byte).", ""]
        sets = a.eval_sets
        md.append(markdown_table(["run", "params"] + sets,
                                 [[p.name, _fmt(p.params, ",d")] +
                                  [("-" if s_ not in p.sets else
                                    f"{_fmt(p.sets[s_].ppl, '.3f')} ({_fmt(p.sets[s_].bpb, '.4f')})")
                                   for s_ in sets] for p in a.per_set]))
        md.append("")
    return md


def _scaling_section(a: Analysis, figures: Drawn) -> list[str]:
    """The dense power-law fit and the dense-equivalent sizes; nothing for rows without a dense ladder."""
    sc = a.scaling
    if sc is None:
        return []
    md = ["## Scaling: dense power law and dense-equivalent sizes", ""]
    if isinstance(sc, NotComputed):
        md += [f"_Not computed: {sc.error}_", ""]
    else:
        f = sc.fit

        def iv(name):
            v = f.interval(name)
            return "" if not v else f" [{_fmt(v[0], '.4g')}, {_fmt(v[1], '.4g')}]"

        num_bootstrap = 0 if f.draws is None else len(f.draws)
        few = few_draws(num_bootstrap, f.ci)  # 2 draws were a "95%" interval (round 28, T60)
        coverage = f"{level_percent(f.ci)}% " if few is None else ""
        md += [f"Fit of L(N) = E + A N^-alpha to the {sc.variant} ladder ({f.num_runs} runs, N = total "
               f"parameters from {f.N_min:,.0f} to {f.N_max:,.0f}): E = {f.E:.4g}{iv('E')}, "
               f"A = {f.A:.4g}{iv('A')}, alpha = {f.alpha:.4g}{iv('alpha')}; rmse {f.rmse:.3g}. "
               f"Intervals: {coverage}bootstrap over runs ({num_bootstrap} draws"
               f"{', stratified by size' if f.stratified else ''}){'' if few is None else f'; {few}'}.", ""]
        unidentified = f.unidentified()
        if unidentified:
            md += ["**The power law is not identified**: " + "; ".join(unidentified) + ". Ladders that "
                   "bend this little fit as well with a small E and a small alpha as with a large E and a large "
                   "alpha, so the dense-equivalent sizes below come from one of many equally good fits and are not "
                   "measurements; a ladder over a wider span of sizes (or past the point where loss bends) pins "
                   "it down.", ""]
        if f.num_runs < 4:
            md += ["_Fewer than 4 ladder runs: three parameters from three points; the intervals are not "
                   "meaningful._", ""]
        md += _equivalents_table(sc.equivalents, f.ci)
    if figures.frontier:
        md += ["![parameter-loss frontier](frontier.png)", ""]
    return md


def _equivalents_table(equivalents: list[Equivalent], ci: float) -> list[str]:
    """Each configuration off the ladder at its dense-equivalent size, with the flags' legend."""
    if not equivalents:
        return []
    rows = []
    for e in equivalents:
        v, mci = e.value, e.value.multiplier_ci
        rows.append([e.name, ",".join(e.regimes), len(e.seeds), _fmt(v.params, ",.0f"), _fmt(v.loss),
                     _fmt(v.N_eq, ",.0f", "inf"), _fmt(v.multiplier, ".2f", "inf") + "x",
                     "-" if not mci else f"[{_fmt(mci[0], '.2f', 'inf')}, {_fmt(mci[1], '.2f', 'inf')}]", v.flag])
    return [markdown_table(["model", "regimes", "seeds", "params", "loss", "dense-equivalent N", "multiplier",
                            f"{level_percent(ci)}% interval", "flag"], rows),
            "", "`below_irreducible`: the loss is below the fitted E, so no dense size reaches it according "
            "to the fit (N_eq undefined); `extrapolated`: N_eq lies outside the ladder's range.", ""]


def _params_section(a: Analysis, figures: Drawn) -> list[str]:
    """Parameters by component, per model."""
    md = ["## Parameter allocation", ""]
    md.append(markdown_table(["model", "variant", "layers", "input", "body", "head", "total", "input share"],
                             [[p.model, p.variant, p.layers, _fmt(p.input, ",d"), _fmt(p.body, ",d"),
                               "tied" if p.tied else _fmt(p.head, ",d"), _fmt(p.total, ",d"),
                               f"{100 * p.input / p.total:.1f}%" if p.total and p.input is not None else "-"]
                              for p in a.params]))
    md.append("")
    if figures.param_allocation:
        md += ["![parameter allocation](param_allocation.png)", ""]
    return md


def _frequency_section(a: Analysis, figures: Drawn) -> list[str]:
    """Perplexity reduction per training-frequency bucket."""
    md = ["## Perplexity by training-token frequency", ""]
    if not a.frequency:
        md += ["_No pair of a run and its regime's baseline run with per-bucket losses (rows need `buckets`, which "
               "the sweep writes, and the baseline's run of the same size and seed)._", ""]
    else:
        scheme = a.frequency[0].scheme
        labels = [f"{lo:,}-{hi:,}" for lo, hi in scheme.ranges] or \
            [str(i) for i in range(len(a.frequency[0].reduction))]
        md += [f"Buckets by training count of the target token ({scheme.method or '?'} rule: "
               f"{'equal shares of training occurrences' if scheme.method == 'mass' else 'equal log-count bins'}), "
               f"rarest first. Cells: perplexity reduction vs the baseline.", ""]
        md.append(markdown_table(["regime", "size", "seed", "model"] + labels,
                                 [[f.regime, f.size, f.seed, f"{f.variant} vs {f.baseline}"] +
                                  [_pct(v) for v in f.reduction] for f in a.frequency]))
        md.append("")
        if figures.frequency_reduction:
            md += ["![reduction by frequency bucket](frequency_reduction.png)", ""]
    return md


def _efficiency_cells(e: EfficiencyEntry) -> list:
    """Target loss, baseline tokens, model tokens and factor of one comparison (its error where it has one)."""
    r = e.result
    if r is None:
        return ["-", "-", "not reached", e.error[:60]]
    return [_fmt(r.target_loss), _fmt(r.reference_tokens, ",.0f"), _fmt(r.tokens, ",.0f", "not reached"),
            f"{r.factor:.2f}x fewer" if r.factor else "not reached"]


def _efficiency_section(a: Analysis, figures: Drawn) -> list[str]:
    """Tokens each model needs to reach its baseline's final loss."""
    md = ["## Sample efficiency", ""]
    if not a.efficiency:
        md += ["_No pair of a run and its regime's baseline run with validation curves._", ""]
    else:
        md.append(markdown_table(["regime", "size", "seed", "model", "baseline", "target loss", "baseline tokens",
                                  "model tokens", "factor"],
                                 [[e.regime, e.size, e.seed, e.variant, e.baseline] + _efficiency_cells(e)
                                  for e in a.efficiency]))
        md += ["", "Tokens the model needs to reach the baseline's final validation loss (first crossing, linear "
               "interpolation between validation points); factor = baseline tokens / model tokens.", ""]
        if figures.gain_over_training:
            md += ["![gain over training](gain_over_training.png)", ""]
    return md


def _slowdown(slowdown: float | None) -> str:
    """A throughput slowdown vs the baseline, in words."""
    if slowdown is None:
        return "-"
    return f"{100 * slowdown:.0f}% slower" if slowdown >= 0 else f"{-100 * slowdown:.0f}% faster"


def _throughput_section(a: Analysis, figures: Drawn) -> list[str]:
    """Training throughput per run, against its baseline."""
    md = ["## Throughput", ""]
    tp = [t for t in a.throughput if t.regime in ("iso_body", "isoparametric", "variants")]
    if tp:
        md.append(markdown_table(["regime", "size", "seed", "variant", "tokens/s", "vs baseline", "hardware"],
                                 [[t.regime, t.size, t.seed, t.variant, _fmt(t.tokens_per_s, ",.0f"),
                                   _slowdown(t.slowdown) + (f" ({t.note})" if t.note else ""), t.hardware]
                                  for t in tp]))
        md += ["", "Training throughput from each run's summary; runs share hardware only if the column says so. "
               "For a side-by-side measurement in one process use `leviathan bench`.", ""]
    return md


def render_markdown(a: Analysis, figures: Drawn, source: str) -> str:
    """report.md from the numbers ``a`` (``analysis.analyze``), which figures were drawn, and the results' path."""
    md = ["# Leviathan sweep report", "",
          f"Source: `{source}` ({a.num_runs} runs). Losses are nats per token on eval set `{a.eval_set}` "
          f"(eval sets in the results: {', '.join(a.eval_sets) or 'none'}); perplexity = exp(loss); "
          f"reduction = 1 - ppl / ppl_baseline (positive: better than the baseline).", ""]
    if a.notes:
        md += ["Notes on the rows:", ""] + [f"- {n}" for n in a.notes] + [""]

    md += ["## Loss curves", ""]
    md += ["![loss curves](loss_curves.png)" if figures.loss_curves else
           "_No metrics.jsonl files could be read (run dirs moved or not finished)._", ""]
    md += _paired_section(a, figures)
    md += _width_section(a.width, figures)
    for section in (_comparisons_section, _per_set_section, _scaling_section, _params_section, _frequency_section,
                    _efficiency_section, _throughput_section):
        md += section(a, figures)
    if a.embeddings is not None:
        md += render_embeddings(a.embeddings)
    return "\n".join(md) + "\n"
