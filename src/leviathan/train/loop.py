"""The training loop: ``train(cfg, run_dir, resume=None) -> summary`` (docs/DESIGN.md §6).

``_train`` reads top to bottom: check the inputs, find the checkpoint to resume from, build the model,
optimizer and data, write the run folder, then one ``train_step`` (train/step.py) per optimizer step,
each followed by its metrics row, validation, checkpoint and stop check, and finally the summary.
The state that advances is a ``TrainState`` (train/state.py, which also saves and restores it).

Run folder (rank 0 writes everything; a folder that is not a run folder is written into only when none of these
names is there already: ``leviathan.ownership``): the marker ``leviathan_output.json``, ``run.json`` (the run's id,
``leviathan.run_identity``), ``config.yaml`` (the resolved
RunConfig), ``versions.json`` (python, torch, transformers, leviathan, git revision, device, hostname, tokenizer),
``params.json`` (parameter counts by group), ``metrics.jsonl`` and ``tensorboard/`` (train/metrics.py),
``summary.json`` (what ``train`` returns) and ``checkpoints/step-XXXXXXXX/`` (checkpoint/layout.py). Validation
(``validate.Validator``) scores the first ``eval_tokens`` predictions of the val split every ``eval_interval`` steps
and at the last step.

Stopping:
- SIGTERM and SIGINT set a flag (from the session's first line: a stop while the data loads ends the session before
  its first step, saying so, with nothing written); at the end of the current step all ranks agree to stop, a
  checkpoint is saved, and ``train`` returns (SIGTERM, ``summary.stopped``) or raises KeyboardInterrupt (SIGINT;
  the CLI exits 130). A second Ctrl-C interrupts at once. The stop line is printed with --quiet too.
- A non-finite loss or gradient norm raises ``NonFiniteLossError`` before the optimizer applies the step, naming
  the step and suggesting a lower lr. Nothing is saved: a periodic checkpoint is written only once the next step
  found its weights finite, so ``--resume auto`` with a lower ``optim.lr`` continues from the last good state.

Exact resume: weights, AdamW state, step, token count, data loader position and RNG states are
restored, and the lr is a function of the step, so N steps + resume + N steps equals 2N steps
bit for bit on CPU (tests/integration/test_resume.py).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import os
import signal
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from ..checkpoint.layout import CHECKPOINTS, step_of
from ..config import dump_yaml
from ..data.meta import PreparedMeta, data_folder_problem
from ..eval.result import EvalResult
from ..eval.stream import short_split_problem
from ..io import atomic_write_json, atomic_write_text
from ..errors import ArgumentTypeError, ReportedInterrupt, Stopped, UserError, not_a_folder_there
from ..locking import folder_lock, reading
from ..memory_preflight import allocator_words, out_of_memory
from ..ownership import check_apart, check_claim, check_not_container, check_not_inside, mark
from ..model.accounting import count_model
from ..stop_signals import stop_and_interrupt_signals
from ..value_rules import api_check, path_problem
from ..initial_model import initial_model
from . import checkpoint as ckpt
from . import distributed as D
from ..run_config import RunConfig, check_run_config, check_vocab, data_meta
from ..run_identity import RUN_FILE, RunIdentity, settle_identity, write_identity
from .lost_rows import expected_rows
from .metrics import MetricsLogger, collect_versions
from .arguments import check_train_arguments
from .optim import build_optimizer
from .schedule import lr_at
from .state import Checkpointer, RunFolder, TrainState, load_resume, restore
from .summary import TrainSummary
from .step import NonFiniteLossError, TrainParts, autocast_dtype, train_step
from .validate import Validator
from ..storage import api_write
from .. import json_text

__all__ = ["train", "NonFiniteLossError", "TrainSummary", "run_dir_fix"]

# How a refusal of the run folder (another verb's output, a user's files, another writer) says the way out: the CLI's
# option by default; a sweep says its own, since it has no --run-dir (issue 30 round 19, H185, H187).
RUN_DIR_FIX: contextvars.ContextVar[str] = contextvars.ContextVar("run_dir_fix", default="choose another --run-dir")


@contextlib.contextmanager
def run_dir_fix(text: str):
    """Within the block, train's refusals of its run folder end with ``text`` where they said "choose another
    --run-dir" (the sweep, which trains each run in ``SWEEP/runs/NAME``)."""
    token = RUN_DIR_FIX.set(text)
    try:
        yield
    finally:
        RUN_DIR_FIX.reset(token)


