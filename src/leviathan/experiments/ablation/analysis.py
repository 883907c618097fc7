"""Ablation analysis: the arms, their dense_tied pairs and every number of ablations.json (the package docstring
says what the report shows and why)."""

from __future__ import annotations

import math
import sys
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import UserError
from ...model.accounting import ParamCounts
from ...train.metrics import read_metric_rows
from ..machinery.grid_file import GridFile, read_grid_file
from .grid_source import grid_file_of, size_overrides
from ..method.paired import val_points as _val_points
from ..machinery.data_match import grid_plateau
from ..method.records import Record, optional
from ..machinery.results import BASELINES, ResultRow, read_results
from ..machinery.grid_agreement import check_grid_describes_rows
from ..machinery.shards import check_shard_settings
from ..machinery.sweep_grid import SweepGrid, grid_json_of, read_sweep_grid
from .evaluation import check_one_evaluation_across

DENSE = BASELINES["iso_body"]  # an arm keeps its dense pair's backbone: the iso-body comparison (docs/DESIGN.md §4)
ARM = "leviathan"
GENERATOR_SHAPE = ("seed_dim", "modes", "knots", "rank")  # d_s, M, kappa, r: the shape the README's table shows


@dataclass
class Arm:
    """A leviathan run and its dense_tied pair (same grid, backbone and seed)."""

    grid: str
    size: str
    seed: int
    lev: ResultRow
    dense: ResultRow
    model: dict = field(default_factory=dict)
    overrides: list = field(default_factory=list)

    @property
    def label(self) -> str:
        suffix = "" if self.lev.variant == ARM else f" ({self.lev.variant})"
        return f"{self.grid.removeprefix('ablate-')}/{self.size}{suffix}"

    def gap_curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tokens, leviathan - dense validation loss, dense loss) at the validation points both runs have."""
        la = _val_points(self.lev)
        lb = _val_points(self.dense)
        t = np.array(sorted(set(la) & set(lb)), dtype=float)
        return t, np.array([la[x] - lb[x] for x in t]), np.array([lb[x] for x in t])


@dataclass
class PairParams(Record):
    """The parameter groups of an arm and of its dense pair."""

    leviathan: ParamCounts | None
    dense: ParamCounts | None


@dataclass
class GapSeries(Record):
    """The arm's validation loss minus its dense pair's, at the validation points both runs have."""

    tokens: list[float]
    gap: list[float]


@dataclass
class EvalGap(Record):
    """One eval set at the end of training: both losses, the gap, the perplexity change and the bits-per-byte gap."""

    lev_loss: float
    dense_loss: float
    gap: float
    ppl_change: float
    bpb_gap: float | None


@dataclass
class ArmSummary(Record):
    """Every number of the report for one arm (``as_dict``: its entry in ablations.json)."""

    label: str
    grid: str
    size: str
    seed: int
    variant: str | None
    vocab: int | None
    width: int | None
    layers: int | None
    generator: dict  # a leviathan arm's generator_* model fields, without the prefix ({} for other variants)
    overrides: list[str]  # the run-config changes of its size
    params: PairParams
    tokens: int | None
    curve: GapSeries
    gap_at: dict[float, float | None]  # the gap at 1/4, 1/2, 3/4 and the end of the run
    plateau: float | None
    tokens_past_plateau: float | None  # first point where dense is 0.5 nats below the plateau (JSON: with a plateau)
    eval: dict[str, EvalGap]
    buckets: list[float | None] | None = optional()  # perplexity reduction per bucket, rare -> frequent
    input_grad_norm: float | None = None  # medians over training
    head_grad_norm: float | None = None
    input_to_head_grad: float | None = None
    tokens_per_s_ratio: float | None = None
    softmax: str = "full"  # ``grid_softmax``

    @property
    def shape(self) -> tuple | None:
        """(d_s, M, kappa, r) of a leviathan arm's generator (None where not recorded); None for other variants."""
        return tuple(self.generator.get(k) for k in GENERATOR_SHAPE) if self.generator else None

    def as_dict(self) -> dict:
        """The record's JSON; ``tokens_past_plateau`` only where there is a plateau and a curve to be past it."""
        out = super().as_dict()
        if self.plateau is None or not self.curve.tokens:
            del out["tokens_past_plateau"]  # no plateau to be past
        return out


