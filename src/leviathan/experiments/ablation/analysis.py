"""Ablation analysis: the arms, their dense_tied pairs and every number of ablations.json (the package docstring
says what the report shows and why)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import UserError
from ...io import read_metrics
from ..paired import val_points as _val_points
from ..plateau import grid_plateau
from ..results import BASELINES, ResultRow, read_results

DENSE = BASELINES["iso_body"]  # an arm keeps its dense pair's backbone: the iso-body comparison (docs/DESIGN.md §4)
ARM = "leviathan"


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


def load_sweep(path: str | Path) -> tuple[list[ResultRow], dict]:
    """(results rows, grid.json) of a sweep folder; grid.json may be absent ({})."""
    path = Path(path)
    rows = read_results(path)
    if not rows:
        raise UserError(f"no results rows in {path}; pass a sweep folder (or a copy with results.jsonl)")
    grid_file = (path if path.is_dir() else path.parent) / "grid.json"
    grid = json.loads(grid_file.read_text()) if grid_file.is_file() else {}
    return rows, grid


def pair_arms(rows: Iterable[ResultRow], grid: dict) -> list[Arm]:
    """Each leviathan row (and any other non-dense_tied row, e.g. a dense_untied control that separates the
    untied head from the generator) with the dense_tied row of the same grid, width, depth and seed.

    ``grid`` is the sweep's grid.json (``runs`` give a row without ``model`` its model fields) with
    ``size_runs``: the run-config overrides of each size.
    """
    rows = list(rows)
    specs = {r["name"]: r for r in grid.get("runs", [])}
    overrides = {name: list(runs) for name, runs in (grid.get("size_runs") or {}).items()}
    dense = {(r.hidden_size, r.num_hidden_layers, r.seed): r for r in rows if r.variant == DENSE}
    arms = []
    for r in rows:
        if r.variant == DENSE:
            continue
        d = dense.get((r.hidden_size, r.num_hidden_layers, r.seed))
        if d is None:
            continue
        model = r.model or specs.get(r.name, {}).get("model") or {}
        arms.append(Arm(r.grid or grid.get("name", "?"), r.size, r.seed, r, d, model, overrides.get(r.size, [])))
    return arms


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
        g = [r[key] for r in read_metrics(row.metrics) if r.get(key) is not None]
    return float(np.median(g)) if g else None


def summarize(arm: Arm, plateau: float | None) -> dict:
    """Every number of the report for one arm."""
    t, gap, dense_loss = arm.gap_curve()
    lev, dense = arm.lev, arm.dense
    out = {"label": arm.label, "grid": arm.grid, "size": arm.size, "seed": arm.seed,
           "variant": lev.variant, "vocab": lev.vocab_size, "width": lev.hidden_size, "layers": lev.num_hidden_layers,
           "generator": ({k.removeprefix("generator_"): v for k, v in arm.model.items()
                          if k.startswith("generator_")} if lev.variant == ARM else {}),
           "overrides": arm.overrides,
           "params": {"leviathan": lev.params and lev.params.as_dict(),
                      "dense": dense.params and dense.params.as_dict()},
           "tokens": lev.tokens, "curve": {"tokens": t.tolist(), "gap": gap.tolist()},
           "gap_at": {f: _at(t, gap, f) for f in (0.25, 0.5, 0.75, 1.0)}, "plateau": plateau}
    if plateau is not None and len(t):
        past = t[dense_loss < plateau - 0.5]  # clearly below the unigram loss
        out["tokens_past_plateau"] = float(past[0]) if len(past) else None
    out["eval"] = {}
    for name, ev in lev.eval.items():
        dv = dense.eval.get(name)
        if dv is None or dv.loss is None or ev.loss is None:
            continue
        out["eval"][name] = {"lev_loss": ev.loss, "dense_loss": dv.loss, "gap": ev.loss - dv.loss,
                             "ppl_change": math.exp(ev.loss - dv.loss) - 1.0,
                             "bpb_gap": (ev.bpb - dv.bpb) if ev.bpb and dv.bpb else None}
    bl, bd = lev.buckets.get("val"), dense.buckets.get("val")
    if bl is not None and bd is not None:
        out["buckets"] = [None if a is None or b is None else 1.0 - math.exp(a - b)
                          for a, b in zip(bl.loss, bd.loss)]  # perplexity reduction, rare -> frequent
    # a tied table's gradient mixes its input and head uses, so compare leviathan's input side with its own head
    gi, gh = _median_grad(lev), _median_grad(lev, "grad_norm_head")
    out["input_grad_norm"], out["head_grad_norm"] = gi, gh
    out["input_to_head_grad"] = gi / gh if gi and gh else None
    out["tokens_per_s_ratio"] = (lev.tokens_per_s / dense.tokens_per_s
                                 if lev.tokens_per_s and dense.tokens_per_s else None)
    return out


def _grid_yaml(name: str) -> dict:
    """The grid's YAML (sizes' run overrides, ``ablations`` factors) when it can be found by name, else {}."""
    from ...config import load_yaml
    from ..grid import find_grid

    try:
        return load_yaml(find_grid(name))
    except (UserError, OSError):
        return {}


def collect(paths: list[str | Path]) -> dict:
    """Arms of every sweep, their summaries, and the factors (figure groups) the grids declare."""
    arms, summaries, factors = [], [], {}
    for path in paths:
        rows, grid = load_sweep(path)
        name = grid.get("name") or rows[0].grid or "?"
        raw = _grid_yaml(name)
        sizes = raw.get("sizes") or {}
        grid = {**grid, "size_runs": {s: _flat_run(v) for s, v in sizes.items() if isinstance(v, dict)}}
        plateau = grid_plateau(grid)
        softmax = grid_softmax(grid)
        for arm in pair_arms(rows, grid):
            arms.append(arm)
            summaries.append({**summarize(arm, plateau), "softmax": softmax})
        for factor, sizes_of_factor in (raw.get("ablations") or {}).items():
            factors.setdefault(factor, []).extend(_factor_label(name, entry) for entry in sizes_of_factor)
    by_size: dict[str, list[str]] = {}
    for s in summaries:
        if s["variant"] == ARM:
            by_size.setdefault(s["size"], []).append(s["label"])
    for size, labels in by_size.items():  # the same size in several grids: the vocabulary ablation
        if len({lab.split("/")[0] for lab in labels}) > 1:
            factors[f"vocabulary ({size})"] = sorted(labels, key=lambda lab: _vocab_of(summaries, lab))
    return {"arms": summaries, "factors": factors}


def grid_softmax(grid: Mapping) -> str:
    """``corpus`` when a sweep's runs score only the ids that occur in its data (``data.softmax=corpus`` among
    the grid's base overrides), else ``full``: corpus losses compare within their pair, not across grids."""
    return "corpus" if "data.softmax=corpus" in (grid.get("base_overrides") or []) else "full"


def _factor_label(grid_name: str, entry: str) -> str:
    """An ``ablations:`` entry, ``SIZE`` (its leviathan run) or ``SIZE:VARIANT``, as an arm label."""
    size, _, variant = str(entry).partition(":")
    return f"{grid_name.removeprefix('ablate-')}/{size}" + (f" ({variant})" if variant and variant != ARM else "")


def _flat_run(size_spec: dict) -> list[str]:
    from ..grid import flatten

    return flatten(size_spec.get("run") or {})


def _vocab_of(summaries: list[dict], label: str) -> int:
    return next((s["vocab"] or 0) for s in summaries if s["label"] == label)


