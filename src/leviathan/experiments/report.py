"""``leviathan report RESULTS --out DIR``: a Markdown report with tables and PNG figures from a sweep.

Reads ``results.jsonl`` (rows written by ``experiments.sweep``) and each run's ``metrics.jsonl``;
writes ``DIR/report.md``, ``DIR/analysis.json`` (every number in the report) and ``DIR/*.png``:

- ``loss_curves.png``: validation loss against training tokens, one panel per regime.
- ``frontier.png``: parameter-loss frontier: the dense ladder, the fitted E + A N^-alpha with its
  bootstrap band, every other run placed at its own parameter count.
- ``reduction_by_size.png``: iso-body (and isoparametric) perplexity reduction vs the dense baseline.
- ``param_allocation.png``: parameters by component (input side, body, head), stacked, per model.
- ``frequency_reduction.png``: perplexity reduction per training-frequency bucket (rare -> frequent).
- ``gain_over_training.png``: perplexity reduction vs the baseline at every validation point.

Missing inputs degrade gracefully: a section whose data is absent (no ladder, no buckets, metrics
files moved) says so in the report instead of failing, so a half-finished sweep reports what it has.
Figures use matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from ..errors import UserError
from .efficiency import efficiency_from_results, read_metrics, throughput_table, val_curve
from .frequency import comparison_groups, frequency_from_results
from .scaling import power_law, row_loss, scaling_from_results
from .sweep import json_safe, load_results

COMPARISONS = (("iso_body", "dense_tied"), ("isoparametric", "dense_untied"), ("variants", "dense_untied"))


# --------------------------------------------------------------------------------------------
# analyses over result rows


def comparison_table(rows: list[dict], regime: str, baseline: str, eval_set: str = "val") -> list[dict]:
    """Per (size, seed, variant): loss, ppl, the baseline's, and the relative ppl reduction 1 - ppl/ppl_base."""
    out = []
    for (size, seed), by_variant in comparison_groups(rows, regime).items():
        base = by_variant.get(baseline)
        lb = row_loss(base, eval_set) if base else None
        for variant, r in by_variant.items():
            if variant == baseline:
                continue
            lm = row_loss(r, eval_set)
            bpb = ((r.get("eval") or {}).get(eval_set) or {}).get("bpb")
            base_bpb = (((base or {}).get("eval") or {}).get(eval_set) or {}).get("bpb")
            out.append({"regime": regime, "size": size, "seed": seed, "variant": variant, "name": r["name"],
                        "params": r.get("params", {}).get("total"), "layers": r.get("num_hidden_layers"),
                        "baseline": baseline, "baseline_params": (base or {}).get("params", {}).get("total"),
                        "baseline_layers": (base or {}).get("num_hidden_layers"),
                        "loss": lm, "ppl": _exp(lm), "baseline_loss": lb, "baseline_ppl": _exp(lb),
                        "bpb": bpb, "baseline_bpb": base_bpb,
                        "reduction": None if (lm is None or lb is None) else 1.0 - math.exp(lm - lb)})
    return out


def _exp(v):
    return None if v is None else math.exp(v)


def analyze(rows: list[dict], eval_set: str = "val", num_bootstrap: int = 1000, ci: float = 0.95, seed: int = 0,
            ladder: str | None = None) -> dict:
    """Every analysis of docs/DESIGN.md §7 over a sweep's rows; sections that cannot be computed hold ``error``."""
    out: dict = {"num_runs": len(rows), "eval_set": eval_set, "eval_sets": sorted({k for r in rows for k in r.get("eval", {})})}
    out["comparisons"] = {regime: comparison_table(rows, regime, base, eval_set) for regime, base in COMPARISONS}
    try:
        sc = scaling_from_results(rows, ladder, eval_set, "total", num_bootstrap, ci, seed)
        out["scaling"] = {**sc, "fit": sc["fit"].as_dict(), "_fit": sc["fit"]}
    except UserError as e:
        out["scaling"] = {"error": str(e)}
    out["frequency"] = [f for regime, base in COMPARISONS for f in frequency_from_results(rows, regime, base, eval_set)]
    out["efficiency"] = [e for regime, base in COMPARISONS for e in efficiency_from_results(rows, regime, base)]
    out["throughput"] = throughput_table(rows)
    out["params"] = _param_rows(rows)
    out["per_set"] = [{"name": r["name"], "params": (r.get("params") or {}).get("total"),
                       "sets": {k: v for k, v in (r.get("eval") or {}).items()}}
                      for r in sorted(rows, key=lambda r: ((r.get("params") or {}).get("total") or 0, r["name"]))]
    return out


