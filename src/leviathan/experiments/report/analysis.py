"""The numbers of a sweep report (docs/DESIGN.md §7): every table and figure reads them, analysis.json holds them.

``analyze(rows)`` runs every analysis over a sweep's rows and returns one ``Analysis``, a record
(``records.Record``) of typed sections whose ``as_dict()`` is analysis.json: ``comparisons`` (per regime of
``results.COMPARISONS``, per (size, seed, variant) a ``ComparisonEntry``: loss, perplexity, bits per byte, the
baseline's, and the perplexity reduction 1 - ppl / ppl_baseline), ``scaling`` (the dense ladder's fit and every
other run's dense-equivalent size, a ``scaling.LadderFit``; ``NotComputed`` with the reason when the ladder cannot
be fitted; None for rows with no scaling run, whose report leaves the section and the frontier out),
``frequency``, ``efficiency``, ``throughput`` and ``paired`` over the same comparison pairs (``experiments.method``),
``params`` (parameters by group per model) and ``per_set`` (every run on every eval set). Optional sections, left
out of analysis.json when absent so that a report without them is unchanged: ``lr_sweep`` (given the pre-sweep),
``fair_shot`` (given the committed round it re-examines), ``embeddings`` (the folder's ``embeddings/*.json``) and
``width`` (rows pairing the generator with the untied table at two or more body sizes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ...errors import UserError
from ..method.embeddings import EmbeddingRecord
from ..method.efficiency import EfficiencyEntry, ThroughputEntry, efficiency_from_results, throughput_table
from ..method.frequency import FrequencyEntry, frequency_from_results
from ..method.fair_shot import FairShot
from ..method.lr_sweep import LrChoice
from ..method.paired import PairedComparison, check_plateau, paired_comparisons
from ..method.records import Record, optional
from ...eval.result import EvalResult
from ..machinery.results import (COMPARISONS, ResultRow, check_comparison, check_eval_set_held, check_typed_rows,
                                 comparison_groups)
from ..method.scaling import LadderFit, scaling_from_results
from ..method.width import WidthPanel, width_panel
from .embeddings import EmbeddingsSection, embeddings_section


@dataclass
class ComparisonEntry(Record):
    """One run against the baseline variant of its (regime, size, seed): perplexities and the reduction."""

    regime: str
    size: str
    seed: int | None
    variant: str
    name: str
    params: int | None
    layers: int | None
    baseline: str
    baseline_params: int | None
    baseline_layers: int | None
    loss: float | None
    ppl: float | None
    baseline_loss: float | None
    baseline_ppl: float | None
    bpb: float | None
    baseline_bpb: float | None
    reduction: float | None  # 1 - ppl / ppl_baseline


@dataclass
class ParamRow(Record):
    """Parameters by group of one model (the first seed's row)."""

    model: str  # the run name without its seed
    variant: str | None
    layers: int | None
    input: int | None
    body: int | None
    head: int | None
    total: int | None
    tied: bool | None


@dataclass
class RunSets(Record):
    """One run's results on every eval set it was evaluated on."""

    name: str
    params: int | None
    sets: dict[str, EvalResult]


@dataclass
class NotComputed(Record):
    """A section that could not be computed (no dense ladder, say), and why."""

    error: str


@dataclass
class Analysis(Record):
    """Every number of a sweep report, by section (see the module docstring); ``as_dict()`` is analysis.json."""

    num_runs: int
    eval_set: str  # the eval set the tables use
    eval_sets: list[str]  # every eval set in the rows
    unigram_entropy: float | None  # the unigram plateau the gap curves mark
    comparisons: dict[str, list[ComparisonEntry]]
    paired: list[PairedComparison]
    scaling: LadderFit | NotComputed | None  # None: the rows have no dense ladder (no run in the scaling regime)
    frequency: list[FrequencyEntry]
    efficiency: list[EfficiencyEntry]
    throughput: list[ThroughputEntry]
    params: list[ParamRow]
    per_set: list[RunSets]
    lr_sweep: dict[str, LrChoice] | None = optional()
    embeddings: EmbeddingsSection | None = optional()  # None: no records of the input side
    fair_shot: FairShot | None = optional()  # the fair-shot round's rules applied (``--fair-shot``)
    width: WidthPanel | None = optional()  # None: fewer than two body sizes pair the generator with the untied table
    notes: list[str] | None = optional()  # what the readers said about the rows (damaged lines, duplicates kept once)

    @property
    def ladder(self) -> LadderFit | None:
        """The scaling fit, or None where it was not computed."""
        return self.scaling if isinstance(self.scaling, LadderFit) else None


def comparison_table(rows: Iterable[ResultRow], regime: str, baseline: str,
                     eval_set: str = "val") -> list[ComparisonEntry]:
    """Per (size, seed, variant): loss, ppl, the baseline's, and the relative ppl reduction 1 - ppl/ppl_base. The rows,
    regime, baseline and eval set are checked as ``analyze``'s are."""
    baseline = check_comparison("comparison_table", regime, baseline)
    rows = check_typed_rows(rows, "comparison_table", compared=True)
    check_eval_set_held("comparison_table", rows, eval_set)
    out = []
    for (size, seed), by_variant in comparison_groups(rows, regime).items():
        base = by_variant.get(baseline)
        lb = base.loss(eval_set) if base else None
        for variant, r in by_variant.items():
            if variant == baseline:
                continue
            lm = r.loss(eval_set)
            out.append(ComparisonEntry(
                regime=regime, size=size, seed=seed, variant=variant, name=r.name, params=r.total_params,
                layers=r.num_hidden_layers, baseline=baseline, baseline_params=base.total_params if base else None,
                baseline_layers=base.num_hidden_layers if base else None, loss=lm, ppl=_exp(lm), baseline_loss=lb,
                baseline_ppl=_exp(lb), bpb=r.bpb(eval_set), baseline_bpb=base.bpb(eval_set) if base else None,
                reduction=None if (lm is None or lb is None) else 1.0 - math.exp(lm - lb)))
    return out


def _exp(v):
    return None if v is None else math.exp(v)


def analyze(rows: Iterable[ResultRow], eval_set: str = "val", num_bootstrap: int = 1000, ci: float = 0.95,
            seed: int = 0, ladder: str | None = None, plateau: float | None = None,
            embeddings: list[EmbeddingRecord] | None = None) -> Analysis:
    """Every analysis of docs/DESIGN.md §7 over a sweep's rows; a scaling fit that cannot be made is ``NotComputed``.
    ``plateau``: the training unigram entropy (nats) the paired gap curves mark; ``embeddings``: the records of
    ``leviathan analyze embeddings`` (none: no such section).

    The rows are held to ``read_results``' rules (``results.check_typed_rows``): a run given twice, the same
    measurement, counts once and ``notes`` says so; two different rows of a run, rows evaluated differently and an
    ``eval_set`` no row was evaluated on are refused (issue 30 round 23, U415, U417, U420: an Analysis of 8 runs for
    4, of arms evaluated at two seq_lens, of losses None, without a word).

    Parameters: the rows and the report's optional inputs (pre-sweeps, fair shot, embeddings, notes), keyword-
    defaulted.
    """
    from .arguments import check_analysis_options

    check_analysis_options("analyze", eval_set, num_bootstrap, ci, seed, ladder)  # write_report's rules (W476-W478)
    check_plateau("analyze", plateau)
    notes: list[str] = []
    rows = check_typed_rows(rows, "analyze", one_per_arm=True, compared=True, notes=notes)
    check_eval_set_held("analyze", rows, eval_set)
    return Analysis(
        num_runs=len(rows), eval_set=eval_set, eval_sets=sorted({k for r in rows for k in r.eval}),
        unigram_entropy=plateau,
        comparisons={regime: comparison_table(rows, regime, base, eval_set) for regime, base in COMPARISONS},
        paired=paired_comparisons(rows, ci, plateau),
        scaling=_scaling(rows, ladder, eval_set, num_bootstrap, ci, seed),
        frequency=[f for regime, base in COMPARISONS for f in frequency_from_results(rows, regime, base, eval_set)],
        efficiency=[e for regime, base in COMPARISONS for e in efficiency_from_results(rows, regime, base)],
        throughput=throughput_table(rows), params=_param_rows(rows),
        per_set=[RunSets(r.name, r.total_params, dict(r.eval))
                 for r in sorted(rows, key=lambda r: (r.total_params or 0, r.name))],
        embeddings=embeddings_section(embeddings) if embeddings else None,
        width=width_panel(rows, eval_set, ci), notes=[n.removeprefix("note: ") for n in notes] or None)


def _scaling(rows: list[ResultRow], ladder: str | None, eval_set: str, num_bootstrap: int, ci: float,
             seed: int) -> LadderFit | NotComputed | None:
    """The dense ladder's fit; ``NotComputed`` where the ladder cannot be fitted; None for rows without a ladder
    (no run in the scaling regime and no ``ladder`` variant named), whose report leaves the section out."""
    if ladder is None and not any(r.in_regime("scaling") for r in rows):
        return None
    try:
        return scaling_from_results(rows, ladder, eval_set, "total", num_bootstrap, ci, seed)
    except UserError as e:
        return NotComputed(str(e))


def _param_rows(rows: list[ResultRow]) -> list[ParamRow]:
    """Parameters by group per model (the first seed's row of each)."""
    seen = {}
    for r in rows:
        key = r.name.rsplit("-s", 1)[0]
        if key not in seen and r.params:
            p = r.params
            seen[key] = ParamRow(key, r.variant, r.num_hidden_layers, p.input, p.body, p.head, p.total, p.tied)
    return sorted(seen.values(), key=lambda p: (p.total or 0, p.model))


def read_analysis(path) -> Analysis:
    """analysis.json (a report folder or the file) as the ``Analysis`` it was written from (``Record.from_dict``):
    the one reader of the file, so the demo and any later reader use attributes, never keys. A missing, unreadable
    or foreign file is an OSError / ValueError for the caller to judge."""
    return Analysis.read_file(path, "analysis.json")
