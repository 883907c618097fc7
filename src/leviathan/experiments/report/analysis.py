"""The numbers of a sweep report (docs/DESIGN.md §7): every table and figure reads them, analysis.json holds them.

``analyze(rows)`` runs every analysis over a sweep's rows and returns one JSON-ready dict:

- ``comparisons``: per regime of ``results.COMPARISONS`` (iso-body vs dense_tied, isoparametric and
  variants vs dense_untied; docs/DESIGN.md §4), per (size, seed, variant): loss, perplexity, bits per
  byte, the baseline's, and the relative perplexity reduction 1 - ppl / ppl_baseline;
- ``scaling``: the dense ladder's power-law fit and every other run's dense-equivalent size
  (``experiments.scaling``), or ``{"error": ...}`` when there is no ladder;
- ``frequency``, ``efficiency``, ``throughput``: ``experiments.frequency`` / ``efficiency`` over the
  same comparison pairs;
- ``paired``: per comparison, the paired differences across seeds with Student t intervals at the end
  (every eval set) and over training (``experiments.paired``);
- ``params``: parameters by group per model (seeds merged); ``per_set``: every run on every eval set.

``compute_analysis()`` returns the same numbers together with the fitted ``PowerLawFit`` (its bootstrap
draws give the frontier figure its band).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ...errors import UserError
from ..efficiency import efficiency_from_results, throughput_table
from ..frequency import frequency_from_results
from ..paired import paired_comparisons
from ..results import COMPARISONS, ResultRow, comparison_groups, json_safe
from ..scaling import PowerLawFit, scaling_from_results


def comparison_table(rows: Iterable[ResultRow], regime: str, baseline: str,
                     eval_set: str = "val") -> list[dict]:
    """Per (size, seed, variant): loss, ppl, the baseline's, and the relative ppl reduction 1 - ppl/ppl_base."""
    out = []
    for (size, seed), by_variant in comparison_groups(rows, regime).items():
        base = by_variant.get(baseline)
        lb = base.loss(eval_set) if base else None
        for variant, r in by_variant.items():
            if variant == baseline:
                continue
            lm = r.loss(eval_set)
            out.append({"regime": regime, "size": size, "seed": seed, "variant": variant, "name": r.name,
                        "params": r.total_params, "layers": r.num_hidden_layers,
                        "baseline": baseline, "baseline_params": base.total_params if base else None,
                        "baseline_layers": base.num_hidden_layers if base else None,
                        "loss": lm, "ppl": _exp(lm), "baseline_loss": lb, "baseline_ppl": _exp(lb),
                        "bpb": r.bpb(eval_set), "baseline_bpb": base.bpb(eval_set) if base else None,
                        "reduction": None if (lm is None or lb is None) else 1.0 - math.exp(lm - lb)})
    return out


def _exp(v):
    return None if v is None else math.exp(v)


@dataclass
class Analysis:
    """The report's numbers (``numbers``: what analysis.json holds) and the scaling fit, when there is one."""

    numbers: dict
    fit: PowerLawFit | None = None


def compute_analysis(rows: Iterable[ResultRow], eval_set: str = "val", num_bootstrap: int = 1000,
                     ci: float = 0.95, seed: int = 0, ladder: str | None = None,
                     plateau: float | None = None) -> Analysis:
    """Every analysis of docs/DESIGN.md §7 over a sweep's rows; sections that cannot be computed hold ``error``.

    ``plateau``: the training unigram entropy (nats), which the paired gap curves mark."""
    rows = list(rows)
    out: dict = {"num_runs": len(rows), "eval_set": eval_set, "eval_sets": sorted({k for r in rows for k in r.eval}),
                 "unigram_entropy": plateau}
    out["comparisons"] = {regime: comparison_table(rows, regime, base, eval_set) for regime, base in COMPARISONS}
    out["paired"] = paired_comparisons(rows, ci, plateau)
    fit = None
    try:
        sc = scaling_from_results(rows, ladder, eval_set, "total", num_bootstrap, ci, seed)
        fit = sc["fit"]
        out["scaling"] = {**sc, "fit": fit.as_dict()}
    except UserError as e:
        out["scaling"] = {"error": str(e)}
    out["frequency"] = [f for regime, base in COMPARISONS for f in frequency_from_results(rows, regime, base, eval_set)]
    out["efficiency"] = [e for regime, base in COMPARISONS for e in efficiency_from_results(rows, regime, base)]
    out["throughput"] = throughput_table(rows)
    out["params"] = _param_rows(rows)
    out["per_set"] = [{"name": r.name, "params": r.total_params, "sets": {k: v.to_dict() for k, v in r.eval.items()}}
                      for r in sorted(rows, key=lambda r: (r.total_params or 0, r.name))]
    return Analysis(json_safe(out), fit)


def analyze(rows: Iterable[ResultRow], eval_set: str = "val", num_bootstrap: int = 1000, ci: float = 0.95,
            seed: int = 0, ladder: str | None = None, plateau: float | None = None) -> dict:
    """The report's numbers as one JSON-ready dict (the content of analysis.json); see ``compute_analysis``."""
    return compute_analysis(rows, eval_set, num_bootstrap, ci, seed, ladder, plateau).numbers


def _param_rows(rows: list[ResultRow]) -> list[dict]:
    """Parameters by group per model (the first seed's row of each)."""
    seen = {}
    for r in rows:
        key = r.name.rsplit("-s", 1)[0]
        if key not in seen and r.params:
            p = r.params
            seen[key] = {"model": key, "variant": r.variant, "layers": r.num_hidden_layers, "input": p.input,
                         "body": p.body, "head": p.head, "total": p.total, "tied": p.tied}
    return sorted(seen.values(), key=lambda p: (p["total"] or 0, p["model"]))
