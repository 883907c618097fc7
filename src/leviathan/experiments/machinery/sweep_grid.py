"""grid.json, what a sweep folder records about its grid, read back typed.

    grid = read_sweep_grid("results/cpu-bpe32k")     # SweepGrid; an empty one where the folder has no grid.json
    grid.name, grid.unigram_entropy, [r.name for r in grid.runs]

``sweep.grid_snapshot`` writes grid.json; ``scripts/collect_results.py`` adds the ``unigram_entropy`` of the
training tokens to a copy committed without its data folder. Every reader (the reports' unigram plateau, the
ablation report's arms, the merge of shards, ``analyze embeddings --sweep``) reads it here, once: the keys they
use, typed; a key left out takes the field's default, so a grid.json of an earlier version (or a test's) reads.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...codec import DROP, decode
from ...data.fingerprint_fields import recorded_problem
from ...errors import UserError
from ... import json_text

GRID_JSON = "grid.json"


@dataclass
class GridRun:
    """A run as grid.json lists it: its name and the model fields the grid sets."""

    name: str
    model: dict = field(default_factory=dict)
    run_overrides: list[str] = field(default_factory=list)  # dotted run-config overrides of this run only
    # what the run is, as the sweep wrote it: a row must say the same (``identity.IDENTITY``, round 15, B18)
    regimes: list | None = None
    variant: str | None = None
    size: str | None = None
    seed: int | None = None
    data_seed: int | None = None
    overrides_recorded: bool = field(default=False, compare=False)  # grid.json held run_overrides (not null)


@dataclass
class GridEvalSet:
    """An eval set as grid.json lists it: a split of the prepared data or a text file."""

    name: str
    split: str | None = None
    text: str | None = None


@dataclass
class GridEvalOptions:
    """A grid's evaluation options as grid.json's ``eval_options`` records them (``grid_file.EvalOptions``)."""

    buckets: int = 5
    bucket_method: str = "mass"
    seq_len: int | None = None
    batch_size: int = 8
    max_tokens: int | None = None
    bucket_sets: list | None = None


@dataclass
class SweepGrid:
    """The keys of a grid.json its readers use."""

    name: str | None = None
    path: str | None = None  # the grid file the sweep read, as written (a packaged grid's: inside the package)
    data_dir: str | None = None  # as written: relative to the folder the sweep ran in
    base_overrides: list[str] = field(default_factory=list)  # dotted run-config overrides of every run
    base_config: str | None = None  # the run config file the grid builds on (None: the defaults, or not recorded)
    defaults_based: bool = field(default=False, compare=False)  # grid.json says null: the overrides on the defaults
    unigram_entropy: float | None = None  # nats; in a copy without its data folder
    runs: list[GridRun] = field(default_factory=list)
    runs_recorded: bool = field(default=False, compare=False)  # grid.json held a list of runs ([] too: D310)
    eval_sets: list[GridEvalSet] = field(default_factory=list)  # empty in a grid.json that does not list them
    eval_options: GridEvalOptions = field(default_factory=GridEvalOptions)
    data_fingerprint: str | None = None
    data_fingerprint_version: int | None = None  # None: version 1, or a grid.json written before versions
    data_legacy_fingerprint: str | None = None  # the version-1 fingerprint a version-2 folder also records
    seeds: list = field(default_factory=list)
    data_seed: int | None = None  # the grid's data order, every run's data_seed when set (round 17, D313)
    vocab_size: int | None = None  # the data's vocabulary, every run's model.vocab_size

    @classmethod
    def from_dict(cls, d: Mapping) -> SweepGrid:
        """From grid.json's object (keys it does not use are ignored; null lists read as empty)."""
        grid = decode(cls, d, DROP)  # codec: nested records typed, keys it does not use dropped
        for field_name, kind in (("runs", GridRun), ("eval_sets", GridEvalSet)):  # "val" where a list belongs ended
            value = getattr(grid, field_name)  # in an AttributeError of every report (round 12, U20, U252, U269)
            if value is not None and (not isinstance(value, list) or not all(isinstance(v, kind) for v in value)):
                raise TypeError(f"field {field_name!r} is {str(value)[:60]!r}, expected a list of objects")
        for run in grid.runs or []:
            if not isinstance(run.model, (dict, type(None))):
                raise TypeError(f"field 'runs.model' of run {run.name!r:.60} is {str(run.model)[:60]!r}, expected "
                                f"an object")
        grid.base_overrides = _overrides(grid.base_overrides, "base_overrides")
        grid.runs = list(grid.runs or [])
        grid.defaults_based = "base_config" in d and d["base_config"] is None  # round 20 (K169): unsaid = default
        grid.runs_recorded = isinstance(d.get("runs"), list)  # round 17 (D310): `runs: []` is not "no runs recorded"
        raw_runs = d.get("runs") if isinstance(d.get("runs"), list) else []
        for run, raw in zip(grid.runs, raw_runs + [None] * len(grid.runs)):
            run.overrides_recorded = isinstance(raw, Mapping) and raw.get("run_overrides") is not None  # B244
            run.model = dict(run.model or {})
            run.run_overrides = _overrides(run.run_overrides, "runs.run_overrides")
        grid.eval_sets = list(grid.eval_sets or [])
        grid.eval_options = grid.eval_options or GridEvalOptions()
        grid.seeds = list(grid.seeds or [])
        _check(grid)
        return grid


