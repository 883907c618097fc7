"""The training loop: ``train(cfg, run_dir, resume=None) -> summary``.

One optimizer step = ``grad_accum`` micro steps of ``micro_batch_size`` sequences on each of
``world_size`` ranks = ``cfg.batch_tokens`` tokens. Per step: set the scheduled lr, accumulate
gradients (loss / grad_accum; DDP/FSDP sync only on the last micro step), average the loss over
micro steps and ranks, clip the gradient norm, check that loss and norm are finite, step AdamW.

Run folder (rank 0 writes everything):
    config.yaml      the resolved RunConfig (model with every default explicit, vocab from the data)
    versions.json    python, torch, transformers, leviathan, git revision, device, hostname, tokenizer
    params.json      parameter counts by group (input, body, head, total), also printed at start
    metrics.jsonl    train and validation rows (see metrics.py); tensorboard/ the same as scalars
    checkpoints/step-XXXXXXXX/  see checkpoint.py

Stopping:
- SIGTERM (schedulers, ``kill``) and SIGINT (Ctrl-C) set a flag; at the end of the current step all
  ranks agree to stop, a checkpoint is saved, and ``train`` returns (SIGTERM, ``summary["stopped"]``)
  or raises KeyboardInterrupt (SIGINT; the CLI exits 130). A second Ctrl-C interrupts at once.
- A non-finite loss or gradient norm raises ``NonFiniteLossError`` before the optimizer applies the
  step, naming the step and suggesting a lower lr. Nothing is saved: the last checkpoint on disk is
  the last good state, and ``--resume auto`` with a lower ``optim.lr`` continues from it.

Exact resume: weights, AdamW state, step, token count, data loader position and RNG states are
restored, and the lr is a function of the step, so N steps + resume + N steps equals 2N steps
bit for bit on CPU (tests/integration/test_resume.py).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import random
import signal
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from ..config import atomic_write_json, atomic_write_text, dump_yaml, to_dict
from ..errors import UserError
from ..model.accounting import count_model
from ..model.llama import CausalLM
from . import checkpoint as ckpt
from . import distributed as D
from .config import RunConfig, check_vocab, data_meta
from .metrics import MetricsLogger, collect_versions
from .optim import build_optimizer, group_weight_decay
from .schedule import lr_at, set_lr


class NonFiniteLossError(UserError):
    """Training diverged: the loss (or gradient norm) is NaN or infinite."""


class _StopFlag:
    """SIGTERM / SIGINT -> a flag the loop checks between steps (main thread only)."""

    def __init__(self):
        self.signum: int | None = None
        self._old: dict[int, object] = {}

    def _handle(self, signum, frame):
        if signum == signal.SIGINT and self.signum == signal.SIGINT:
            raise KeyboardInterrupt  # second Ctrl-C: stop now
        self.signum = signum
        name = signal.Signals(signum).name
        print(f"\n{name} received: finishing this step, saving a checkpoint, then stopping "
              f"({'press Ctrl-C again to stop at once' if signum == signal.SIGINT else 'exit status 0'})",
              file=sys.stderr, flush=True)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


def _autocast_dtype(cfg: RunConfig, device: torch.device) -> torch.dtype | None:
    """None = plain fp32; else the autocast dtype."""
    if cfg.dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else None
    if cfg.dtype == "bfloat16":
        if device.type == "cpu":
            warnings.warn("dtype=bfloat16 on CPU is far slower than float32 on most CPUs; use dtype=float32")
        return torch.bfloat16
    return None


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _model_diff(saved: dict, current: dict) -> list[str]:
    return [f"{k}: {saved.get(k)!r} in the checkpoint, {current.get(k)!r} now"
            for k in sorted(set(saved) | set(current)) if saved.get(k) != current.get(k)]


def _eval_stream(cfg: RunConfig, meta: dict, val_tokens: np.ndarray) -> tuple[np.ndarray, int | None]:
    """The validation tokens evaluated each time, and their byte count (proportional if a prefix)."""
    n = len(val_tokens) if cfg.eval_tokens is None else min(len(val_tokens), cfg.eval_tokens + 1)
    tokens = val_tokens[:n]
    split = meta.get("splits", {}).get("val", {})
    total_bytes, total_tokens = split.get("bytes"), split.get("tokens") or len(val_tokens)
    num_bytes = None
    if total_bytes:
        num_bytes = total_bytes if n >= total_tokens else max(1, round(total_bytes * n / total_tokens))
    return tokens, num_bytes


def _forward_loss(train_model, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The training loss of one micro batch (a seam for tests that need a diverging run)."""
    return train_model(x, labels=y)[1]


