"""Resumable sweep: train every run of a grid, evaluate it, append one JSON row per run to results.jsonl.

    leviathan sweep --grid cpu --out runs/cpu          # kill it any time; the same line resumes

Layout of ``OUT``:

    OUT/grid.json            the expanded grid (runs, regimes, parameter counts), rewritten on every start once
                             every row kept agrees with it (``experiments.machinery.drift``: a changed grid is refused)
    OUT/results.jsonl        one row per finished run (the input of ``leviathan analyze`` / ``report``)
    OUT/runs/<run name>/     the run directory given to ``leviathan.train.loop.train`` (checkpoints,
                             metrics.jsonl); ``sweep_train.json`` holds its training summary
    OUT/.lock                held while a sweep runs: a second sweep on the same OUT refuses to start
    OUT/leviathan_output.json   the marker: the folder is the sweep's (``leviathan.ownership``; a folder without it
                             is used only when it holds none of these names)

Resuming. Runs with a row in results.jsonl are skipped; every other run trains with ``resume="auto"`` (a killed run
continues from its latest complete checkpoint; one whose ``sweep_train.json`` exists goes straight to evaluation).
Rows are appended atomically (``results.append_result``): a killed sweep leaves whole rows or none.

Several GPUs. The sweep trains its runs one after another in one process (it refuses to start under torchrun).
``leviathan sweep --grid NAME --commands`` prints one ``leviathan train`` line per run (same config, same run dir);
launch them with torchrun or a scheduler, then run the sweep once more: each run is found finished, evaluated and
given its row (throughput then comes from the run's metrics.jsonl).

Evaluation (``evaluate_run``): per eval set of the grid (a split of the prepared data, or a text file tokenized with
the data's tokenizer, relative paths under ``--data-root`` / ``$LEVIATHAN_DATA``), loss, perplexity and bits per
byte, and the losses per training-frequency bucket (``eval.frequency``, buckets from the data's train_freq.npy).
``max_tokens`` caps the tokens per set (bits per byte then uses the same share of the text's bytes). The row is
``results.ResultRow`` (``make_row``). Tests replace ``leviathan.train.loop.train`` and ``evaluate_run`` with
monkeypatch to exercise the sweep without training.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import fnmatch
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ...data.companions import load_train_freq
from ...errors import UserError, missing, not_a_file, not_regular
from ...eval.score import evaluate_checkpoint
from ...eval.stream import EvalStream, short_split_problem
from ...io import data_root, hardware_info
from ...ownership import CONTAINERS, check_apart, check_claim, check_not_inside, mark
from .drift import check_rows_against_grid, check_run_folders_against_grid
from .identity import SKIPPED_EVAL_NOTE, check_evaluated_like, evaluation_settings
from .grid import Grid, RunSpec, base_problem
from ...train.metrics import read_metric_rows
from ...train.summary import TrainSummary
from .provenance import DataProvenance, data_provenance, portable_path, run_provenance
from .shards import shard_of
from ...eval.result import EvalResult
from .results import (RESULTS, BucketResult, ResultRow, TrainingCurve, append_result, json_safe,
                      read_results)
from ...storage import api_write


from .summary_check import TRAIN_SUMMARY  # noqa: E402  (its one definition, beside its reader)


# --------------------------------------------------------------------------------------------
# results.jsonl


@contextlib.contextmanager
def sweep_lock(out_dir: Path):
    """Exclusive lock on OUT/.lock (``leviathan.locking``): two sweeps must not train the same run at once."""
    from ...locking import folder_lock

    check_not_inside(out_dir, "--out", ("train", "prepare", "export"), within=CONTAINERS, verb="sweep")  # D141
    with folder_lock(out_dir, "sweep", "use a different --out (another sweep is running there)"):
        check_claim(out_dir, "sweep", SWEEP_FILES, "use a different --out", legacy=_earlier_sweep,
                    alone=True)  # not among a user's files (round 18, G291)
        yield


# What a sweep writes into its --out (``ownership.check_claim``: none may be a user's file already there).
SWEEP_FILES = (RESULTS, "grid.json", "runs")


def _earlier_sweep(out_dir: Path) -> bool:
    """A sweep folder an earlier version wrote (no ownership marker yet): a grid.json that reads as one and lists runs
    (``sweep_grid``, the file's one reader; a damaged or foreign grid.json is not a sweep's)."""
    from ...errors import UserError
    from ...file_kinds import is_collected
    from ...ownership import read_marker
    from .sweep_grid import GRID_JSON, read_sweep_grid

    if not (out_dir / GRID_JSON).is_file():
        _check_grid_json_there(out_dir)
        return False
    try:
        grid = read_sweep_grid(out_dir)
        listed = bool(grid.runs)
        if not listed:  # runs: [] was blamed on the copy, "would write over grid.json, ..." (round 17, D317)
            _check_grid_json_there(out_dir, "a grid.json that lists no runs (edited, or replaced: the sweep writes "
                                            "every run of its grid there)")
    except UserError:
        marker = read_marker(out_dir)
        if marker is not None and marker.verb == "sweep":
            # a sweep's folder (copied or moved: its marker is not proof) whose grid.json is damaged: that is the
            # problem to name, not "would write over grid.json, which it did not create" (issue 30 round 9, M30)
            raise
        return False
    except (OSError, UnicodeDecodeError):
        return False
    if is_collected(out_dir):  # its key, even null (round 21, N345's kind)
        raise _collected_folder(out_dir)
    return listed


def _collected_folder(out_dir: Path):
    """The UserError for a sweep's --out that is a results folder scripts/collect_results.py wrote (its grid.json holds
    the ``unigram_entropy`` only collect adds): the sweep took it as an earlier sweep of its own and wrote its run
    folders, its marker and a new row among the committed rows, after which collect_results refused the folder as a
    sweep's output (issue 30 round 19, H170, H171). ``--reuse`` is how committed rows continue a sweep."""
    from ...errors import UserError

    return UserError(f"{str(out_dir)!r} is a results folder scripts/collect_results.py wrote (its grid.json records the "
                     f"unigram_entropy collect adds), not a sweep's --out: the sweep would write its run folders among "
                     f"the collected rows; nothing was written; to continue from those rows, pass "
                     f"--reuse {str(out_dir)!r} with a new --out")