@api_write("train()", "run_dir")
def train(cfg: RunConfig, run_dir: str | os.PathLike, resume: str | None = None, *,
          quiet: bool = False) -> TrainSummary:
    """Train ``cfg`` into ``run_dir``; ``resume`` is None (fresh), ``"auto"`` or a checkpoint path; a ``TrainSummary``.

    Under torchrun every rank calls this (the process group is created here if needed and destroyed on return). Only
    rank 0 checks the run folder and takes its lock; the others learn whether it could (one all-reduce), so every rank
    raises a ``UserError`` instead of the others failing in their next collective with a transport error.

    How the user goes on after a stop, a failed save or a divergence is ``checkpoint.RESUME_HINT`` (a verb that runs
    train itself names its own rerun: ``with checkpoint.resume_hint("run the same ... again"): train(...)``).
    """
    if not isinstance(run_dir, (str, os.PathLike)) or not os.fspath(run_dir):  # round 8: None was os.fspath's TypeError
        raise ArgumentTypeError(f"run_dir must be the path of the run folder (str or Path), got {run_dir!r:.60}")
    api_check("train", "run_dir", path_problem(run_dir), "pass the path of the run folder")  # a NUL (round 27, S554)
    if not isinstance(cfg, RunConfig):  # a text ended in an AttributeError (issue 30 round 9, M131)
        raise ArgumentTypeError(
            f"cfg must be a RunConfig (leviathan.run_config.load_run_config(CONFIG, OVERRIDES)), got "
            f"{type(cfg).__name__} {cfg!r:.60}")
    check_train_arguments(resume, quiet)  # round 17 (E18, E19): resume=True, quiet='no'
    cfg = check_run_config(cfg)  # edited after it was built: a file's checks (round 16, C248, C250)
    device = D.resolve_device(cfg.device)
    owns_group = not (torch.distributed.is_available() and torch.distributed.is_initialized())
    info = D.init_distributed(device)
    try:
        with contextlib.ExitStack() as lock:
            error = None
            if info.is_main:
                try:
                    _check_run_dir(Path(run_dir))  # before the lock creates the folder
                    check_apart(cfg.data.path, "data.path", run_dir, "--run-dir")  # a run never writes into its data
                    check_not_inside(run_dir, "--run-dir", ("train", "prepare", "export"), verb="train")  # nor others
                    check_not_container(run_dir, "--run-dir")  # nor among a sweep's runs as their folder
                    lock.enter_context(folder_lock(run_dir, "train", RUN_DIR_FIX.get()))  # one writer
                    check_claim(run_dir, "train", RUN_FILES, RUN_DIR_FIX.get(), legacy=_earlier_run,
                                alone=True)  # not among a user's files (round 18, G157)
                    lock.enter_context(reading(cfg.data.path))  # prepare --overwrite of it refuses while we run (H1)
                except UserError as e:
                    error = e
            if D.any_rank(error is not None, info, device):
                raise error or UserError(f"rank 0 cannot train into {str(run_dir)!r} (its error says why and what "
                                         "to do); this rank stops with it")
            return _train(cfg, Path(run_dir), resume, device, info, quiet)
    finally:
        if owns_group:
            D.shutdown(info)


def _train(cfg: RunConfig, run_dir: Path, resume: str | None, device: torch.device, info: D.DistInfo,
           quiet: bool) -> TrainSummary:
    """The session, with SIGTERM / SIGINT caught from its first line: a stop before the first step is said too."""
    with _StopFlag() as flag:
        return _session(cfg, run_dir, resume, device, info, quiet, flag)


def _session(cfg: RunConfig, run_dir: Path, resume: str | None, device: torch.device, info: D.DistInfo,
             quiet: bool, flag: "_StopFlag") -> TrainSummary:
    t_start = time.time()
    out = _Console(info.is_main and not quiet, info.is_main)
    meta = _check_inputs(cfg, run_dir, info)
    resume_path, loaded = load_resume(cfg, run_dir, resume)
    if resume == "auto" and resume_path is None:
        out.say(f"no checkpoint in {run_dir}; starting from step 0")

    model, counts, optimizer, loader = _build(cfg, device, info)
    state = restore(model, optimizer, loader, loaded, cfg, info) if loaded is not None else TrainState()
    start_step = state.step
    if loaded is not None:
        out.say(f"resumed from {resume_path} at step {state.step} ({state.tokens:,} tokens)")
    if _stopped_before_first_step(flag, info, device, out, state, "loading the data and building the model"):
        return _early_summary(run_dir, state, flag, time.time() - t_start, counts)
    parts = _train_parts(cfg, model, optimizer, loader, device, info)
    validator = Validator(cfg, parts.amp_dtype, info, device)
    identity = _identity(run_dir, resume_path, loaded) if info.is_main else None  # rank 0 decides and writes it
    folder = RunFolder(run_dir, dump_yaml(cfg.resolved()), _data_tokenizer(cfg.data.path) if info.is_main else None,
                       meta.tokenizer, identity.run_id if identity is not None else None, meta.fingerprint)
    saver = Checkpointer(folder, model, optimizer, loader, cfg, info, state.step if loaded is not None else None)
    _write_run_folder(run_dir, saver, device, counts, identity)
    out.start(_describe(cfg, device, info, counts, parts), cfg.total_steps, state.step)
    metrics = MetricsLogger(run_dir, enabled=info.is_main, resume_step=state.step if loaded is not None else None,
                            run_id=folder.run_id, expect=expected_rows(loaded, identity, cfg) if loaded else None)

    session = _Session(cfg, run_dir, info, parts, saver, validator, metrics, out, _Speed())
    stopped = None
    model.train()
    try:
        flag.training = True  # before the last look: a stop from here on is taken by the first step's end or this look
        if _stopped_before_first_step(flag, info, device, out, state, "preparing the run folder"):
            return _early_summary(run_dir, state, flag, time.time() - t_start, counts)
        while state.step < cfg.total_steps:
            session.step(state)
            if D.any_rank(flag.signum is not None, info, device):
                stopped = signal.Signals(flag.signum).name if flag.signum is not None else "SIGTERM"
                saver.save_now(state)
                _say_stop(out, f"stopped by {stopped} at step {state.step}; checkpoint saved, {ckpt.RESUME_HINT.get()}")
                break
        if stopped == "SIGINT":
            raise ReportedInterrupt
    finally:
        out.close()
        metrics.close()

    if state.last_eval is None and stopped is None:  # resumed a finished run: report its validation numbers
        state.last_eval = session._validate(state)  # saved already: out of memory, nothing more is written
    return _write_summary(run_dir, state, session.speed, time.time() - t_start, counts, stopped, info,
                          resumed_from=None if loaded is None else start_step)