def train(cfg: RunConfig, run_dir: str | os.PathLike, resume: str | None = None, *, quiet: bool = False) -> dict:
    """Train ``cfg`` into ``run_dir``; ``resume`` is None (fresh), ``"auto"`` or a checkpoint path.

    Returns the summary ``{"run_dir", "steps", "tokens", "wall_time_s", "tokens_per_s", "final_val_loss",
    "final_val_ppl", "final_val_bpb", "params", "metrics", "checkpoint", "stopped"}``. Under torchrun every
    rank calls this; the process group is created here if needed and destroyed on return.
    """
    device = D.resolve_device(cfg.device)
    owns_group = not (torch.distributed.is_available() and torch.distributed.is_initialized())
    info = D.init_distributed(device)
    try:
        return _train(cfg, Path(run_dir), resume, device, info, quiet)
    finally:
        if owns_group:
            D.shutdown(info)


def _train(cfg: RunConfig, run_dir: Path, resume: str | None, device: torch.device, info: D.DistInfo,
           quiet: bool) -> dict:
    from ..data.loader import BatchLoader, TokenDataset
    from ..eval.perplexity import evaluate

    t_start = time.time()
    main = info.is_main
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if (main and not quiet) else (lambda *a: None)

    # ---- data and batch geometry ------------------------------------------------------------
    meta = data_meta(cfg.data.path)
    if meta is None:
        raise UserError(f"data.path {cfg.data.path!r} is not a prepared data folder (no meta.json); "
                        f"create it with `leviathan prepare` or point data.path at one")
    check_vocab(cfg, meta)
    if main:
        _check_run_dir(run_dir)
    accum = cfg.grad_accum_steps(info.world_size)
    total_steps = cfg.total_steps
    amp_dtype = _autocast_dtype(cfg, device)
    autocast = (lambda: torch.autocast(device.type, dtype=amp_dtype)) if amp_dtype else contextlib.nullcontext

    # ---- resume point -------------------------------------------------------------------------
    resume_path = ckpt.resolve_resume(resume, run_dir)
    if resume_path is None and ckpt.list_checkpoints(run_dir):
        raise UserError(f"run folder {str(run_dir)!r} already holds checkpoints; continue it with --resume auto "
                        f"or choose another --run-dir")
    if resume == "auto" and resume_path is None:
        say(f"no checkpoint in {run_dir}; starting from step 0")
    loaded = ckpt.load_state(resume_path) if resume_path is not None else None
    if loaded is not None:
        ckpt.check_tokenizer(resume_path, cfg.data.path, "resume")
        saved_model = ckpt.run_config_from_dict(loaded["config"]).model.resolved()
        diff = _model_diff(to_dict(saved_model), to_dict(cfg.model.resolved()))
        if diff:
            raise UserError(f"cannot resume {str(resume_path)!r}: the model section differs from the checkpoint's ("
                            + "; ".join(diff[:4]) + "); resume with the checkpoint's model settings")

    # ---- model, optimizer, data ---------------------------------------------------------------
    _seed_everything(cfg.seed)
    model = CausalLM(cfg.model)  # built on CPU from the seed: identical on every rank and device
    counts = count_model(model)
    model.to(device)
    if cfg.parallel == "fsdp" and info.enabled:
        D.apply_fsdp(model)
    optimizer = build_optimizer(model, cfg.optim, device.type)
    train_data = TokenDataset(cfg.data.path, "train")
    loader = BatchLoader(train_data, cfg.data.seq_len, cfg.micro_batch_size, seed=cfg.seed, rank=info.rank,
                         world_size=info.world_size, shuffle=cfg.data.shuffle, shuffle_buffer=cfg.data.shuffle_buffer)
    val_tokens, val_bytes = _eval_stream(cfg, meta, TokenDataset(cfg.data.path, "val").tokens)

    step, tokens, elapsed_before = 0, 0, 0.0
    if loaded is not None:
        _restore(model, optimizer, loader, loaded, cfg, info)
        step, tokens = int(loaded["state"]["step"]), int(loaded["state"]["tokens"])
        elapsed_before = float(loaded["state"].get("train_time_s", 0.0))
        say(f"resumed from {resume_path} at step {step} ({tokens:,} tokens)")

    train_model: torch.nn.Module = model
    if cfg.parallel == "ddp" and info.enabled:
        train_model = D.wrap_ddp(model, device)
    if cfg.compile:
        train_model = torch.compile(train_model)
    # chunked_loss: the head is scored over chunks of positions, the (tokens x V) logits never exist
    step_model = functools.partial(train_model, return_logits=not cfg.chunked_loss)

    # ---- run folder ---------------------------------------------------------------------------
    resolved = cfg.resolved()
    config_text = dump_yaml(resolved)
    tokenizer_name = meta.get("tokenizer")
    tokenizer = _data_tokenizer(cfg.data.path) if main else None
    if main:
        run_dir.mkdir(parents=True, exist_ok=True)
        ckpt.clean_partial(run_dir)
        atomic_write_text(run_dir / "config.yaml", config_text)
        atomic_write_json(run_dir / "versions.json", collect_versions(device, tokenizer_name, info.world_size))
        atomic_write_json(run_dir / "params.json", counts.as_dict())
    D.barrier(info)
    say(f"device {device} x{info.world_size} ({'fp32' if amp_dtype is None else str(amp_dtype).removeprefix('torch.') + ' autocast'}), "
        f"{cfg.model.embedding} model: params input {counts.input:,} | body {counts.body:,} | head "
        f"{'tied' if counts.tied else f'{counts.head:,}'} | total {counts.total:,}")
    say(f"{total_steps} steps x {cfg.batch_tokens:,} tokens (micro batch {cfg.micro_batch_size} x {cfg.data.seq_len}, "
        f"grad accumulation {accum}, world {info.world_size})")
    if cfg.schedule.warmup_steps >= total_steps:
        say(f"note: schedule.warmup_steps={cfg.schedule.warmup_steps} >= {total_steps} steps: the learning rate "
            f"never decays; lower schedule.warmup_steps for a cosine phase")
    metrics = MetricsLogger(run_dir, enabled=main, resume_step=step if loaded is not None else None)

    def snapshot() -> dict:
        """Everything but weights and optimizer state, as of the end of the current step."""
        rng_json, rng_tensors = ckpt.capture_rng()
        return {"state": {"step": step, "tokens": tokens, "loader": loader.state_dict(), "rng": rng_json,
                          "world_size": info.world_size, "train_time_s": elapsed_before + train_time,
                          "tokenizer": tokenizer_name},
                "rng": rng_tensors}

    def save(snap: dict) -> None:
        """Write a checkpoint of the current weights/optimizer with ``snap``'s step, loader and RNG state."""
        nonlocal last_saved
        model_state = _model_state(model, cfg, info)  # collectives under FSDP: every rank calls
        optim_state = _optim_state(model, optimizer, cfg, info)
        if main:
            ckpt.save_checkpoint(run_dir, snap["state"]["step"], model_state, model.config.tie_word_embeddings,
                                 optim_state, snap["state"], snap["rng"], config_text, tokenizer, cfg.keep_last)
        last_saved = snap["state"]["step"]
        D.barrier(info)

    def run_eval() -> dict:
        result = evaluate(model, val_tokens, cfg.data.seq_len, cfg.eval_batch_size or cfg.micro_batch_size,
                          num_bytes=val_bytes, dtype=amp_dtype)
        row = {"step": step, "tokens": tokens, "val_loss": result["loss"], "val_ppl": result["ppl"],
               "val_bpb": result["bpb"], "split": "val"}
        metrics.log(row)
        return row

    # ---- loop ---------------------------------------------------------------------------------
    from tqdm.auto import tqdm

    interactive = main and not quiet and sys.stderr.isatty()
    bar = tqdm(total=total_steps, initial=step, disable=not interactive, unit="step", dynamic_ncols=True,
               file=sys.stderr)
    note = (lambda msg: bar.write(msg, file=sys.stderr)) if interactive else say
    train_time, session_tokens = 0.0, 0
    compile_s: float | None = None  # first step of this session under torch.compile (compilation included)
    compile_logged = False
    interval_time, interval_tokens = 0.0, 0
    last_saved = step if loaded is not None else None
    # A periodic checkpoint of step k is written during step k + 1, after the weights of step k gave a
    # finite loss and before the optimizer moves them: a checkpoint is never the state that diverged.
    pending: dict | None = None
    last_val: dict | None = None
    stopped = None
    model.train()
    try:
        with _StopFlag() as flag:
            while step < total_steps:
                t0 = time.perf_counter()
                lr = lr_at(step, cfg.optim.lr, cfg.schedule.warmup_steps, total_steps,
                           cfg.optim.lr * cfg.schedule.min_lr_ratio)
                set_lr(optimizer, lr)
                loss_sum = torch.zeros((), device=device)
                for micro in range(accum):
                    x, y = loader.next_batch()
                    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                    with D.no_grad_sync(train_model, model, cfg.parallel, skip=info.enabled and micro < accum - 1):
                        with autocast():
                            loss = _forward_loss(step_model, x, y)
                        (loss / accum).backward()
                    loss_sum += loss.detach().float()
                loss_mean = D.all_reduce_mean(loss_sum / accum, info)
                logging_step = (step + 1) % cfg.log_interval == 0 or step + 1 == total_steps or step == 0
                group_norms = _group_grad_norms(model) if logging_step and not info.enabled else {}
                if cfg.optim.grad_clip:
                    grad_norm = D.grad_norm_value(torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.optim.grad_clip))
                else:
                    grad_norm = D.grad_norm_value(torch.nn.utils.get_total_norm(
                        [p.grad for p in model.parameters() if p.grad is not None]))
                loss_value, norm_value = float(loss_mean.item()), float(grad_norm.item())
                if not (math.isfinite(loss_value) and math.isfinite(norm_value)):
                    raise NonFiniteLossError(_divergence_message(step + 1, loss_value, norm_value, lr, cfg, run_dir))
                if pending is not None:
                    save(pending)
                    pending = None
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                tokens += cfg.batch_tokens
                session_tokens += cfg.batch_tokens
                dt = time.perf_counter() - t0
                train_time += dt
                interval_time += dt
                interval_tokens += cfg.batch_tokens
                tok_s = interval_tokens / max(interval_time, 1e-9)
                if cfg.compile and session_tokens == cfg.batch_tokens:  # this session's first step compiled the model
                    compile_s = dt
                    note(f"torch.compile: the first step took {dt:.1f} s, compilation included")
                bar.update(1)
                bar.set_postfix(loss=f"{loss_value:.4f}", tok_s=f"{tok_s:,.0f}", refresh=False)
                if step % cfg.log_interval == 0 or step == total_steps or step == 1:
                    metrics.log({"step": step, "tokens": tokens, "train_loss": loss_value, "lr": lr,
                                 "tokens_per_s": tok_s, "time_s": elapsed_before + train_time,
                                 "grad_norm": norm_value, **group_norms,
                                 **({"compile_s": compile_s} if compile_s is not None and not compile_logged else {})})
                    compile_logged = compile_s is not None
                    if not interactive:  # a log file instead of a terminal: one line per logged step
                        note(f"step {step}/{total_steps}: loss {loss_value:.4f}, lr {lr:.3g}, {tok_s:,.0f} tok/s")
                    interval_time, interval_tokens = 0.0, 0
                if step == total_steps or (cfg.eval_interval and step % cfg.eval_interval == 0):
                    last_val = run_eval()
                    if main and not quiet:
                        note(f"step {step}: val loss {last_val['val_loss']:.4f}, ppl {last_val['val_ppl']:.2f}"
                             + (f", bpb {last_val['val_bpb']:.4f}" if last_val["val_bpb"] else ""))
                if step == total_steps:
                    if last_val is not None and not math.isfinite(last_val["val_loss"]):
                        raise NonFiniteLossError(_divergence_message(step, last_val["val_loss"], 0.0, lr, cfg, run_dir,
                                                                     what="validation loss"))
                    save(snapshot())  # the end: verified by the final evaluation instead
                elif cfg.checkpoint_interval and step % cfg.checkpoint_interval == 0:
                    pending = snapshot()
                if D.any_rank(flag.signum is not None, info, device):
                    stopped = signal.Signals(flag.signum).name if flag.signum is not None else "SIGTERM"
                    if last_saved != step:
                        save(pending or snapshot())
                        pending = None
                    say(f"stopped by {stopped} at step {step}; checkpoint saved, continue with --resume auto")
                    break
            if stopped == "SIGINT":
                raise KeyboardInterrupt
    finally:
        bar.close()
        metrics.close()

    if last_val is None and stopped is None:  # resumed a finished run: report its validation numbers
        result = evaluate(model, val_tokens, cfg.data.seq_len, cfg.eval_batch_size or cfg.micro_batch_size,
                          num_bytes=val_bytes, dtype=amp_dtype)
        last_val = {"val_loss": result["loss"], "val_ppl": result["ppl"], "val_bpb": result["bpb"]}
    latest = ckpt.latest_checkpoint(run_dir) if main else None
    summary = {
        "run_dir": str(run_dir),
        "steps": step,
        "tokens": tokens,
        "wall_time_s": time.time() - t_start,
        "train_time_s": train_time,
        "tokens_per_s": session_tokens / train_time if train_time > 0 else None,
        "compile_s": compile_s,
        "final_val_loss": last_val["val_loss"] if last_val else None,
        "final_val_ppl": last_val["val_ppl"] if last_val else None,
        "final_val_bpb": last_val["val_bpb"] if last_val else None,
        "params": counts.as_dict(),
        "metrics": str(run_dir / "metrics.jsonl"),
        "checkpoint": str(latest) if latest else None,
        "stopped": stopped,
    }
    if main:
        atomic_write_json(run_dir / "summary.json", summary)
    return summary