def _param_rows(rows: list[dict]) -> list[dict]:
    seen = {}
    for r in rows:
        key = r["name"].rsplit("-s", 1)[0]
        if key not in seen and r.get("params"):
            seen[key] = {"model": key, "variant": r["variant"], "layers": r.get("num_hidden_layers"),
                         **{k: r["params"].get(k) for k in ("input", "body", "head", "total", "tied")}}
    return sorted(seen.values(), key=lambda p: (p["total"] or 0, p["model"]))


# --------------------------------------------------------------------------------------------
# figures


def _save(plt, fig, path: Path) -> None:
    """Lay out, write as a 120-dpi PNG and free one figure (every figure of the report)."""
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


VARIANT_COLORS = {"dense_tied": "#1f77b4", "dense_untied": "#7f7f7f", "leviathan": "#d62728",
                  "factorized": "#2ca02c", "compositional": "#9467bd"}


def _color(variant: str) -> str:
    return VARIANT_COLORS.get(variant, "#000000")


def fig_loss_curves(rows: list[dict], path: Path) -> bool:
    plt = _plt()
    regimes = [g for g, _ in COMPARISONS if any(g in (r.get("regimes") or []) for r in rows)] or ["all"]
    fig, axes = plt.subplots(1, len(regimes), figsize=(6 * len(regimes), 4.2), squeeze=False)
    drawn = False
    # shade by size within a variant: small models light, large models dark
    totals = sorted({(r.get("params") or {}).get("total") or 0 for r in rows})
    shade = {t: 0.35 + 0.65 * (i + 1) / len(totals) for i, t in enumerate(totals)}
    for ax, regime in zip(axes[0], regimes):
        for r in rows:
            if regime != "all" and regime not in (r.get("regimes") or []):
                continue
            try:
                c = val_curve(read_metrics(r["metrics"]))
            except (UserError, KeyError, OSError):
                continue
            ax.plot(c.tokens, c.loss, color=_color(r["variant"]), alpha=shade[(r.get("params") or {}).get("total") or 0],
                    lw=1.4,
                    ls="-" if r["variant"] != "dense_tied" and r["variant"] != "dense_untied" else "--",
                    label=r["name"])
            drawn = True
        ax.set_title(regime.replace("_", "-"))
        ax.set_xlabel("training tokens")
        ax.set_ylabel("validation loss (nats)")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=6, ncol=1 if len(ax.lines) < 10 else 2)
    _save(plt, fig, path)
    return drawn