# ---- building ---------------------------------------------------------------------------------
def _check_inputs(cfg: RunConfig, run_dir: Path, info: D.DistInfo) -> PreparedMeta:
    """The data folder's meta.json, after checking it exists, fits the model's vocabulary, and that the run
    folder can be written (rank 0)."""
    cfg.check_schedule()
    meta = data_meta(cfg.data.path)
    if meta is None:  # a too-long name: the output's line (pathlib's ENAMETOOLONG; round 33, AD36)
        raise UserError(f"data.path {cfg.data.path!r} {data_folder_problem(cfg.data.path)}")
    check_vocab(cfg, meta)
    val = meta.splits.get("val")
    if val is None or val.tokens is None or val.tokens < 2:
        state = "missing" if val is None else f"{val.tokens!r} tokens"
        raise UserError(f"data.path {cfg.data.path!r} has no validation tokens (its val split: {state}), and a run "
                        f"validates at its end (and every eval_interval steps); prepare the data with a validation "
                        f"split (leviathan prepare ... --val-fraction 0.01, or --val-source FILE)")
    if val.tokens < cfg.data.seq_len + 1:
        from ..data.loader import TokenDataset  # meta.json's count held to val.bin first: a meta.json from another

        TokenDataset(cfg.data.path, "val", check_ids=False)  # folder was "18 tokens, fewer than one window" of a
        raise UserError(short_split_problem(f"data.path {cfg.data.path!r}", "val", val.tokens,  # 14,112-token val.bin
                                            cfg.data.seq_len, "data.seq_len"))  # (issue 30 round 29, V54)
    _check_batch_fits(cfg, meta)
    _check_run_length(cfg, meta)
    if info.is_main:
        _check_run_dir(run_dir)
    return meta