def _group_grad_norms(model: torch.nn.Module) -> dict:
    """Gradient norms (before clipping) of the input side and of an untied head, for the metrics: how much
    signal the generator or table receives compared with the rest (single-process runs only)."""
    from .optim import HEAD_NAME, INPUT_PREFIX

    groups: dict[str, list[torch.Tensor]] = {"grad_norm_input": [], "grad_norm_head": []}
    seen: set[int] = set()
    for name, p in model.named_parameters():
        if p.grad is None or id(p) in seen:
            continue
        seen.add(id(p))
        key = "grad_norm_input" if name.startswith(INPUT_PREFIX) else "grad_norm_head" if name == HEAD_NAME else None
        if key:
            groups[key].append(p.grad.detach().float().norm())
    return {k: float(torch.stack(v).norm()) for k, v in groups.items() if v}


def _check_run_dir(run_dir: Path) -> None:
    """Fail before any work when the run folder cannot be created or written (a file in the way, no permission)."""
    existing = run_dir.absolute()
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"cannot use run folder {str(run_dir)!r}: {str(existing)!r} is a file, not a folder; "
                        f"choose another --run-dir or move the file away")
    if not os.access(existing, os.W_OK | os.X_OK):
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


def _divergence_message(step: int, loss: float, norm: float, lr: float, cfg: RunConfig, run_dir: Path,
                        what: str = "loss") -> str:
    what = f"{what} is {loss}" if not math.isfinite(loss) else f"gradient norm is {norm} (loss {loss:.4f})"
    latest = ckpt.latest_checkpoint(run_dir)
    keep = (f"the last good checkpoint is {latest} (nothing was saved from the diverged state)" if latest
            else "no checkpoint had been saved yet (nothing was saved from the diverged state)")
    return (f"training diverged at step {step}: {what} at lr {lr:.3g}; {keep}. Try a lower learning rate, for "
            f"example optim.lr={cfg.optim.lr / 3:.3g} (now {cfg.optim.lr:.3g}), or a longer schedule.warmup_steps, "
            f"and continue with --resume auto")