def _check_grid_json_there(out_dir: Path, problem: str = "no grid.json") -> None:
    """UserError naming the missing grid.json of a folder whose marker (copied or moved: no proof) says a sweep wrote
    it and that holds a sweep's rows or runs: the line said the folder 'has no leviathan_output.json: no leviathan verb
    made it' though it had one, and named neither grid.json nor the fix (issue 30 round 16, C255). ``problem``: what
    is wrong with grid.json; one that lists no runs was blamed on the copy the same way (round 17, D317)."""
    from ...errors import UserError
    from ...ownership import MARKER, read_marker

    marker = read_marker(out_dir)
    if marker is None or marker.verb != "sweep" or not _holds_rows(out_dir / RESULTS):
        return  # a copied marker beside a user's results.jsonl of notes: that file is the user's (round 8, G4)
    held = [name for name in (RESULTS, "runs") if (out_dir / name).exists()]
    raise UserError(f"{str(out_dir)!r} holds a sweep's {' and '.join(held)} (its {MARKER} says `leviathan sweep` "
                    f"wrote it, in another folder: a copy, or a move to another disk), but {problem}; the sweep "
                    f"writes grid.json beside its rows, and it proves them its own; nothing was written; put the "
                    f"sweep's grid.json back (from the folder this one was copied from), or sweep into a new --out")


def _holds_rows(results: Path) -> bool:
    """Whether ``results`` holds at least one results row (read quietly: the claim's error says what it is)."""
    try:
        return bool(read_results(results, report=lambda message: None))
    except (UserError, OSError):
        return False


# --------------------------------------------------------------------------------------------
# building and evaluating runs


def build_run_config(grid: Grid, spec: RunSpec):
    """The run's ``RunConfig``: the grid's base config + base overrides + the run's model/seeds/data."""
    from ...run_config import load_run_config

    return load_run_config(str(grid.base_config) if grid.base_config else None, grid.run_overrides(spec), layered=True)


def _run_config_of(grid: Grid, spec: RunSpec):
    """``build_run_config``, its ConfigError naming the grid and the run (the settings come from the grid's base, the
    size, the variant and the command line together)."""
    from ...config import ConfigError

    try:
        return build_run_config(grid, spec)
    except ConfigError as e:  # a base no run can take is the base's (P185, P200)
        raise ConfigError(base_problem(grid, str(e)) or f"grid {grid.name!r}, run {spec.name}: {e}") from None


def resolve_text_path(text: str, root: Path | None) -> Path:
    p = Path(os.path.expandvars(os.path.expanduser(text)))
    return root / p if root is not None and not p.is_absolute() else p


def text_set_problem(name: str, text: str, path: Path, root: Path | None) -> str:
    """The line for a grid eval set whose ``text:`` (read as ``path``) is no file: a folder, a device or a missing
    file, with the fix. A folder was "not found" (issue 30 round 20, K93), and a relative path's line neither said it
    is read against --data-root / $LEVIATHAN_DATA nor gave a fix (K92)."""
    fix = "set the grid's eval set text: to the path of a UTF-8 text file"
    if os.path.lexists(path) and (what := not_a_file(path) or not_regular(path)) is not None:
        return f"eval set {name!r}: text: {str(path)!r} {what}; {fix}"
    if root is None and not Path(os.path.expanduser(text)).is_absolute():
        fix = f"{fix} (a relative text: path needs --data-root or $LEVIATHAN_DATA, the folder it is read against)"
    elif root is not None and not Path(os.path.expanduser(text)).is_absolute():
        fix = (f"a relative text: path is read against --data-root (default $LEVIATHAN_DATA), here {str(root)!r}, not "
               f"the grid's folder nor the current one; {fix} (an absolute path, or one relative to {str(root)!r})")
    return f"eval set {name!r}: text: {str(path)!r} {missing(path)}; {fix}"


class EvalData:
    """The eval streams and the frequency buckets of a grid, computed once per sweep."""

    def __init__(self, grid: Grid, root: Path | None):
        self.grid = grid
        self.root = root
        self._sets: dict[str, EvalStream | None] = {}
        self._tokenizer = None
        self._freq = None
        self._buckets = None
        self.notes: list[str] = []

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            from ...data.tokenizer import load_tokenizer

            self._tokenizer = load_tokenizer(str(self.grid.data_dir))
        return self._tokenizer

    def buckets(self):
        if self._buckets is None:
            from ...eval.frequency import make_buckets

            # checked against meta.json, and a missing file or a pipe in its place named (data.companions)
            self._freq = load_train_freq(self.grid.data_dir)
            self._buckets = make_buckets(self._freq, int(self.grid.eval_options.buckets),
                                         str(self.grid.eval_options.bucket_method), "eval.buckets")
        return self._buckets, self._freq

    def stream(self, es) -> EvalStream | None:
        """The eval set as an ``EvalStream`` capped to the grid's ``max_tokens``; None for a missing optional set."""
        if es.name not in self._sets:
            self._sets[es.name] = self._open(es, int(self.grid.eval_options.max_tokens or 0) or None)
        return self._sets[es.name]

    def whole(self, es) -> EvalStream | None:
        """The eval set uncapped (not kept): what a larger ``eval.max_tokens`` could reach (``bucket_reach``)."""
        return self._open(es, None)

    def _open(self, es, cap: int | None) -> EvalStream | None:
        if es.split is not None:
            return EvalStream.from_split(self.grid.data_dir, es.split, cap)
        path = resolve_text_path(es.text, self.root)
        if not path.is_file():
            where = "" if self.root else " (relative paths need --data-root or $LEVIATHAN_DATA)"
            if not es.optional or os.path.lexists(path):  # optional skips a missing file, not a folder
                raise UserError(text_set_problem(es.name, es.text, path, self.root))  # or a device (K93)
            self.notes.append(f"eval set {es.name!r} skipped: {portable_path(path, self.root or '.')} "
                              f"not found{where}")  # a row's note names no machine folder
            return None
        return EvalStream.from_text(path, self.tokenizer, cap)