def _check_batch_fits(cfg: RunConfig, meta: PreparedMeta) -> None:
    """One optimizer step may read the training split at most ``MAX_PASSES_PER_STEP`` times. ``batch_tokens=1e9`` on
    14,278 training tokens was accepted: one step was ~3.9M micro batches, the data read ~70,000 times, and a SIGTERM
    waited for that step to end (issue 30 round 22, Q57, a hang). Footgun: a step of a few passes is what a smoke test
    on a small corpus does with the default batch (65,536 tokens; the test suite's one-step grids on ~9,000 tokens
    too), so the rule refuses only a step no training recipe takes. ``BatchLoader`` refuses a micro batch past the
    data; this is the global batch, which gradient accumulation spreads over many micro batches. The fix offered is
    a batch the rule takes: with a split shorter than one micro batch, "e.g. batch_tokens=1024" was the value given
    (issue 30 round 32, AB17); a split shorter than one window is left to the loader's line, which names seq_len."""
    train = meta.splits.get("train")
    if train is None or not train.tokens or cfg.batch_tokens <= MAX_PASSES_PER_STEP * train.tokens:
        return
    if train.tokens < cfg.data.seq_len + 1:  # no batch fits: the loader's line names the split and seq_len (AB17)
        return
    unit = cfg.data.seq_len * cfg.micro_batch_size
    most = max(unit, (train.tokens // unit) * unit)
    fix = f"lower batch_tokens (e.g. batch_tokens={most}, one pass) or prepare more text"
    if most > MAX_PASSES_PER_STEP * train.tokens:  # one micro batch is already past the rule (round 32, AB17)
        fit = max(1, MAX_PASSES_PER_STEP * train.tokens // cfg.data.seq_len)
        fix = (f"lower micro_batch_size with it: one micro batch (micro_batch_size={cfg.micro_batch_size} x "
               f"data.seq_len={cfg.data.seq_len}) is {unit:,} tokens already (e.g. micro_batch_size={fit} batch_tokens="
               f"{fit * cfg.data.seq_len}), or prepare more text")
    raise UserError(f"batch_tokens={cfg.batch_tokens:,} is {cfg.batch_tokens / train.tokens:,.1f} times the "
                    f"{train.tokens:,} tokens of the training split in {cfg.data.path!r}: one optimizer step would "
                    f"read all of it that many times (at most {MAX_PASSES_PER_STEP} are taken); {fix}")


# The most passes over the training split one optimizer step may take (``_check_batch_fits``).
MAX_PASSES_PER_STEP = 100
# The most passes over the training split a whole run may take (``_check_run_length``).
MAX_PASSES_PER_RUN = 100_000


def _check_run_length(cfg: RunConfig, meta: PreparedMeta, flag: str | None = None) -> None:
    """A whole run may read the training split at most ``MAX_PASSES_PER_RUN`` times, as one step may read it at most
    ``MAX_PASSES_PER_STEP`` times. ``max_steps=1e12`` on 42,323 training tokens was taken without a word: about 2e11
    passes, some 4,000 years at the speed shown, with the cosine schedule holding the learning rate at its peak for
    any part a user would run (issue 30 round 30, X54). Footgun: the test suite's stop tests train "forever" on a
    tiny corpus (``demo --steps 1000000`` of 64 tokens on ~8,700 tokens: about 7,400 passes) to be stopped, so the
    rule refuses only a length no recipe takes; a run of a few hundred epochs on a small text is allowed. ``flag``: the
    option that set max_steps (demo's ``--steps``), named with its fix instead of the config key: demo was told to
    lower "max_steps=..." and left its run folder made (issue 30 round 31, Z61)."""
    train = meta.splits.get("train")
    if train is None or not train.tokens:
        return
    read = cfg.total_steps * cfg.batch_tokens
    if read <= MAX_PASSES_PER_RUN * train.tokens:
        return
    setting = f"max_steps={cfg.max_steps:,}" if cfg.max_steps is not None else f"max_tokens={cfg.max_tokens:,}"
    one = max(1, -(-train.tokens // cfg.batch_tokens))  # the steps of about one pass
    shorter = f"max_steps={one:,}"
    if flag is not None:  # the option that set it, in its own words (Z61)
        setting, shorter = f"{flag} {cfg.total_steps:,}", f"{flag} {one:,}"
    raise UserError(f"{setting} would read the {train.tokens:,} tokens of the training split in {cfg.data.path!r} "
                    f"{read / train.tokens:,.0f} times ({cfg.total_steps:,} steps x {cfg.batch_tokens:,} tokens; at "
                    f"most {MAX_PASSES_PER_RUN:,} passes are taken); lower it ({shorter} is about one pass) or "
                    f"prepare more text")


def _build(cfg: RunConfig, device: torch.device, info: D.DistInfo):
    """(model, parameter counts, optimizer, training batches), the model sharded under FSDP before the optimizer
    sees its parameters. The model is built on the CPU from the seed, so it is identical on every rank and device."""
    from ..data.loader import BatchLoader, TokenDataset, corpus_ids

    model = initial_model(cfg)  # seeds the global generators with cfg.seed, then builds on the CPU
    if cfg.data.softmax == "corpus":
        model.restrict_output_(torch.from_numpy(corpus_ids(cfg.data.path)))
    counts = count_model(model)
    model.to(device)
    if cfg.parallel == "fsdp" and info.enabled:
        D.apply_fsdp(model)
    optimizer = build_optimizer(model, cfg.optim, device.type)
    loader = BatchLoader(TokenDataset(cfg.data.path, "train"), cfg.data.seq_len, cfg.micro_batch_size, seed=cfg.seed,
                         rank=info.rank, world_size=info.world_size, shuffle=cfg.data.shuffle,
                         shuffle_buffer=cfg.data.shuffle_buffer)
    return model, counts, optimizer, loader


def _train_parts(cfg: RunConfig, model: torch.nn.Module, optimizer, loader, device: torch.device,
                 info: D.DistInfo) -> TrainParts:
    """Wrap the (restored) model for training: DDP when distributed, torch.compile when asked, and the loss path."""
    train_model: torch.nn.Module = model
    if cfg.parallel == "ddp" and info.enabled:
        train_model = D.wrap_ddp(model, device)
    if cfg.compile:
        train_model = torch.compile(train_model)
    # chunked_loss: the head is scored over chunks of positions, the (tokens x V) logits never exist
    step_model = functools.partial(train_model, return_logits=not cfg.chunked_loss)
    return TrainParts(model, train_model, step_model, optimizer, loader, device, cfg.grad_accum_steps(info.world_size),
                      autocast_dtype(cfg, device))


def _identity(run_dir: Path, resume_path: Path | None, loaded: dict | None) -> RunIdentity:
    """What the run folder's run.json says for this session: its id, or a fork's new one (``run_identity``)."""
    return settle_identity(run_dir, resume_path, loaded["state"].get("run_id") if loaded is not None else None)


def _write_run_folder(run_dir: Path, saver: Checkpointer, device: torch.device, counts,
                      identity: RunIdentity | None) -> None:
    """run.json, config.yaml, versions.json, params.json (rank 0), after removing the leftovers of a crashed save."""
    info = saver.info
    if info.is_main:
        run_dir.mkdir(parents=True, exist_ok=True)
        mark(run_dir, "train", RUN_FILES)  # the run folder's marker: what train writes is its own
        ckpt.clean_partial(run_dir)
        write_identity(run_dir, identity)  # round 14 (A156, A157, A239): whose steps and metrics lines are whose
        atomic_write_text(run_dir / "config.yaml", saver.folder.config_text)
        atomic_write_json(run_dir / "versions.json", collect_versions(device, saver.folder.tokenizer_name,
                                                                      info.world_size))
        atomic_write_json(run_dir / "params.json", counts.as_dict())
    D.barrier(info)


def _describe(cfg: RunConfig, device: torch.device, info: D.DistInfo, counts, parts: TrainParts) -> list[str]:
    """The lines printed at the start: device and parameters, batch geometry, a schedule warning."""
    amp = "fp32" if parts.amp_dtype is None else str(parts.amp_dtype).removeprefix("torch.") + " autocast"
    head = "tied" if counts.tied else f"{counts.head:,}"
    lines = [f"device {device} x{info.world_size} ({amp}), {cfg.model.embedding} model: params input "
             f"{counts.input:,} | body {counts.body:,} | head {head} | total {counts.total:,}",
             f"{cfg.total_steps} steps x {cfg.batch_tokens:,} tokens (micro batch {cfg.micro_batch_size} x "
             f"{cfg.data.seq_len}, grad accumulation {parts.accum}, world {info.world_size})"]
    if parts.model.restricted:
        lines.append(f"softmax over the {parts.model.output_ids.numel():,} of {cfg.model.vocab_size:,} ids that occur "
                     f"in {cfg.data.path} (data.softmax=corpus): losses compare only with runs that set it too")
    if cfg.schedule.warmup_steps >= cfg.total_steps:
        lines.append(f"note: schedule.warmup_steps={cfg.schedule.warmup_steps} >= {cfg.total_steps} steps: the "
                     f"learning rate never decays; lower schedule.warmup_steps for a cosine phase")
    return lines


# ---- each step ------------------------------------------------------------------------------------
@dataclass
class _Session:
    """What one optimizer step and its follow-ups (metrics row, validation, checkpoint) need."""

    cfg: RunConfig
    run_dir: Path
    info: D.DistInfo
    parts: TrainParts
    saver: Checkpointer
    validator: Validator
    metrics: MetricsLogger
    out: "_Console"
    speed: "_Speed"

    def step(self, state: TrainState) -> None:
        """One ``train_step`` at the scheduled lr, then its metrics row, validation and checkpoint."""
        cfg = self.cfg
        lr = lr_at(state.step, cfg.optim.lr, cfg.schedule.warmup_steps, cfg.total_steps,
                   cfg.optim.lr * cfg.schedule.min_lr_ratio)
        logged = _logged_step(state.step + 1, cfg)
        t0 = time.perf_counter()
        try:
            result = train_step(self.parts, cfg, self.info, lr, group_norms=logged,
                                before_update=self.saver.write_pending)
        except (RuntimeError, MemoryError) as e:
            if not out_of_memory(e):
                raise
            raise UserError(_out_of_memory_message(state.step + 1, cfg, e, self.run_dir)) from None
        if not result.finite:
            raise NonFiniteLossError(_divergence_message(state.step + 1, result.loss, result.grad_norm, lr, cfg,
                                                         self.run_dir))
        dt = time.perf_counter() - t0
        state.step += 1
        state.tokens += cfg.batch_tokens
        state.train_time_s += dt
        if self.speed.add(dt, cfg.batch_tokens, compiled=cfg.compile):
            self.out.note(f"torch.compile: the first step took {dt:.1f} s, compilation included")
        self.out.progress(result.loss, self.speed.tokens_per_s)
        if logged:
            self._log(state, result, lr)
        if self.validator.due(state.step):
            state.last_eval, state.last_eval_step = self._validate(state), state.step
            self.metrics.log({"step": state.step, "tokens": state.tokens, **state.last_eval.metrics_row(), "split": "val"})
            self.out.note(_eval_line(state))
        self._checkpoint(state, lr)

    def _validate(self, state: TrainState) -> EvalResult:
        """The validation after ``state.step``. Out of memory, one line (issue 30 round 27, R9: the allocator's
        traceback, exit 1, and the step just trained was lost): one process first saves that step, whose weights
        are finite and whose training loss was, so ``--resume auto`` with a smaller eval_batch_size continues from
        it (a finished run's resume validates it); under torchrun, whose save is collective and whose other ranks
        may be waiting in the validation's all-reduce, nothing more is saved and the line says so."""
        try:
            return self.validator.run(self.parts.model)
        except (RuntimeError, MemoryError) as e:
            if not out_of_memory(e):
                raise
            said = allocator_words(e)  # out of the except: the failed forward's frames and tensors are freed
        saved = self.info.world_size == 1 and all(bool(p.isfinite().all()) for p in self.parts.model.parameters())
        if saved:
            self.saver.save_now(state)
        raise UserError(_validation_out_of_memory_message(state.step, self.cfg, (self.validator.largest_rows(), said),
                                                          saved, self.run_dir))

    def _log(self, state: TrainState, result, lr: float) -> None:
        speed = self.speed
        self.metrics.log({"step": state.step, "tokens": state.tokens, "train_loss": result.loss, "lr": lr,
                          "tokens_per_s": speed.tokens_per_s, "time_s": state.train_time_s,
                          "grad_norm": result.grad_norm, **result.group_norms, **speed.compile_row()})
        self.out.line(f"step {state.step}/{self.cfg.total_steps}: loss {result.loss:.4f}, lr {lr:.3g}, "
                      f"{speed.tokens_per_s:,.0f} tok/s")
        speed.new_interval()

    def _checkpoint(self, state: TrainState, lr: float) -> None:
        """The last step is saved at once (its final validation checked it); a periodic one during the next step."""
        cfg = self.cfg
        if state.step == cfg.total_steps:
            if not math.isfinite(state.last_eval.loss):
                raise NonFiniteLossError(_divergence_message(state.step, state.last_eval.loss, 0.0, lr, cfg,
                                                             self.run_dir, what="validation loss"))
            self.saver.save_now(state)  # the end: verified by the final evaluation instead
        elif cfg.checkpoint_interval and state.step % cfg.checkpoint_interval == 0:
            self.saver.keep(state)  # written during the next step, once these weights gave a finite loss

def _logged_step(step: int, cfg: RunConfig) -> bool:
    """Whether optimizer step ``step`` (1-based) writes a metrics row: every log_interval, the first and the last."""
    return step % cfg.log_interval == 0 or step == cfg.total_steps or step == 1


def _eval_line(state: TrainState) -> str:
    v = state.last_eval
    return (f"step {state.step}: val loss {v.loss:.4f}, ppl {v.ppl:.2f}" + (f", bpb {v.bpb:.4f}" if v.bpb else ""))


class _Speed:
    """This session's training time and tokens, the tokens/s since the last logged step, and ``compile_s``:
    the first step of the session under torch.compile (compilation included), logged once."""

    def __init__(self):
        self.time, self.tokens = 0.0, 0
        self._interval_time, self._interval_tokens = 0.0, 0
        self.compile_s: float | None = None
        self._compile_logged = False

    def add(self, dt: float, tokens: int, compiled: bool) -> bool:
        """Count a step; True when it was this session's first under torch.compile (``compile_s`` set)."""
        first = self.tokens == 0
        self.time += dt
        self.tokens += tokens
        self._interval_time += dt
        self._interval_tokens += tokens
        if compiled and first:  # this session's first step compiled the model
            self.compile_s = dt
        return compiled and first

    @property
    def tokens_per_s(self) -> float:
        return self._interval_tokens / max(self._interval_time, 1e-9)

    def compile_row(self) -> dict:
        """``{"compile_s": ...}`` for the first metrics row after the compiled step, else ``{}``."""
        if self.compile_s is None or self._compile_logged:
            return {}
        self._compile_logged = True
        return {"compile_s": self.compile_s}

    def new_interval(self) -> None:
        self._interval_time, self._interval_tokens = 0.0, 0


class _Console:
    """Progress on stderr (rank 0, unless quiet): a tqdm bar on a terminal, one line per logged step in a log file;
    ``notice``: what the user must know even with --quiet (rank 0): why the run stopped."""

    def __init__(self, enabled: bool, main: bool = True):
        self.enabled, self.main = enabled, main
        self.interactive = enabled and sys.stderr.isatty()
        self.bar = None

    def say(self, msg: str) -> None:
        if self.enabled:
            print(msg, file=sys.stderr, flush=True)

    def notice(self, msg: str) -> None:
        if self.main:
            print(msg, file=sys.stderr, flush=True)

    def note(self, msg: str) -> None:
        """A line that must not break the progress bar."""
        if self.interactive and self.bar is not None:
            self.bar.write(msg, file=sys.stderr)
        else:
            self.say(msg)

    def line(self, msg: str) -> None:
        """A per-step line, for log files only (the bar shows the same on a terminal)."""
        if not self.interactive:
            self.say(msg)

    def start(self, lines: list[str], total: int, initial: int) -> None:
        from tqdm.auto import tqdm

        for msg in lines:
            self.say(msg)
        self.bar = tqdm(total=total, initial=initial, disable=not self.interactive, unit="step", dynamic_ncols=True,
                        file=sys.stderr)

    def progress(self, loss: float, tokens_per_s: float) -> None:
        self.bar.update(1)
        self.bar.set_postfix(loss=f"{loss:.4f}", tok_s=f"{tokens_per_s:,.0f}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---- the end --------------------------------------------------------------------------------------
def _write_summary(run_dir: Path, state: TrainState, speed: _Speed, wall_time_s: float, counts, stopped: str | None,
                   info: D.DistInfo, resumed_from: int | None = None) -> TrainSummary:
    """The summary ``train`` returns; rank 0 also writes it to summary.json.

    Parameters: the fields of the TrainSummary it builds (the summary is the object they become).
    """
    latest = ckpt.latest_checkpoint(run_dir) if info.is_main else None
    last = state.last_eval or EvalResult()
    summary = TrainSummary(
        run_dir=str(run_dir), steps=state.step, tokens=state.tokens, wall_time_s=wall_time_s,
        train_time_s=speed.time, tokens_per_s=speed.tokens / speed.time if speed.time > 0 else None,
        compile_s=speed.compile_s, final_val_loss=last.loss, final_val_ppl=last.ppl,
        final_val_bpb=last.bpb, params=counts, metrics=str(run_dir / "metrics.jsonl"),
        checkpoint=str(latest) if latest else None, stopped=stopped, resumed_from=resumed_from)
    if info.is_main:
        atomic_write_json(run_dir / "summary.json", summary.to_dict())
    return summary


# ---- stopping -------------------------------------------------------------------------------------
def _say_stop(out: "_Console", line: str) -> None:
    """A stop's line, unless the caller says stops itself (``stop_signals.caller_says_stops``: a demo's worker)."""
    from .. import stop_signals

    if not stop_signals.caller_says_stops:
        out.notice(line)


def _stopped_before_first_step(flag: "_StopFlag", info: D.DistInfo, device: torch.device, out: "_Console",
                               state: TrainState, doing: str) -> bool:
    """Whether a SIGTERM / SIGINT arrived before this session's first step (every rank agrees); if so, say what it
    stopped, even with --quiet (a stop must never look like a finished run). Ctrl-C then exits 130."""
    if not D.any_rank(flag.signum is not None, info, device):
        return False
    name = signal.Signals(flag.signum).name if flag.signum is not None else "SIGTERM"
    where = f"the run stays at its step-{state.step} checkpoint" if state.step else "the run has not started"
    how = ("run the same command (with --resume auto) to go on" if ckpt.RESUME_HINT.get() == ckpt.TRAIN_RESUME_HINT
           else ckpt.RESUME_HINT.get())
    _say_stop(out, f"stopped by {name} before the first step of this session (while {doing}): nothing was trained "
                   f"and no checkpoint was written; {where}; {how}")
    if name == "SIGINT":
        raise ReportedInterrupt
    return True


def _early_summary(run_dir: Path, state: TrainState, flag: "_StopFlag", wall_time_s: float, counts) -> TrainSummary:
    """The summary of a session stopped before its first step (nothing written: the run folder is as it was)."""
    name = signal.Signals(flag.signum).name if flag.signum is not None else "SIGTERM"
    return TrainSummary(run_dir=str(run_dir), steps=state.step, tokens=state.tokens, wall_time_s=wall_time_s,
                        params=counts, stopped=name)


# A stop repeated within this many seconds of the first is the same stop, arriving twice (``_StopFlag._handle``).
SAME_STOP_S = 5.0


class _StopFlag:
    """SIGTERM / SIGINT -> a flag the loop checks between steps (main thread only)."""

    def __init__(self):
        self.signum: int | None = None
        self.training = False  # set once the first step begins: before it, nothing is trained or saved
        self._first_at = 0.0  # time.monotonic() of the first stop
        self._old: dict[int, object] = {}

    def _handle(self, signum, frame):
        """The first stop is noted (the step ends, a checkpoint is saved); a second Ctrl-C stops at once, and so does
        another stop sent ``SAME_STOP_S`` or more after the first: a second SIGTERM was noted again, and a step of
        millions of micro batches ran on (issue 30 round 22, Q57: `timeout`, then `kill`, left train running 10+
        minutes). Footgun: one stop often arrives twice, from the process group and from a parent passing it on (the
        sweep, the demo, torchrun's agent); a repeat within ``SAME_STOP_S`` is that same stop, and a worker whose
        caller says its stops (the sweep holds further stops while its workers save) takes every repeat as it."""
        from .. import stop_signals

        if self.signum is not None:
            if signum == signal.SIGINT and self.signum == signal.SIGINT:
                raise KeyboardInterrupt  # second Ctrl-C: stop now
            if stop_signals.caller_says_stops or time.monotonic() - self._first_at < SAME_STOP_S:
                return
            if signum == signal.SIGINT:
                raise KeyboardInterrupt  # the CLI: "stopped by Ctrl-C (SIGINT) before `leviathan train` finished"
            raise Stopped(signum)  # the CLI: "stopped by SIGTERM before ...", exit 128 + signum
        self.signum, self._first_at = signum, time.monotonic()
        if stop_signals.caller_says_stops:
            return
        again = "press Ctrl-C again" if signum == signal.SIGINT else f"exit status 0; send {signal.Signals(signum).name} again"
        print(f"\n{self._received(signum)} ({again} to stop at once)", file=sys.stderr, flush=True)

    def _received(self, signum: int) -> str:
        """What a stop will do: before the first step "finishing this step, saving a checkpoint" was followed by
        "stopped ... before the first step ...: nothing was trained and no checkpoint was written" (issue 30 round 18,
        G256, through the API as in the CLI)."""
        name = signal.Signals(signum).name
        if not self.training:
            return f"{name} received: stopping before the first step (nothing will be trained or saved)"
        return f"{name} received: finishing this step, saving a checkpoint, then stopping"

    def __enter__(self):
        from .. import stop_signals

        if threading.current_thread() is threading.main_thread():
            for sig in stop_and_interrupt_signals():  # SIGHUP and SIGINT too, unless ignored (nohup, a background job)
                self._old[sig] = signal.signal(sig, self._handle)
        if stop_signals.pending_stop is not None and self.signum is None:  # a worker's stop before train began
            self._handle(stop_signals.pending_stop, None)
            stop_signals.pending_stop = None
        return self

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


# What train writes into its run folder (``ownership.check_claim``: none of them may be a user's file already there).
RUN_FILES = ("config.yaml", "versions.json", "params.json", "metrics.jsonl", "summary.json", "tensorboard",
             CHECKPOINTS, RUN_FILE)


def _earlier_run(run_dir: Path) -> bool:
    """A run folder an earlier version of train wrote (no ownership marker yet): a step folder in checkpoints/ that
    holds what train saves there (state.json or the weights), or the versions.json train writes (it names
    leviathan's version). A folder merely named like a step proves nothing: a user's ``checkpoints/step-00000002``
    holding notes.txt was passed over as a damaged checkpoint and saved over, the notes deleted (issue 30 round 11,
    R71, R154)."""
    if any(step_of(p.name) is not None and ((p / "state.json").is_file() or (p / "model.safetensors").is_file())
           for p in (run_dir / CHECKPOINTS).glob("step-*")):
        return True
    try:
        versions = json_text.read_file(run_dir / "versions.json")
    except (OSError, ValueError):
        return False
    return isinstance(versions, dict) and "leviathan" in versions and "torch" in versions


def _check_run_dir(run_dir: Path) -> None:
    """Fail before any work when the run folder cannot be created or written (a file in the way, no permission)."""
    existing = run_dir.absolute()
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"cannot use run folder {str(run_dir)!r}: {str(existing)!r} "
                        f"{not_a_folder_there(existing)}; choose another --run-dir or move the file away")
    if not os.access(existing, os.W_OK | os.X_OK):
        if os.statvfs(existing).f_flag & os.ST_RDONLY:
            raise UserError(f"cannot write run folder {str(run_dir)!r}: {str(existing)!r} is on a read-only file "
                            f"system; choose a --run-dir on a writable disk")
        raise UserError(f"cannot write run folder {str(run_dir)!r}: {str(existing)!r} is not writable (permission "
                        f"denied); make it writable (chmod u+w) or choose another --run-dir")


def _data_tokenizer(data_dir: str):
    """The data folder's tokenizer, saved into every checkpoint; None (with a warning) if its library is missing.

    A tokenizer that contradicts the data folder's meta.json (a tokenizer.json swapped or edited by hand) is a
    UserError: training on ids the recorded tokenizer does not produce would go unnoticed until generation."""
    from ..data.tokenizer import load_tokenizer

    try:
        return load_tokenizer(data_dir)
    except ImportError as e:
        warnings.warn(f"checkpoints will not include a tokenizer: {e}")
        return None


def _out_of_memory_message(step: int, cfg: RunConfig, error: BaseException, run_dir: Path) -> str:
    """The one line for a training step that ran out of memory (issue 30 round 26, P18: the allocator's 90-line
    traceback, exit 1): the step, its micro batch, the allocator's own words, what the run folder keeps and the fix.
    Nothing of the failed step is saved: a pending checkpoint is written only in ``before_update``, of the weights the
    previous step left, so the folder's checkpoints are all whole steps and ``--resume auto`` continues from them."""
    from ..memory_preflight import SKIP

    mb, seq = cfg.micro_batch_size, cfg.data.seq_len
    said = allocator_words(error)
    smaller = f"micro_batch_size={mb // 2} (batch_tokens stays: more accumulation steps)" if mb > 1 else \
        "a smaller model (model.*) or data.seq_len"
    skipped = f" ({SKIP}=1 skipped the memory check that counts this)" if os.environ.get(SKIP, "").strip() == "1" \
        else ""
    kept = f"{str(run_dir)!r} keeps its checkpoints of whole steps"
    if ckpt.latest_checkpoint(run_dir) is None:  # said of a run that had none (issue 30 round 29, V30)
        kept = f"{str(run_dir)!r} holds no checkpoint yet (nothing of the failed step is saved: it starts from step 0)"
    return (f"step {step} ran out of memory training a micro batch of {mb} x {seq} tokens ({said}){skipped}; "
            f"{kept}; set {smaller}, or free memory, then {ckpt.RESUME_HINT.get()}")


def _validation_out_of_memory_message(step: int, cfg: RunConfig, failed: tuple[int, str], saved: bool,
                                      run_dir: Path) -> str:
    """The one line for a validation that ran out of memory (issue 30 round 27, R9): the step, the validation batch
    (``failed``: its windows of data.seq_len, at most eval_batch_size, or the micro_batch_size when that is unset,
    and the allocator's words), whether the step was saved (``_Session._validate``) and the smaller eval_batch_size;
    training needs no less memory."""
    from ..memory_preflight import SKIP

    (rows, said), seq = failed, cfg.data.seq_len
    setting = (f"eval_batch_size {cfg.eval_batch_size}" if cfg.eval_batch_size else
               f"eval_batch_size unset: the micro_batch_size {cfg.micro_batch_size}")
    skipped = f" ({SKIP}=1 skipped the memory check that counts this)" if os.environ.get(SKIP, "").strip() == "1" \
        else ""
    latest = ckpt.latest_checkpoint(run_dir)
    kept = (f"step {step} was saved in {str(run_dir)!r}" if saved else
            f"step {step} was not saved; {str(run_dir)!r} keeps " + (f"{latest.name}" if latest else "no checkpoint"))
    return (f"the validation after step {step} ran out of memory scoring a batch of {rows} x {seq} tokens ({setting}; "
            f"{said}){skipped}; {kept}; set eval_batch_size={max(1, rows // 2)} (validation's windows per forward; "
            f"training is unchanged), or free memory, then {ckpt.RESUME_HINT.get()}")


def _divergence_message(step: int, loss: float, norm: float, lr: float, cfg: RunConfig, run_dir: Path,
                        what: str = "loss") -> str:
    what = f"{what} is {loss}" if not math.isfinite(loss) else f"gradient norm is {norm} (loss {loss:.4f})"
    latest = ckpt.latest_checkpoint(run_dir)
    keep = (f"the last good checkpoint is {latest} (nothing was saved from the diverged state)" if latest
            else "no checkpoint had been saved yet (nothing was saved from the diverged state)")
    if (fix := LR_FIX.get()) is not None:  # a caller with its own flags (the demo)
        return f"training diverged at step {step}: {what} at lr {lr:.3g}; {keep}. {fix(cfg)}{_suspects(cfg)}"
    return (f"training diverged at step {step}: {what} at lr {lr:.3g}; {keep}. Try a lower learning rate, for "
            f"example optim.lr={cfg.optim.lr / 3:.3g} (now {cfg.optim.lr:.3g}), or a longer schedule.warmup_steps"
            f"{_suspects(cfg)}, and {ckpt.RESUME_HINT.get()}")


# How a caller that builds the config from its own flags words the divergence line's fix: (cfg) -> text (round 15,
# A126: the demo's line named train's settings).
LR_FIX: contextvars.ContextVar = contextvars.ContextVar("LR_FIX", default=None)


@contextlib.contextmanager
def lr_fix(words):
    """Word the divergence line's fix with ``words(cfg)`` inside the block (``LR_FIX``)."""
    token = LR_FIX.set(words)
    try:
        yield
    finally:
        LR_FIX.reset(token)


def _suspects(cfg: RunConfig) -> str:
    """The settings off their defaults that can make a loss diverge as well as the lr can: the line blamed the lr
    alone when input_lr_mult, initializer_range, rope_theta or weight_decay was the cause (issue 30 round 15,
    A171-A173, A181)."""
    from ..model.config import ModelConfig
    from ..run_config import OptimConfig

    changed = [f"optim.{n}={getattr(cfg.optim, n):g}" for n in ("input_lr_mult", "weight_decay", "eps")
               if getattr(cfg.optim, n) != getattr(OptimConfig, n)]
    changed += [f"model.{n}={getattr(cfg.model, n):g}" for n in ("initializer_range", "rope_theta", "rms_norm_eps",
                                                                  "generator_ln_eps")
                if getattr(cfg.model, n) != getattr(ModelConfig, n)]
    return f", or check the changed settings {', '.join(changed)}" if changed else ""