def _overrides(value, field: str) -> list[str]:
    """A list of ``KEY=VALUE`` overrides as the sweep writes them (null: none); TypeError naming ``field`` else (round
    10, P137, P138: a text where the list belongs, or an entry without '=', was read as nothing and passed)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"field {field!r} is {str(value)[:60]!r}, not a list of KEY=VALUE strings")
    for o in value:
        if not (isinstance(o, str) and "=" in o.strip("=")):
            raise TypeError(f"field {field!r} holds {str(o)[:60]!r}, not a KEY=VALUE string")
    return list(value)


def _check(grid: SweepGrid) -> None:
    """TypeError naming the field whose value grid.json cannot hold (the sweep writes none of these): a hand-edited or
    damaged file is one error, not a traceback in a report's arithmetic."""
    def text(value, field: str) -> None:
        if value is not None and not isinstance(value, str):
            raise TypeError(f"field {field!r} is {value!r}, expected text or null")

    for field in ("name", "path", "data_dir", "data_fingerprint", "data_legacy_fingerprint"):
        text(getattr(grid, field), field)
    if grid.name == "":  # round 10 (Q28): an empty name turned off the check that a report's rows are its grid's
        raise TypeError("field 'name' is '', expected the grid's name (or null)")
    problem = recorded_problem(grid.data_fingerprint, grid.data_fingerprint_version, grid.data_legacy_fingerprint,
                               ("data_fingerprint", "data_fingerprint_version", "data_legacy_fingerprint"))
    if problem is not None:
        raise TypeError(problem)
    u = grid.unigram_entropy
    if u is not None and (isinstance(u, bool) or not isinstance(u, (int, float)) or not math.isfinite(u) or u < 0):
        raise TypeError(f"field 'unigram_entropy' is {u!r}, expected a finite number >= 0 (nats) or null")
    d = grid.data_seed
    if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 0):
        raise TypeError(f"field 'data_seed' is {d!r}, expected a seed (an integer >= 0) or null")
    v = grid.vocab_size
    if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
        raise TypeError(f"field 'vocab_size' is {v!r}, expected a positive integer or null")
    if u is not None and v is not None and u > math.log(v) * (1 + 1e-9):  # round 21 (P353): 50.0 nats was reported
        raise TypeError(f"field 'unigram_entropy' is {u!r}, more than ln({v}) = {math.log(v):.3f} nats, the most a "
                        f"unigram distribution over its vocab_size {v} ids can have")
    for run in grid.runs:
        if not isinstance(run.name, str) or not run.name or run.name in (".", "..") or \
                any(c in run.name for c in "/\\\0"):
            raise TypeError(f"a run of field 'runs' has name {run.name!r:.60}, expected a run's folder name")
    opts = grid.eval_options
    for field in ("buckets", "batch_size", "seq_len", "max_tokens"):
        v = getattr(opts, field)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise TypeError(f"field 'eval_options.{field}' is {v!r}, expected a positive integer")
    if opts.bucket_method not in ("mass", "log"):
        raise TypeError(f"field 'eval_options.bucket_method' is {opts.bucket_method!r}, expected mass or log")


def grid_json_of(path: str | os.PathLike) -> Path:
    """The grid.json beside a sweep folder's results (``path``: the folder, or its results.jsonl)."""
    path = Path(path)
    return (path if os.path.isdir(path) else path.parent) / GRID_JSON  # os.path: no ENAMETOOLONG (round 18, G241)


def read_sweep_grid(path: str | os.PathLike) -> SweepGrid:
    """The grid.json of a sweep folder (``path``, or the folder of its results.jsonl); an empty ``SweepGrid`` where
    there is none. A file that is not a grid.json is a UserError naming it; '' is refused (it was the current
    folder's grid.json, or an empty grid without a word: issue 30 round 23, U480's kind)."""
    from ...value_rules import check_read_path

    check_read_path("read_sweep_grid", "path", path, "pass a sweep's --out folder or its results.jsonl")
    file = grid_json_of(path)
    if not os.path.isfile(file):  # os.path: a 300-byte name raised ENAMETOOLONG (round 18, G241's kind)
        return SweepGrid()
    try:
        return SweepGrid.from_dict(json_text.read_file(file, object_pairs_hook=json_text.no_repeats))
    except (ValueError, TypeError, AttributeError) as e:
        raise UserError(f"{file} is not a sweep's grid.json ({e}); restore it from the sweep folder (the sweep "
                        f"writes it on every start) or delete it") from None