def check_eval_sets(grid: Grid, root: str | os.PathLike | None) -> None:
    """UserError for the first eval set of ``grid`` that cannot be read (its text file missing or not text, its split
    not in the data), for a split shorter than one evaluation window (``eval.stream.short_split_problem``, round 28,
    T13), for missing bucket counts, and for a bucketed set whose scored targets leave a frequency bucket empty; an
    optional set that is missing is left to the evaluation's note."""
    from .bucket_reach import check_buckets_reached

    eval_data = EvalData(grid, data_root(root))
    for es in grid.eval_sets:
        stream = eval_data.stream(es)
        if stream is not None and len(stream.tokens) < 2 and len(eval_data.whole(es).tokens) < 2:
            raise UserError(_empty_set_problem(grid, es, len(eval_data.whole(es).tokens)))
        seq_len = grid.eval_options.seq_len  # None: each run's data.seq_len, which train holds its val split to
        if stream is not None and es.split is not None and seq_len and \
                len(whole := eval_data.whole(es).tokens) < seq_len + 1:
            raise UserError(short_split_problem(f"grid {grid.name!r}: eval set {es.name!r} reads {str(grid.data_dir)!r}",
                                                es.split, len(whole), seq_len, "eval.seq_len"))  # round 28, T13
    eval_data.buckets()
    check_buckets_reached(grid, eval_data)  # eval.max_tokens: 1 trained, then the row was refused (round 26, P43)


def _empty_set_problem(grid: Grid, es, tokens: int) -> str:
    """The line for an eval set with no target to score (fewer than 2 tokens): a data folder prepared with
    ``--val-fraction 0`` was "scores -1 target(s) ... lower eval.buckets, or score a larger set", naming neither the
    empty split nor the fix train gives for it (issue 30 round 27, R59)."""
    if es.split is None:
        return (f"grid {grid.name!r}: eval set {es.name!r} (text {es.text!r}) holds {tokens} token(s), no target to "
                f"score; give a longer text, or leave the set out of eval.sets")
    fix = ("prepare the data with a validation split (leviathan prepare ... --val-fraction 0.01, or --val-source "
           "FILE)" if es.split == "val" else f"prepare the data with more text in its {es.split} split")
    return (f"grid {grid.name!r}: eval set {es.name!r} is the {es.split} split of {str(grid.data_dir)!r}, which holds "
            f"{tokens} token(s), no target to score; {fix}, or leave the set out of eval.sets")