@dataclass
class AblationResult(Record):
    """Every arm's summary, and the figure groups: factor -> arm labels (ablations.json)."""

    arms: list[ArmSummary]
    factors: dict[str, list[str]]
    left_out: list[str] | None = optional()  # the runs with no dense_tied pair, each with why (round 14, B358)


def load_sweep(path: str | Path) -> tuple[list[ResultRow], SweepGrid]:
    """(results rows, grid.json) of a sweep folder; grid.json may be absent (an empty ``SweepGrid``)."""
    path = Path(path)
    rows = read_results(path)
    if not rows:
        raise UserError(f"no results rows in {path}; pass a sweep folder (or a copy with results.jsonl)")
    grid = read_sweep_grid(path)
    check_grid_describes_rows(rows, grid, str(grid_json_of(path)), str(path))  # round 9, N27
    return rows, grid


def pair_arms(rows: Iterable[ResultRow], grid: SweepGrid, size_runs: dict[str, list[str]] | None = None) -> list[Arm]:
    """Each leviathan row (and any other non-dense_tied row, e.g. a dense_untied control) with the dense_tied row of the
    same grid, width, depth and seed. ``grid`` is the sweep's grid.json (its ``runs`` give a row without ``model`` its
    model fields); ``size_runs``: each size's run-config overrides (from the grid's YAML).
    """
    rows = list(rows)
    specs = {r.name: r for r in grid.runs}
    size_runs = size_runs or {}
    dense = {(r.hidden_size, r.num_hidden_layers, r.seed): r for r in rows if r.variant == DENSE}
    arms = []
    for r in rows:
        if r.variant == DENSE:
            continue
        d = dense.get((r.hidden_size, r.num_hidden_layers, r.seed))
        if d is None:
            continue
        spec = specs.get(r.name)
        model = r.model or (spec.model if spec else {})
        arms.append(Arm(r.grid or grid.name or "?", r.size, r.seed, r, d, model, list(size_runs.get(r.size, []))))
    return arms


def unpaired(rows: Iterable[ResultRow], grid_name: str, folder: str) -> list[str]:
    """One line per run of ``rows`` that ``pair_arms`` leaves out (not dense_tied, and no dense_tied row of the same
    width, depth and seed): a leviathan run at a width its backbone's dense_tied was not trained at was left out of
    the report without a word (issue 30 round 14, B358)."""
    rows = list(rows)
    dense = {(r.hidden_size, r.num_hidden_layers, r.seed) for r in rows if r.variant == DENSE}
    return [f"run {r.name!r} of grid {grid_name!r} ({folder}; {r.variant}, width {r.hidden_size}, depth "
            f"{r.num_hidden_layers}, seed {r.seed}) is left out: no {DENSE} run of the same width, depth and seed in "
            f"its folder to pair it with"
            for r in rows if r.variant != DENSE and (r.hidden_size, r.num_hidden_layers, r.seed) not in dense]


def _at(t: np.ndarray, g: np.ndarray, frac: float) -> float | None:
    if not len(t):
        return None
    return float(np.interp(frac * t[-1], t, g))


def _median_grad(row: ResultRow, key: str = "grad_norm_input") -> float | None:
    """Median over training of a logged gradient norm: from the row's curve (its list, else the median
    it carries), else the run's metrics.jsonl (present only where the run folder is)."""
    g = [x for x in (getattr(row.curve, key) if row.curve else []) if x is not None]
    if not g and row.curve and getattr(row.curve, f"{key}_median") is not None:
        return float(getattr(row.curve, f"{key}_median"))
    if not g and row.metrics and Path(row.metrics).is_file():
        g = [v for r in read_metric_rows(row.metrics) if (v := getattr(r, key)) is not None]
    return float(np.median(g)) if g else None