def fig_frontier(rows: list[dict], scaling: dict, eval_set: str, path: Path) -> bool:
    plt = _plt()
    fit = scaling.get("_fit")
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    drawn = False
    for r in rows:
        L = row_loss(r, eval_set)
        if L is None or not r.get("params"):
            continue
        on_ladder = fit is not None and r["variant"] == scaling.get("variant")
        ax.scatter(r["params"]["total"], L, color=_color(r["variant"]), marker="o" if on_ladder else "^", s=36,
                   zorder=3, label=r["variant"] + (" (ladder)" if on_ladder else ""))
        drawn = True
    if fit is not None:
        lo = min(fit.N_min, min(r["params"]["total"] for r in rows if r.get("params"))) / 1.3
        hi = max(fit.N_max, max(r["params"]["total"] for r in rows if r.get("params"))) * 1.3
        N = np.geomspace(lo, hi, 200)
        ax.plot(N, fit.predict(N), color="k", lw=1.2,
                label=f"fit E={fit.E:.3f} A={fit.A:.3g} alpha={fit.alpha:.3f}")
        if fit.draws is not None and len(fit.draws):
            curves = power_law(N[None, :], fit.draws[:, :1], fit.draws[:, 1:2], fit.draws[:, 2:3])
            q = (1 - fit.ci) / 2
            ax.fill_between(N, np.quantile(curves, q, axis=0), np.quantile(curves, 1 - q, axis=0), color="k",
                            alpha=0.12, label=f"{int(fit.ci * 100)}% bootstrap band")
    ax.set_xscale("log")
    ax.set_xlabel("parameters (total)")
    ax.set_ylabel(f"{eval_set} loss (nats)")
    ax.grid(alpha=0.3, which="both")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=7)
    _save(plt, fig, path)
    return drawn