# ---- state (de)serialisation, FSDP-aware --------------------------------------------------------
def _state_options(cfg: RunConfig, info: D.DistInfo, **kwargs):
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    fsdp = cfg.parallel == "fsdp" and info.enabled
    return StateDictOptions(full_state_dict=True, cpu_offload=fsdp, **kwargs)


def _model_state(model: torch.nn.Module, cfg: RunConfig, info: D.DistInfo) -> dict:
    if cfg.parallel == "fsdp" and info.enabled:
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        return get_model_state_dict(model, options=_state_options(cfg, info))  # collective
    return model.state_dict()


def _optim_state(model, optimizer, cfg: RunConfig, info: D.DistInfo) -> dict:
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    state = get_optimizer_state_dict(model, optimizer, options=_state_options(cfg, info))  # collective under FSDP
    if cfg.parallel == "fsdp" and info.enabled or next(model.parameters()).device.type != "cpu":
        state = _to_cpu(state)
    return state


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_cpu(v) for v in obj]
    return obj


def _restore(model, optimizer, loader, loaded: dict, cfg: RunConfig, info: D.DistInfo) -> None:
    from torch.distributed.checkpoint.state_dict import set_model_state_dict, set_optimizer_state_dict

    if cfg.parallel == "fsdp" and info.enabled:
        set_model_state_dict(model, loaded["model"], options=_state_options(cfg, info, strict=False))
    else:
        ckpt.load_model_state(model, loaded["model"])  # copies into the existing (possibly tied) parameters
    set_optimizer_state_dict(model, optimizer, loaded["optimizer"], options=_state_options(cfg, info))
    # the scheduled lr is set at every step; hyperparameters from the *current* config win over the saved ones
    for group in optimizer.param_groups:
        group["betas"], group["eps"] = cfg.optim.betas, cfg.optim.eps
        group["weight_decay"] = group_weight_decay(cfg.optim, group.get("name"))
    state = loaded["state"]
    loader.load_state_dict(state["loader"])
    if loaded["rng"] is not None:
        ckpt.restore_rng(state["rng"], loaded["rng"])