def summarize(arm: Arm, plateau: float | None, softmax: str = "full") -> ArmSummary:
    """Every number of the report for one arm; ``softmax``: its grid's (``grid_softmax``)."""
    t, gap, dense_loss = arm.gap_curve()
    lev, dense = arm.lev, arm.dense
    past = None
    if plateau is not None and len(t):
        below = t[dense_loss < plateau - 0.5]  # clearly below the unigram loss
        past = float(below[0]) if len(below) else None
    bl, bd = lev.buckets.get("val"), dense.buckets.get("val")
    # a tied table's gradient mixes its input and head uses, so compare leviathan's input side with its own head
    gi, gh = _median_grad(lev), _median_grad(lev, "grad_norm_head")
    return ArmSummary(
        label=arm.label, grid=arm.grid, size=arm.size, seed=arm.seed, variant=lev.variant, vocab=lev.vocab_size,
        width=lev.hidden_size, layers=lev.num_hidden_layers,
        generator=({k.removeprefix("generator_"): v for k, v in arm.model.items() if k.startswith("generator_")}
                   if lev.variant == ARM else {}),
        overrides=arm.overrides, params=PairParams(lev.params, dense.params), tokens=lev.tokens,
        curve=GapSeries(t.tolist(), gap.tolist()), gap_at={f: _at(t, gap, f) for f in (0.25, 0.5, 0.75, 1.0)},
        plateau=plateau, tokens_past_plateau=past, eval=_eval_gaps(lev, dense),
        buckets=None if bl is None or bd is None else [None if a is None or b is None else 1.0 - math.exp(a - b)
                                                       for a, b in zip(bl.loss, bd.loss)],  # rare -> frequent
        input_grad_norm=gi, head_grad_norm=gh, input_to_head_grad=gi / gh if gi and gh else None,
        tokens_per_s_ratio=(lev.tokens_per_s / dense.tokens_per_s if lev.tokens_per_s and dense.tokens_per_s
                            else None),
        softmax=softmax)


def _eval_gaps(lev: ResultRow, dense: ResultRow) -> dict[str, EvalGap]:
    """Per eval set both runs have a loss on: the gap and what follows from it."""
    out = {}
    for name, ev in lev.eval.items():
        dense_loss, dense_bpb = dense.metric(name, "loss"), dense.metric(name, "bpb")
        if dense_loss is None or ev.loss is None:
            continue
        out[name] = EvalGap(lev_loss=ev.loss, dense_loss=dense_loss, gap=ev.loss - dense_loss,
                            ppl_change=math.exp(ev.loss - dense_loss) - 1.0,
                            bpb_gap=(ev.bpb - dense_bpb) if ev.bpb and dense_bpb else None)
    return out


def _grid_file(name: str) -> GridFile:
    """The grid's YAML (sizes' run overrides, ``ablations`` factors) when it can be found by name, else an empty one."""
    try:
        return read_grid_file(name)[0]
    except (UserError, OSError):
        return GridFile()


def collect(paths: list[str | Path]) -> AblationResult:
    """Arms of every sweep, their summaries, and the factors (figure groups) the grids declare."""

    summaries, factors, left_out, per_folder = [], {}, [], []
    seen: dict[Path, str] = {}
    runs_seen: dict[tuple[str, str], str] = {}
    grids_seen: dict[str, tuple[Path, SweepGrid]] = {}
    for path in paths:
        folder = Path(os.path.realpath(path))
        folder = folder if folder.is_dir() else folder.parent
        if folder in seen:  # each arm was shown twice, as two arms (issue 30 round 7)
            raise UserError(f"{str(path)!r} is the sweep folder {seen[folder]!r} again: its arms would be counted "
                            f"twice; give each sweep folder once")
        seen[folder] = str(path)
        rows, grid = load_sweep(path)
        name = grid.name or rows[0].grid or "?"
        _check_runs_once(name, rows, str(path), runs_seen)
        _check_shards_of_one_grid(name, folder, grid, grids_seen)
        per_folder.append((str(path), rows))
        left_out += unpaired(rows, name, str(path))
        gf, warning = grid_file_of(grid, str(path)) if grid.name else (_grid_file(name), None)  # round 15, B244
        if warning:
            print(warning, file=sys.stderr)
        size_runs = size_overrides(gf)
        for run in grid.runs if warning else []:  # the file is not the sweep's: grid.json's own overrides
            size_runs.setdefault(run.size, list(run.run_overrides))
        plateau, softmax = grid_plateau(grid), grid_softmax(grid)
        summaries += [summarize(arm, plateau, softmax) for arm in pair_arms(rows, grid, size_runs)]
        for factor, sizes_of_factor in (gf.ablations or {}).items():
            factors.setdefault(factor, []).extend(_factor_label(name, entry) for entry in sizes_of_factor)
    by_size: dict[str, list[str]] = {}
    for s in summaries:
        if s.variant == ARM:
            by_size.setdefault(s.size, []).append(s.label)
    for size, labels in by_size.items():  # the same size in several grids: the vocabulary ablation
        if len({lab.split("/")[0] for lab in labels}) > 1:
            factors[f"vocabulary ({size})"] = sorted(labels, key=lambda lab: _vocab_of(summaries, lab))
    check_one_evaluation_across(per_folder)  # round 14 (B247)
    return AblationResult(summaries, factors, left_out or None)