def fig_reduction_by_size(comparisons: dict, path: Path) -> bool:
    plt = _plt()
    entries = [e for regime in ("iso_body", "isoparametric") for e in comparisons.get(regime, [])
               if e["reduction"] is not None]
    if not entries:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    keys = sorted({(e["regime"], e["variant"]) for e in entries})
    for regime, variant in keys:
        pts: dict[float, list[float]] = {}
        for e in entries:
            if (e["regime"], e["variant"]) == (regime, variant) and e["baseline_params"]:
                pts.setdefault(e["baseline_params"], []).append(100 * e["reduction"])
        xs = sorted(pts)
        ax.plot(xs, [np.mean(pts[x]) for x in xs], marker="o" if regime == "iso_body" else "s",
                color=_color(variant), ls="-" if regime == "iso_body" else "--",
                label=f"{variant} vs {dict(COMPARISONS)[regime]} ({regime.replace('_', '-')})")
        for x in xs:
            if len(pts[x]) > 1:
                ax.errorbar(x, np.mean(pts[x]), yerr=np.std(pts[x]), color=_color(variant), capsize=3)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("baseline parameters (total)")
    ax.set_ylabel("perplexity reduction (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    _save(plt, fig, path)
    return True


def fig_param_allocation(params: list[dict], path: Path) -> bool:
    plt = _plt()
    if not params:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(params) + 2), 4.5))
    x = np.arange(len(params))
    inp = np.array([p["input"] for p in params], dtype=float)
    body = np.array([p["body"] for p in params], dtype=float)
    head = np.array([p["head"] for p in params], dtype=float)
    tied = np.array([bool(p.get("tied")) for p in params])
    ax.bar(x[~tied], inp[~tied], label="input side", color="#ff7f0e")
    if tied.any():
        ax.bar(x[tied], inp[tied], label="input side = head (tied)", color="#ff7f0e", hatch="//", edgecolor="#7f7f7f")
    ax.bar(x, body, bottom=inp, label="body", color="#1f77b4")
    ax.bar(x, head, bottom=inp + body, label="head", color="#7f7f7f")
    ax.set_xticks(x)
    ax.set_xticklabels([p["model"] for p in params], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("parameters")
    ax.set_yscale("log" if (inp + body + head).max() / max((inp + body + head).min(), 1) > 50 else "linear")
    ax.legend(fontsize=8)
    _save(plt, fig, path)
    return True


def fig_frequency(freq: list[dict], path: Path) -> bool:
    plt = _plt()
    if not freq:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for f in freq:
        red = [None if v is None else 100 * v for v in f["reduction"]]
        xs = [i for i, v in enumerate(red) if v is not None]
        ax.plot(xs, [red[i] for i in xs], marker="o", color=_color(f["variant"]),
                alpha=0.5 + 0.5 / max(1, len(freq)), label=f"{f['variant']} {f['size']} s{f['seed']} ({f['regime']})")
    ax.axhline(0, color="k", lw=0.8)
    n = len(freq[0]["reduction"])
    b = freq[0].get("buckets") or {}
    if b.get("min_count"):
        ax.set_xticks(range(n))
        ax.set_xticklabels([f"{lo:,}-{hi:,}" for lo, hi in zip(b["min_count"], b["max_count"])], rotation=30,
                           fontsize=7)
    ax.set_xlabel("training-frequency bucket (count per token id; rare -> frequent)")
    ax.set_ylabel("perplexity reduction (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    _save(plt, fig, path)
    return True


def fig_gain_over_training(eff: list[dict], path: Path) -> bool:
    plt = _plt()
    entries = [e for e in eff if e.get("gain_over_training") and e["gain_over_training"]["tokens"]]
    if not entries:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for e in entries:
        g = e["gain_over_training"]
        ax.plot(g["tokens"], [100 * v for v in g["reduction"]], color=_color(e["variant"]),
                ls="-" if e["regime"] == "iso_body" else "--", label=f"{e['name']} vs {e['baseline_name']}")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("training tokens")
    ax.set_ylabel("perplexity reduction vs baseline (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    _save(plt, fig, path)
    return True


# --------------------------------------------------------------------------------------------
# Markdown


def _fmt(v, spec=".4f", none="-"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return none
    return format(v, spec)


def _pct(v):
    return "-" if v is None else f"{100 * v:+.1f}%"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def render_markdown(a: dict, figures: dict[str, bool], source: str) -> str:
    md = ["# Leviathan sweep report", "",
          f"Source: `{source}` ({a['num_runs']} runs). Losses are nats per token on eval set `{a['eval_set']}` "
          f"(eval sets in the results: {', '.join(a['eval_sets']) or 'none'}); perplexity = exp(loss); "
          f"reduction = 1 - ppl / ppl_baseline (positive: better than the baseline).", ""]

    md += ["## Loss curves", ""]
    md += ["![loss curves](loss_curves.png)" if figures.get("loss_curves") else
           "_No metrics.jsonl files could be read (run dirs moved or not finished)._", ""]

    titles = {"iso_body": "Iso-body: same backbone, leviathan vs dense-tied",
              "isoparametric": "Isoparametric: equal total parameters, leviathan deeper vs dense-untied",
              "variants": "Other input variants at equal total parameters"}
    for regime, _ in COMPARISONS:
        entries = a["comparisons"].get(regime) or []
        if not entries:
            continue
        md += [f"## {titles[regime]}", ""]
        md.append(_table(["size", "seed", "model", "layers", "params", "ppl", "bpb", "baseline", "layers", "params",
                          "ppl", "bpb", "ppl reduction"],
                         [[e["size"], e["seed"], e["variant"], e["layers"], _fmt(e["params"], ",d"), _fmt(e["ppl"], ".3f"),
                           _fmt(e["bpb"], ".4f"), e["baseline"], e["baseline_layers"], _fmt(e["baseline_params"], ",d"),
                           _fmt(e["baseline_ppl"], ".3f"), _fmt(e["baseline_bpb"], ".4f"), _pct(e["reduction"])]
                          for e in entries]))
        md.append("")
    if figures.get("reduction_by_size"):
        md += ["![perplexity reduction by size](reduction_by_size.png)", ""]

    if a["eval_sets"]:
        md += ["## Every run on every eval set", "", "Perplexity (bits per byte).", ""]
        sets = a["eval_sets"]
        md.append(_table(["run", "params"] + sets,
                         [[p["name"], _fmt(p["params"], ",d")] +
                          [("-" if p["sets"].get(s_) is None else
                            f"{_fmt(p['sets'][s_]['ppl'], '.3f')} ({_fmt(p['sets'][s_].get('bpb'), '.4f')})")
                           for s_ in sets] for p in a["per_set"]]))
        md.append("")

    md += ["## Scaling: dense power law and dense-equivalent sizes", ""]
    sc = a.get("scaling") or {}
    if "error" in sc:
        md += [f"_Not computed: {sc['error']}_", ""]
    else:
        f = sc["fit"]

        def iv(name):
            v = f.get(f"{name}_ci")
            return "" if not v else f" [{_fmt(v[0], '.4g')}, {_fmt(v[1], '.4g')}]"

        md += [f"Fit of L(N) = E + A N^-alpha to the {sc['variant']} ladder ({f['num_runs']} runs, N = total "
               f"parameters from {f['N_min']:,.0f} to {f['N_max']:,.0f}): E = {f['E']:.4g}{iv('E')}, "
               f"A = {f['A']:.4g}{iv('A')}, alpha = {f['alpha']:.4g}{iv('alpha')}; rmse {f['rmse']:.3g}. "
               f"Intervals: {int(100 * f['ci'])}% bootstrap over runs ({f['num_bootstrap']} draws"
               f"{', stratified by size' if f['stratified'] else ''}).", ""]
        if f["num_runs"] < 4:
            md += ["_Fewer than 4 ladder runs: three parameters from three points; the intervals are not "
                   "meaningful._", ""]
        if sc["equivalents"]:
            md.append(_table(["model", "regimes", "seeds", "params", "loss", "dense-equivalent N", "multiplier",
                              f"{int(100 * f['ci'])}% interval", "flag"],
                             [[e["name"], ",".join(e["regimes"]), len(e["seeds"]), _fmt(e["params"], ",.0f"),
                               _fmt(e["loss"]), _fmt(e["N_eq"], ",.0f", "inf"), _fmt(e["multiplier"], ".2f", "inf") + "x",
                               "-" if not e["multiplier_ci"] else
                               f"[{_fmt(e['multiplier_ci'][0], '.2f', 'inf')}, {_fmt(e['multiplier_ci'][1], '.2f', 'inf')}]",
                               e["flag"]] for e in sc["equivalents"]]))
            md += ["", "`below_irreducible`: the loss is below the fitted E, so no dense size reaches it according "
                   "to the fit (N_eq undefined); `extrapolated`: N_eq lies outside the ladder's range.", ""]
    if figures.get("frontier"):
        md += ["![parameter-loss frontier](frontier.png)", ""]

    md += ["## Parameter allocation", ""]
    md.append(_table(["model", "variant", "layers", "input", "body", "head", "total", "input share"],
                     [[p["model"], p["variant"], p["layers"], _fmt(p["input"], ",d"), _fmt(p["body"], ",d"),
                       "tied" if p["tied"] else _fmt(p["head"], ",d"), _fmt(p["total"], ",d"),
                       f"{100 * p['input'] / p['total']:.1f}%" if p["total"] else "-"] for p in a["params"]]))
    md.append("")
    if figures.get("param_allocation"):
        md += ["![parameter allocation](param_allocation.png)", ""]

    md += ["## Perplexity by training-token frequency", ""]
    if not a["frequency"]:
        md += ["_No per-bucket losses in the results (rows need `buckets`; the sweep writes them)._", ""]
    else:
        b = a["frequency"][0].get("buckets") or {}
        labels = [f"{lo:,}-{hi:,}" for lo, hi in zip(b.get("min_count", []), b.get("max_count", []))] or \
            [str(i) for i in range(len(a["frequency"][0]["reduction"]))]
        md += [f"Buckets by training count of the target token ({b.get('method', '?')} rule: "
               f"{'equal shares of training occurrences' if b.get('method') == 'mass' else 'equal log-count bins'}), "
               f"rarest first. Cells: perplexity reduction vs the baseline.", ""]
        md.append(_table(["regime", "size", "seed", "model"] + labels,
                         [[f["regime"], f["size"], f["seed"], f"{f['variant']} vs {f['baseline']}"] +
                          [_pct(v) for v in f["reduction"]] for f in a["frequency"]]))
        md.append("")
        if figures.get("frequency_reduction"):
            md += ["![reduction by frequency bucket](frequency_reduction.png)", ""]

    md += ["## Sample efficiency", ""]
    eff = a["efficiency"]
    if not eff:
        md += ["_No comparison pairs with metrics._", ""]
    else:
        md.append(_table(["regime", "size", "seed", "model", "baseline", "target loss", "baseline tokens",
                          "model tokens", "factor"],
                         [[e["regime"], e["size"], e["seed"], e["variant"], e["baseline"],
                           _fmt(e.get("target_loss")), _fmt(e.get("reference_tokens"), ",.0f"),
                           _fmt(e.get("tokens"), ",.0f", "not reached"),
                           (f"{e['factor']:.2f}x fewer" if e.get("factor") else
                            ("not reached" if "error" not in e else e["error"][:60]))] for e in eff]))
        md += ["", "Tokens the model needs to reach the baseline's final validation loss (first crossing, linear "
               "interpolation between validation points); factor = baseline tokens / model tokens.", ""]
        if figures.get("gain_over_training"):
            md += ["![gain over training](gain_over_training.png)", ""]

    md += ["## Throughput", ""]
    tp = [t for t in a["throughput"] if t["regime"] in ("iso_body", "isoparametric", "variants")]
    if tp:
        md.append(_table(["regime", "size", "seed", "variant", "tokens/s", "vs baseline", "hardware"],
                         [[t["regime"], t["size"], t["seed"], t["variant"], _fmt(t["tokens_per_s"], ",.0f"),
                           ("-" if t["slowdown"] is None else f"{100 * t['slowdown']:.0f}% slower"
                            if t["slowdown"] >= 0 else f"{-100 * t['slowdown']:.0f}% faster")
                           + (f" ({t['note']})" if t.get("note") else ""), t["hardware"]] for t in tp]))
        md += ["", "Training throughput from each run's summary; runs share hardware only if the column says so. "
               "For a side-by-side measurement in one process use `leviathan bench`.", ""]
    return "\n".join(md) + "\n"


def _jsonable(a: dict) -> dict:
    out = {k: v for k, v in a.items()}
    if "scaling" in out:
        out["scaling"] = {k: v for k, v in out["scaling"].items() if k != "_fit"}
    return out


def write_report(results: str | os.PathLike, out_dir: str | os.PathLike, eval_set: str = "val",
                 num_bootstrap: int = 1000, ci: float = 0.95, seed: int = 0, ladder: str | None = None) -> Path:
    """Analyse a sweep's results and write report.md, analysis.json and the figures into ``out_dir``."""
    rows = load_results(results)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    a = analyze(rows, eval_set, num_bootstrap, ci, seed, ladder)
    figures = {
        "loss_curves": fig_loss_curves(rows, out / "loss_curves.png"),
        "frontier": fig_frontier(rows, a.get("scaling") or {}, eval_set, out / "frontier.png"),
        "reduction_by_size": fig_reduction_by_size(a["comparisons"], out / "reduction_by_size.png"),
        "param_allocation": fig_param_allocation(a["params"], out / "param_allocation.png"),
        "frequency_reduction": fig_frequency(a["frequency"], out / "frequency_reduction.png"),
        "gain_over_training": fig_gain_over_training(a["efficiency"], out / "gain_over_training.png"),
    }
    from ..config import atomic_write_json, atomic_write_text

    atomic_write_text(out / "report.md", render_markdown(a, figures, str(results)))
    atomic_write_json(out / "analysis.json", json_safe(json.loads(json.dumps(_jsonable(a), default=_default))))
    return out / "report.md"


def _default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        v = float(o)
        return v if math.isfinite(v) else None
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