@dataclass
class RunEvaluation:
    """A finished run's evaluation: per eval set its loss, perplexity and bits per byte, its losses per
    training-frequency bucket, and notes (an optional set that was skipped)."""

    eval: dict[str, EvalResult] = field(default_factory=dict)
    buckets: dict[str, BucketResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def evaluate_run(grid: Grid, spec: RunSpec, run_dir: Path, eval_data: EvalData) -> RunEvaluation:
    """Loss/ppl/bpb and per-frequency-bucket losses of a finished run on every eval set of the grid."""
    opts = grid.eval_options
    buckets, freq = eval_data.buckets()
    streams = {es.name: stream for es in grid.eval_sets if (stream := eval_data.stream(es)) is not None}
    evals, bucketed = evaluate_checkpoint(run_dir, streams, seq_len=opts.seq_len, batch_size=int(opts.batch_size or 8),
                                          buckets=buckets, freq=freq, bucket_sets=opts.bucket_sets)
    return RunEvaluation(eval=evals,
                         buckets={name: BucketResult.from_dict(b.as_dict()) for name, b in bucketed.items()},
                         notes=list(eval_data.notes))


# --------------------------------------------------------------------------------------------
# the sweep


ORDERS = ("grid", "seed")


def select_runs(grid: Grid, only: list[str] | None = None, regimes: list[str] | None = None,
                order: str = "grid", shard: tuple[int, int] | None = None) -> list[RunSpec]:
    """The runs to do, in the grid's order, or with ``order="seed"`` every seed-0 run first, then seed 1, ...:
    each comparison gets one seed early, and the intervals fill in as later seeds finish. ``shard`` (i, n)
    keeps the i-th of n disjoint parts of the selection (``experiments.machinery.shards``)."""
    if order not in ORDERS:
        raise UserError(f"unknown run order {order!r}; use one of {', '.join(ORDERS)}")
    runs = grid.runs
    if regimes:
        runs = [r for r in runs if set(r.regimes) & set(regimes)]
    if only:
        runs = [r for r in runs if any(fnmatch.fnmatch(r.name, pat) for pat in only)]
    runs = shard_of(runs, shard)
    return sorted(runs, key=lambda r: r.seed) if order == "seed" else runs


def _data_fields(data: DataProvenance) -> dict:
    """grid.json's data keys: the fingerprint, and its version and version-1 twin where the folder records them (so
    a folder prepared again by a later version still matches the rows of the first: ``data_match``)."""
    fields = {"data_fingerprint": data.fingerprint}
    if data.fingerprint_version is not None:
        fields["data_fingerprint_version"] = data.fingerprint_version
    if data.legacy_fingerprint is not None:
        fields["data_legacy_fingerprint"] = data.legacy_fingerprint
    return fields


def grid_snapshot(grid: Grid) -> dict:
    """grid.json: the expanded grid, every path portable (``provenance.portable_path``: no machine folders)."""
    return {"name": grid.name, "path": portable_path(grid.path),
            "base_config": portable_path(grid.base_config),
            "base_overrides": grid.base_overrides, "data_dir": portable_path(grid.data_dir),
            **_data_fields(data_provenance(grid.data_dir)), "vocab_size": grid.vocab_size,
            "data_seed": grid.data_seed, "seeds": grid.seeds,
            "eval_sets": [vars(e) for e in grid.eval_sets], "eval_options": dataclasses.asdict(grid.eval_options),
            "runs": [{"name": r.name, "regimes": r.regimes, "variant": r.variant, "size": r.size, "seed": r.seed,
                      "data_seed": r.data_seed, "model": r.model_fields(), "params": r.params.as_dict(),
                      "target_total": r.target_total,
                      "run_overrides": r.run_overrides}
                     for r in grid.runs]}


def _metrics_tokens_per_s(path: str | os.PathLike) -> float | None:
    """Median training throughput logged in metrics.jsonl (for runs trained outside this sweep)."""
    try:
        values = [float(r.tokens_per_s) for r in read_metric_rows(path) if r.tokens_per_s]
    except UserError:
        return None
    return float(np.median(values)) if values else None


def _curve(metrics: str) -> TrainingCurve | None:
    """The run's validation curve and input-side gradient norms, kept in the row so that a committed
    results.jsonl alone regenerates the gap-over-training figures (run dirs are not committed)."""
    try:
        rows = read_metric_rows(metrics)
    except UserError:
        return None
    val = [r for r in rows if r.val_loss is not None]
    grads = [r for r in rows if r.grad_norm_input is not None]
    head = [r.grad_norm_head for r in grads if r.grad_norm_head is not None]
    return TrainingCurve(tokens=[r.tokens for r in val], val_loss=[r.val_loss for r in val],
                         grad_tokens=[r.tokens for r in grads],
                         grad_norm_input=[r.grad_norm_input for r in grads],
                         grad_norm_head=[r.grad_norm_head for r in grads],
                         grad_norm_input_median=float(np.median([r.grad_norm_input for r in grads])) if grads else None,
                         grad_norm_head_median=float(np.median(head)) if head else None)


def _resume_notes(summary: TrainSummary) -> list[str]:
    """A row's note for a run its last session resumed from a checkpoint: its timings cover that session only."""
    n = summary.resumed_from
    if not n or n >= summary.steps:
        return []
    return [f"resumed from its step-{n} checkpoint: wall_time_s and tokens_per_s cover steps {n + 1}-{summary.steps}"]


def make_row(grid: Grid, spec: RunSpec, run_dir: Path, summary: TrainSummary, evals: RunEvaluation,
             hardware: dict) -> ResultRow:
    """The results row of a finished run from its spec, training ``summary`` and evaluation: paths relative to the sweep
    folder, its provenance (``provenance``: resolved config, code commit, data fingerprint) and its evaluation settings."""
    out_dir = Path(run_dir).parent.parent
    m = spec.model
    # the run folder's own log, never the path its summary recorded: in a copied sweep folder that path named the
    # original's metrics.jsonl, whose curve became the copy's row (issue 30 round 14, A240, A241)
    metrics = str(run_dir / "metrics.jsonl")
    tokens_per_s = summary.tokens_per_s
    if not tokens_per_s:  # resumed an already finished run: this session trained nothing
        tokens_per_s = _metrics_tokens_per_s(metrics)
    return ResultRow(
        name=spec.name, regime=spec.regime, regimes=list(spec.regimes), variant=spec.variant,
        size=spec.size, seed=spec.seed, data_seed=spec.data_seed, num_hidden_layers=m.num_hidden_layers,
        hidden_size=m.hidden_size, intermediate_size=m.intermediate_size, vocab_size=m.vocab_size,
        params=summary.params if summary.params is not None else spec.params,
        target_total=spec.target_total, model=spec.model_fields(),
        steps=summary.steps, tokens=summary.tokens, wall_time_s=summary.wall_time_s,
        tokens_per_s=tokens_per_s, final_val_loss=summary.final_val_loss, final_val_ppl=summary.final_val_ppl,
        eval=dict(evals.eval), buckets=dict(evals.buckets), hardware=hardware,
        run_dir=portable_path(run_dir, out_dir), metrics=portable_path(metrics, out_dir), curve=_curve(metrics),
        grid=grid.name, created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        notes=list(evals.notes) + _resume_notes(summary),
        evaluation=None if evals is SKIPPED_EVAL else evaluation_settings(grid.eval_sets, grid.eval_options),
        **run_provenance(run_dir, grid.data_dir, out_dir).row_fields(),
    )


def _train_once(cfg, run_dir: Path, quiet: bool = False) -> TrainSummary:
    """The run's training summary: from ``sweep_train.json`` if training finished before, else train (resuming
    from the latest checkpoint; ``leviathan.train.loop.train``) and record it. A stopped run's summary
    (``stopped`` set) is not recorded."""
    from ...io import atomic_write_json
    from ...train import loop

    summary_path = run_dir / TRAIN_SUMMARY
    if summary_path.is_file():
        return TrainSummary.read(summary_path)  # checked field by field
    from ...train.checkpoint import resume_hint

    with (resume_hint("run the same `leviathan sweep` command again (it resumes this run from its last checkpoint)"),
          loop.run_dir_fix("move that folder out of the sweep's runs/, or give the sweep another --out")):
        summary = loop.train(cfg, str(run_dir), resume="auto", **({"quiet": True} if quiet else {}))
    if not summary.stopped:
        atomic_write_json(summary_path, json_safe(summary.to_dict()))
    return summary


SKIPPED_EVAL = RunEvaluation(notes=[SKIPPED_EVAL_NOTE])


@dataclass(frozen=True)
class _Job:
    """What every run of one sweep shares, passed as one value (also to ``--jobs`` worker processes, so it must
    pickle: no log callable here): the grid, every run's config, the sweep folder, the data root, whether to
    evaluate, and the hardware the rows record."""

    grid: Grid
    configs: dict  # {run name: RunConfig}, built before the first run trains
    out_dir: Path
    root: str | os.PathLike | None
    skip_eval: bool
    hardware: dict

    def run_dir(self, spec: RunSpec) -> Path:
        run_dir = self.out_dir / "runs" / spec.name
        run_dir.mkdir(parents=True, exist_ok=True)
        return run_dir

    def evaluate(self, spec: RunSpec, run_dir: Path, eval_data: EvalData | None = None) -> RunEvaluation:
        if self.skip_eval:
            return SKIPPED_EVAL
        return evaluate_run(self.grid, spec, run_dir, eval_data or EvalData(self.grid, data_root(self.root)))


def _train_and_evaluate(job: _Job, spec: RunSpec, run_dir: Path,
                        threads: int) -> tuple[ResultRow | None, TrainSummary | None]:
    """One run in a worker process of ``--jobs``: (row, None), or (None, its TrainSummary) if training was stopped."""
    import torch

    torch.set_num_threads(threads)
    summary = _train_once(job.configs[spec.name], run_dir, quiet=True)
    if summary.stopped:
        return None, summary
    return make_row(job.grid, spec, run_dir, summary, job.evaluate(spec, run_dir), job.hardware), None


def _record(results: Path, row: ResultRow, rows: list[ResultRow], log: Callable[[str], None], label: str,
            t0: float) -> None:
    """Append a finished run's row to results.jsonl (atomically) and to ``rows``, and log it."""
    append_result(results, row)
    rows.append(row)
    main = row.loss("val")
    log(f"{label}: done in {time.time() - t0:.0f}s" + (f", val loss {main:.4f}" if main is not None else ""))


def _run_parallel(job: _Job, todo: list[RunSpec], jobs: int, threads: int, log: Callable[[str], None]) -> list[ResultRow]:
    """Train ``jobs`` runs at a time, each in its own process with ``threads`` torch threads (two single-threaded
    processes beat one two-threaded one on a small CPU: OpenMP spin-waits). Each worker trains one run and exits;
    rows are appended here as runs finish. A stopped run leaves its checkpoint and no row, so the same command resumes
    it. A stop that reaches only this process (``kill PID``, a service manager, ``timeout``) is passed on to the
    workers (``_stop_workers``): it left them training their runs to the end, hours at the paper's sizes, while the
    sweep waited for them without a word (the width round, stopped with ``kill -TERM`` of the sweep's pid).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    results = job.out_dir / RESULTS
    job = dataclasses.replace(job, hardware={**job.hardware, "torch_threads": threads, "jobs": jobs})
    rows: list[ResultRow] = []
    from ...stop_signals import start_resource_tracker
    from ...tracker_death import quiet_tracker_death

    ctx = multiprocessing.get_context("spawn")
    start_resource_tracker()  # deaf to a SIGHUP of the group (issue 30 round 13, S9)
    quiet_tracker_death(say=True)  # killed, one line, not a traceback per name (round 20, K113)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, max_tasks_per_child=1,
                             initializer=_worker_start) as pool:
        pending: dict = {}
        try:
            _train_all(pool, job, todo, pending, rows, log)
        except BaseException:  # a stop (SIGTERM, Ctrl-C) or an error here: the workers checkpoint and stop too
            _stop_workers(pool, pending, results, rows, log)
            raise
        _placed_when_complete(job, rows)  # before the pool's shutdown, which waits for its workers to end (T33)
    return rows


def _train_all(pool, job: _Job, todo: list[RunSpec], pending: dict, rows: list[ResultRow],
               log: Callable[[str], None]) -> None:
    """Keep ``job.hardware["jobs"]`` runs in the pool until ``todo`` is done or a run was stopped; ``pending`` maps
    each future to (spec, start time) and is the caller's, so a stop can still collect what is running."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    jobs, threads, results = job.hardware["jobs"], job.hardware["torch_threads"], job.out_dir / RESULTS
    queue = list(todo)
    stopped = None
    while queue or pending:
        while queue and len(pending) < jobs and stopped is None:
            spec = queue.pop(0)
            run_dir = job.run_dir(spec)
            log(f"{spec.name}: training ({', '.join(spec.regimes)}; {spec.params.total:,} parameters)")
            pending[pool.submit(_train_and_evaluate, job, spec, run_dir, threads)] = (spec, time.time())
        if not pending:
            break
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        running = [spec.name for spec, _ in pending.values()]
        try:
            for fut in done:
                stop = _collect(fut, pending.pop(fut), results, rows, log)
                stopped = stopped or stop
        except BrokenProcessPool:
            raise _worker_died(running) from None


def _worker_died(running: list[str]) -> UserError:
    """The line for a worker process that died without a word (SIGKILL by the OOM killer or by hand, a SIGTERM
    before its handlers were set): the pool's BrokenProcessPool traceback reached the user, exit 1 (issue 30 round 20,
    K114, K115). The pool fails every run in flight with it; each resumes from its checkpoint."""
    them = "it" if len(running) == 1 else "them"
    return UserError(f"a worker process of the sweep ended abruptly (killed from outside, e.g. by the OOM killer or a "
                     f"signal to its pid) while {' and '.join(running)} {'was' if len(running) == 1 else 'were'} "
                     f"training: no row was written for {them} and the sweep stopped; run the same command again "
                     f"(it resumes {them} from the last checkpoint), and to stop a sweep send the signal to its own "
                     f"pid, not a worker's")


def _collect(fut, started: tuple[RunSpec, float], results: Path, rows: list[ResultRow],
             log: Callable[[str], None]) -> str | None:
    """Record a finished worker's row; for a stopped run, say so and return the signal's name."""
    spec, t0 = started
    row, stopped = fut.result()
    if row is None:
        log(f"{spec.name}: {stopped_run_line(stopped)}")
        return stopped.stopped
    _record(results, row, rows, log, spec.name, t0)
    return None


def stopped_run_line(summary: TrainSummary) -> str:
    """What a stopped run left, from its ``TrainSummary``: a checkpoint at the step it reached, or, for a run stopped
    before its first step (``steps`` 0), nothing. Every worker of a sweep stopped as it set up said "training
    stopped by SIGTERM; checkpoint saved. Run the same command to resume." with no checkpoint written (issue 30 round
    23, T31), while ``train`` stopped at that moment says nothing was trained."""
    if not summary.steps:
        return (f"stopped by {summary.stopped} before its first step: nothing was trained and no checkpoint was "
                f"written. Run the same command to train it.")
    return (f"training stopped by {summary.stopped} at step {summary.steps}; checkpoint saved. Run the same command "
            f"to resume.")


def _worker_start() -> None:
    """A worker's stop signals before its run's training begins are remembered (train adopts the stop and ends
    before its first step), not fatal: a SIGTERM passed on while a worker still imported torch killed it and broke
    the pool. Footgun: a signal in the first instants of the worker's start, before this runs, still kills it."""
    import signal

    from ... import stop_signals
    from ...tracker_death import quiet_tracker_death

    for sig in stop_signals.stop_and_interrupt_signals():
        signal.signal(sig, stop_signals.remember_stop)
    quiet_tracker_death(say=False)  # the sweep's process says it (round 20, K113)
    stop_signals.caller_says_stops = True  # the sweep says each stopped run's line: train's "SIGTERM received ...
    # (exit status 0)" was a stop the user never sent when the sweep stopped a worker after another's error (K111)


def _stop_workers(pool, pending: dict, results: Path, rows: list[ResultRow], log: Callable[[str], None]) -> None:
    """Pass a stop on to the workers (SIGTERM: each finishes its step, saves a checkpoint and returns) and wait for
    them, recording a run that finished meanwhile. Further stops are held, so a second ``kill`` cannot leave a
    worker mid-save. Each worker is signalled once, and a worker the pool starts for a run already queued is
    signalled as it appears (so it stops before its first step instead of training the run). A worker that had the
    stop from its process group already gets it twice: train takes a second SIGTERM as the same stop.
    ``pool._processes`` is the executor's own table of its workers (CPython's, since 3.2)."""
    import signal
    from concurrent.futures import FIRST_COMPLETED, wait

    from ...stop_signals import held_stops

    told: set[int] = set()
    with held_stops():
        while pending:
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                if process.pid not in told and process.is_alive():
                    with contextlib.suppress(OSError):
                        os.kill(process.pid, signal.SIGTERM)
                    told.add(process.pid)
            done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                with contextlib.suppress(Exception):  # a worker that died: its run resumes from its checkpoint
                    _collect(fut, pending.pop(fut), results, rows, log)
                pending.pop(fut, None)


@dataclass(frozen=True)
class SweepOptions:
    """Which runs of a grid a sweep takes and how it runs them: ``leviathan sweep``'s options, one field each.

    Selection: ``only`` (name patterns), ``regimes``, ``order`` and ``shard`` (i, n) as ``select_runs`` takes them,
    ``max_runs`` (stop after that many). Execution: ``root`` (the data root), ``skip_eval``, ``jobs`` (runs at once, one
    process each) and ``threads`` (torch threads per run: in this process for ``jobs == 1``, default torch's; in each
    worker otherwise, default 1). Footgun: sweeps or shards sharing a machine should each take their share of threads
    (two shards each taking both cores of a 2-core machine ran 6x slower than one thread each, issue 31).
    """

    only: list[str] | None = None
    regimes: list[str] | None = None
    order: str = "grid"
    shard: tuple[int, int] | None = None
    max_runs: int | None = None
    root: str | os.PathLike | None = None
    skip_eval: bool = False
    jobs: int = 1
    threads: int | None = None

    def __post_init__(self):
        from .sweep_options import check_sweep_options

        check_sweep_options(self)  # the flags' rules (issue 30 round 17, E64-E66, E69, E70)


def nothing_selected(grid: Grid, only) -> str:
    """The line when the selection is empty, with the grid's runs and ``--list``: it named no fix (issue 30 round 15,
    A103). ``sweep --list`` and ``--commands`` say it too: they printed an empty table, exit 0 (round 16, C218)."""
    names = [run.name for run in grid.runs]
    shown = ", ".join(names[:6]) + (f", ... ({len(names)} in all)" if len(names) > 6 else "")
    asked = " ".join(f"--only {pattern!r}" for pattern in only or [])
    return (f"no run of grid {grid.name!r} matches the selection{f' ({asked})' if asked else ''}; its runs are "
            f"{shown}: give --only a name or a pattern of these (see them all with `leviathan sweep --grid GRID "
            f"--list`), and check --regime / --shard")


def empty_selection(grid: Grid, only, regimes, shard: tuple[int, int] | None) -> str:
    """For a selection with no run: ``shards.empty_shard``'s line when only the shard is empty (more shards than
    runs: nothing to do, exit 0; issue 30 round 21, N285, N286), else the UserError of ``nothing_selected``."""
    from .shards import empty_shard

    line = empty_shard(grid.name, len(select_runs(grid, only, regimes)), shard)
    if line is None:
        raise UserError(nothing_selected(grid, only))
    return line


def _check_sweep_call(grid, out_dir, options, log) -> None:
    """TypeError for a ``run_sweep`` argument of the wrong kind, before anything is written: a grid file's name
    (``run_sweep('g1.yaml', OUT)``) and a dict of options ended in a raw AttributeError, and ``log='yes'`` in
    "'str' object is not callable" after grid.json and the folder's marker were written (issue 30 round 18,
    G464-G466). ``out_dir`` must be a path (a NUL byte was realpath's raw ValueError, issue 30 round 27, S95's
    kind)."""
    from ...value_rules import api_check, check_callback, path_problem

    if not isinstance(grid, Grid):
        raise TypeError(f"run_sweep: grid must be a Grid (leviathan.load_grid(NAME_OR_FILE)), got "
                        f"{type(grid).__name__} {grid!r:.60}; pass load_grid(...)")
    if not isinstance(options, SweepOptions):
        raise TypeError(f"run_sweep: options must be a SweepOptions, got {type(options).__name__} {options!r:.60}; "
                        f"pass SweepOptions(only=[...], ...) (its fields are leviathan sweep's flags)")
    api_check("run_sweep", "out_dir", path_problem(out_dir), "pass the sweep's folder (as leviathan sweep's --out)")
    check_callback("run_sweep", "log", log)


def _check_commands_call(grid, out_dir, runs, threads) -> None:
    """One line for a ``train_commands`` argument of the wrong kind, as ``run_sweep`` names its own
    (``_check_sweep_call``): ``train_commands(G, 5)`` was pathlib's "expected str, bytes or os.PathLike object, not
    int" (issue 30 round 25, Y685), ``threads=True`` wrote OMP_NUM_THREADS=True, a run list of names an
    AttributeError, and ``runs=[]`` wrote a line for every run."""
    from ...errors import ArgumentTypeError
    from ...value_rules import api_check, path_problem, whole_problem

    if not isinstance(grid, Grid):
        raise ArgumentTypeError(f"train_commands: grid must be a Grid (leviathan.load_grid(NAME_OR_FILE)), got "
                                f"{type(grid).__name__} {grid!r:.60}; pass load_grid(...)")
    api_check("train_commands", "out_dir", path_problem(out_dir), "pass the sweep's folder (as leviathan sweep's OUT)")
    if runs is not None and (not isinstance(runs, (list, tuple)) or not all(isinstance(r, RunSpec) for r in runs)):
        raise ArgumentTypeError(f"train_commands: runs must be a list of the grid's RunSpecs (grid.runs, or a part "
                                f"of it), or None for every run, got {runs!r:.60}")
    if runs is not None and not runs:  # [] was read as None, every run (the Y450 kind; `sweep --commands` stops first)
        api_check("train_commands", "runs", "is an empty list: no run to write a line for",
                  "pass the runs to train (select_runs(grid, ...)), or None for every run of the grid")
    if threads is not None:
        api_check("train_commands", "threads", whole_problem(threads, 1, "a positive integer"),
                  "pass the threads per run, e.g. 4, or None to leave OMP_NUM_THREADS unset")


@api_write("run_sweep", "out_dir")
def run_sweep(grid: Grid, out_dir: str | os.PathLike, options: SweepOptions = SweepOptions(),
              log: Callable[[str], None] = print) -> list[ResultRow]:
    """Train and evaluate the grid's runs that ``options`` select and that have no row yet; the rows appended now.
    Every run config is built before the first run trains; what every run shares travels as one ``_Job``."""
    _check_sweep_call(grid, out_dir, options, log)
    log = print if log is None else log  # None is the default, as check_callback's line says (round 24, W718)
    o = options
    out_dir = Path(out_dir)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise UserError("leviathan sweep runs its runs one after another in one process; for several GPUs print "
                        "the runs with `leviathan sweep --grid NAME --commands`, launch each with torchrun, then run "
                        "the sweep once more (single process) to evaluate them and write the rows")
    runs = select_runs(grid, o.only, o.regimes, o.order, o.shard)
    if not runs and (line := empty_selection(grid, o.only, o.regimes, o.shard)):
        log(line)  # more shards than runs: this one has nothing to do (N285, N286)
        return []
    check_apart(grid.data_dir, "the grid's data folder", out_dir, "--out")
    with sweep_lock(out_dir):
        from ...io import atomic_write_json
        from .folder_grid import check_folder_grid, check_folder_runs
        from .unrecorded_evaluation import check_unrecorded_evaluation
        from .idle_overrides import recorded_overrides

        results = out_dir / RESULTS
        kept = read_results(results)
        check_folder_grid(grid, kept, out_dir)  # round 16 (C82): a copy of grid g1's sweep swept as g1b
        check_folder_runs(grid, kept, out_dir)  # round 17 (D20, D61): --seeds 1 over seed-0 rows
        check_rows_against_grid(grid, kept, build_run_config, log, data_provenance(grid.data_dir))
        check_unrecorded_evaluation(grid, kept, out_dir)  # rows without evaluation settings: grid.json's (Z77)
        check_evaluated_like(kept, o.skip_eval, str(results))
        done = {r.name for r in kept}
        todo = [r for r in runs if r.name not in done]
        # build every run config first: a bad key fails now, not after hours of training, and before the folder is
        # marked and grid.json written (issue 30 round 9, M169: a base with max_steps and max_tokens was refused
        # after both, naming neither the grid nor the run)
        configs = {spec.name: _run_config_of(grid, spec) for spec in todo}
        check_run_folders_against_grid(out_dir, configs, TRAIN_SUMMARY)  # round 11 (R24, R155, R186, R187)
        _check_memory(configs, o.jobs)
        if todo and not o.skip_eval:  # every eval set read once before any training: a missing text file, one that
            check_eval_sets(grid, o.root)  # is not text, or a split the data lacks was named only after a run had
            # trained (issue 30 round 14, B272-B274)
        if todo and results.exists() and not os.access(results, os.W_OK):  # learnt only after hours of training
            raise UserError(f"{str(results)!r} cannot be written (read-only or immutable), so the rows of the runs "
                            f"this sweep trains would be lost; make it writable (chmod u+w, chattr -i) or sweep into "
                            f"another --out")  # (issue 30 round 8, left open until round 12)
        recorded = dataclasses.replace(grid, base_overrides=recorded_overrides(grid, out_dir, build_run_config, log))
        mark(out_dir, "sweep", SWEEP_FILES)
        atomic_write_json(out_dir / "grid.json", grid_snapshot(recorded))  # only once every kept row agrees with it
        log(f"sweep {grid.name!r}: {len(runs)} runs selected, {len(runs) - len(todo)} already in {results}, "
            f"{len(todo)} to go")
        if o.jobs > 1:
            todo = todo[:o.max_runs] if o.max_runs is not None else todo
            job = _Job(grid, configs, out_dir, o.root, o.skip_eval, hardware_info())
            return _run_parallel(job, todo, o.jobs, o.threads or 1, log)
        with _torch_threads(o.threads):
            # the hardware after the thread count is set: the rows record it
            return _run_serial(_Job(grid, configs, out_dir, o.root, o.skip_eval, hardware_info()), todo, o.max_runs, log)


def _check_memory(configs: dict, jobs: int) -> None:
    """``memory_preflight``'s refusal before the folder is marked and any run trains: the ``jobs`` largest CPU runs
    (parameters and one micro batch's or validation batch's activations, the larger) held at once, as ``--jobs``
    trains them (issue 30 round 26, P21: a 1.6B-parameter run met the allocator's traceback in its first forward;
    round 27, R9: the validation batch). Runs on a GPU are the device's (as ``train``'s check leaves them)."""
    from ...memory_preflight import check_run_memory, run_bytes
    from ...train.distributed import resolve_device

    cpu = {name: c for name, c in configs.items() if resolve_device(c.device).type == "cpu"}
    largest = sorted(cpu, key=lambda name: run_bytes(cpu[name]), reverse=True)[:jobs]
    if largest:
        check_run_memory([cpu[n] for n in largest], f"run{'s' if len(largest) > 1 else ''} {', '.join(largest)} of "
                         "the grid (its model sizes, micro_batch_size and eval_batch_size)", "a smaller size, "
                         "eval_batch_size or micro_batch_size in the grid, "
                         + ("fewer --jobs, " if len(largest) > 1 else "") + "or --only the runs that fit")


@contextlib.contextmanager
def _torch_threads(threads: int | None):
    """torch's intra-op threads set to ``threads`` (None: left as they are) and restored afterwards, so a library
    caller's setting survives the sweep."""
    import torch

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _run_serial(job: _Job, todo: list[RunSpec], max_runs: int | None, log: Callable[[str], None]) -> list[ResultRow]:
    """Train and evaluate ``todo`` one after another in this process (at most ``max_runs``); the rows appended."""
    results = job.out_dir / RESULTS
    new_rows: list[ResultRow] = []
    eval_data = EvalData(job.grid, data_root(job.root))
    for i, spec in enumerate(todo):
        if max_runs is not None and i >= max_runs:
            log(f"stopping after {max_runs} runs (--max-runs); run the same command to continue")
            break
        run_dir = job.run_dir(spec)
        t0 = time.time()
        if (run_dir / TRAIN_SUMMARY).is_file():
            log(f"[{i + 1}/{len(todo)}] {spec.name}: trained already, evaluating")
        else:
            log(f"[{i + 1}/{len(todo)}] {spec.name}: training ({', '.join(spec.regimes)}; "
                f"{spec.params.total:,} parameters)")
        summary = _train_once(job.configs[spec.name], run_dir)
        if summary.stopped:
            log(f"[{i + 1}/{len(todo)}] {spec.name}: {stopped_run_line(summary)}")
            break
        row = make_row(job.grid, spec, run_dir, summary, job.evaluate(spec, run_dir, eval_data), job.hardware)
        _record(results, row, new_rows, log, f"[{i + 1}/{len(todo)}] {spec.name}", t0)
    _placed_when_complete(job, new_rows)
    return new_rows


def _placed_when_complete(job: _Job, rows: list[ResultRow]) -> None:
    """``stop_signals.placed(out)`` once every run this sweep was to train (``job.configs``: before --max-runs cut
    it) has its row: a stop from then on says the sweep's work is complete. A SIGTERM while the pool of ``--jobs``
    workers shut down after the last row said "run the same command again", which then found 0 runs to go (issue 30
    round 23, T33)."""
    from ... import stop_signals

    if set(job.configs) <= {row.name for row in rows}:
        stop_signals.placed(job.out_dir)


def train_commands(grid: Grid, out_dir: str | os.PathLike, runs: list[RunSpec] | None = None,
                   threads: int | None = None) -> list[str]:
    """One ``leviathan train`` line per run (for schedulers / torchrun); ``sweep`` then only evaluates them.
    ``threads`` prefixes each line with ``OMP_NUM_THREADS=N`` (torch reads it at import)."""
    import shlex

    from ...config import layered_overrides

    _check_commands_call(grid, out_dir, runs, threads)

    lines = []
    for spec in grid.runs if runs is None else runs:
        args = ([f"OMP_NUM_THREADS={threads}"] if threads else []) + ["leviathan", "train"]
        if grid.base_config:
            args += ["--config", str(grid.base_config)]
        args += layered_overrides(grid.run_overrides(spec))  # each key once: train refuses one given twice (G186)
        args += ["--run-dir", str(Path(out_dir) / "runs" / spec.name), "--resume", "auto"]
        lines.append(" ".join(shlex.quote(a) for a in args))
    return lines