def _check_runs_once(grid: str, rows, source: str, seen: dict[tuple[str, str], str]) -> None:
    """UserError when a run of ``grid`` already came from another folder: two folders of one grid (a copy, or the
    same grid evaluated otherwise) had each run shown twice, as two arms, exit 0 (issue 30 round 8, I16). Records
    ``source`` as where each of ``rows`` came from."""
    for row in rows:
        earlier = seen.get((grid, row.name))
        if earlier is not None and earlier != source:
            raise UserError(f"run {row.name!r} of grid {grid!r} is in {earlier!r} and again in {source!r}: its arm would "
                            f"be counted twice; give each grid's sweep folder once (merge its shards first: "
                            f"leviathan report SHARD... --out DIR reads them together)")
        seen[(grid, row.name)] = source


def _check_shards_of_one_grid(name: str, folder: Path, grid: SweepGrid,
                              seen: dict[str, tuple[Path, SweepGrid]]) -> None:
    """UserError when an earlier folder of the call holds grid ``name`` too and was started with other settings
    (``shards.check_shard_settings``): its arms and this folder's are labelled alike (GRID/SIZE), so `report
    --ablation sw1 swB` of grid g1 swept again with optim.lr=0.001 and seed 1 showed two identical 'g1/a' rows of
    different runs, exit 0 (issue 30 round 17, D235), where the plain report refused the pair. Folders of one grid
    with the same settings are its shards (disjoint runs, ``_check_runs_once``). Records ``folder`` under ``name``."""
    if name in seen:
        try:
            check_shard_settings(seen[name][1], grid, seen[name][0], folder)
        except UserError as e:
            raise UserError(f"report --ablation reads two folders of one grid as its shards, and {e}; to compare "
                            f"the settings as arms, sweep the other one under a grid name of its own") from None
    seen.setdefault(name, (folder, grid))


def grid_softmax(grid: SweepGrid) -> str:
    """``corpus`` when a sweep's runs score only the ids that occur in its data (``data.softmax=corpus`` among
    the grid's base overrides), else ``full``: corpus losses compare within their pair, not across grids."""
    return "corpus" if "data.softmax=corpus" in grid.base_overrides else "full"


def _factor_label(grid_name: str, entry: str) -> str:
    """An ``ablations:`` entry, ``SIZE`` (its leviathan run) or ``SIZE:VARIANT``, as an arm label."""
    size, _, variant = str(entry).partition(":")
    return f"{grid_name.removeprefix('ablate-')}/{size}" + (f" ({variant})" if variant and variant != ARM else "")


def _vocab_of(summaries: list[ArmSummary], label: str) -> int:
    return next((s.vocab or 0) for s in summaries if s.label == label)


def read_ablations(path) -> AblationResult:
    """ablations.json (a report folder or the file) as the ``AblationResult`` it was written from: the one reader
    of the file. A missing, unreadable or foreign file is an OSError / ValueError for the caller to judge."""
    return AblationResult.read_file(path, "ablations.json")
