"""``modes``: what a training step of each configuration costs, per mode.

Per configuration, dense_tied and leviathan each run the same step (forward + backward + AdamW on the same batches)
three ways: ``plain`` (eager, full (tokens x V) logits and ``F.cross_entropy``), ``chunked`` (the head scored over
chunks of positions, ``leviathan.model.loss``: what ``leviathan train`` does) and ``compiled`` (``chunked`` under
``torch.compile``, the loss eager). The six steps are alternated in one process (``harness.alternate``); the compile
time is the first compiled call minus a typical step. Peak resident memory cannot be separated inside one process,
so each (variant, mode) also runs a few steps in a fresh subprocess (``python -m leviathan.bench --rss``) that
reports its peak: the memory a training process of that mode needs, model and optimizer state included.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Callable

import torch

from ..configs import CONFIGS, BenchOptions
from ..data import TokenData
from ..harness import TrainStep, alternate, build_model, free, median, stats

MODES = ("plain", "chunked", "compiled")
VARIANTS = ("dense_tied", "leviathan")


class ModeStep(TrainStep):
    """``harness.TrainStep`` with the loss computed in ``mode``: ``plain`` (full logits, then cross-entropy),
    ``chunked`` (the chunked head) or ``compiled`` (``torch.compile`` of the model, chunked head)."""

    def __init__(self, model, batches, mode: str):
        super().__init__(model, batches)
        self.mode = mode
        self.forward = torch.compile(model) if mode == "compiled" else model

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.forward(x, labels=y, return_logits=self.mode == "plain")[1]


def bench_modes(bc, batches, repeats: int, warmup: int = 1, rss: bool = True,
                log: Callable[[str], None] = print) -> dict:
    """Tokens/s of every (variant, mode) side by side, compile time, and (``rss``) peak memory per process."""
    from ...value_rules import check_callback, check_switches

    check_callback("bench_modes", "log", log)  # a function of one message (round 31, AA281, AA714)
    log = print if log is None else log  # None is the default, as check_callback's line says
    check_switches("bench_modes", rss=rss)  # 'no' was true (round 30, Y621's kind)
    steps, compile_s = {}, {}
    for v in VARIANTS:
        for mode in MODES:
            step = ModeStep(build_model(bc.model(v)), batches, mode)
            t0 = time.perf_counter()
            step()  # the first call compiles (compiled mode); for the others it is a warm-up step
            compile_s[(v, mode)] = time.perf_counter() - t0
            steps[f"{v}/{mode}"] = step
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, repeats, warmup, cpu)
    tokens = batches[0][0].numel()
    rows = {name: {**stats(t, cpu[name]), "tokens_per_s": tokens / median(t), "final_loss": steps[name].last_loss}
            for name, t in times.items()}
    for v in VARIANTS:
        first, typical = compile_s[(v, "compiled")], rows[f"{v}/compiled"]["median_s"]
        rows[f"{v}/compiled"]["compile_s"] = max(0.0, first - typical)
    out = {"config": bc.name, "vocab_size": bc.model("dense_tied").vocab_size, "description": bc.description,
           "batch_size": bc.batch_size, "seq_len": bc.seq_len,
           "tokens_per_batch": tokens, "repeats": repeats, "warmup": warmup, "steps": rows,
           "ratios": mode_ratios(rows)}
    del steps
    free()
    if rss:
        out["peak_rss_mb"] = {}
        for v in VARIANTS:
            for mode in MODES:
                log(f"[modes] {bc.name}: peak memory of {v}/{mode} in a fresh process ...")
                out["peak_rss_mb"][f"{v}/{mode}"] = peak_rss_mb(bc.name, v, mode, batches)
    return out


def mode_ratios(rows: dict) -> dict:
    """Speed-ups between modes per variant (tokens/s) and leviathan / dense_tied per mode (step time)."""
    def speed(name):
        return rows[name]["tokens_per_s"]

    out = {}
    for v in VARIANTS:
        out[f"{v} chunked / plain"] = speed(f"{v}/chunked") / speed(f"{v}/plain")
        out[f"{v} compiled / chunked"] = speed(f"{v}/compiled") / speed(f"{v}/chunked")
    for mode in MODES:  # step time, as the other training ratios of the benchmark
        out[f"leviathan / dense_tied step, {mode}"] = rows[f"leviathan/{mode}"]["median_s"] / \
            rows[f"dense_tied/{mode}"]["median_s"]
    return out


def peak_rss_mb(config: str, variant: str, mode: str, batches, steps: int = 3) -> float | None:
    """Peak resident MB of a fresh process that builds the model and runs ``steps`` training steps."""
    x, y = batches[0]
    payload = json.dumps({"config": config, "variant": variant, "mode": mode, "steps": steps,
                          "x": x.tolist(), "y": y.tolist(), "threads": torch.get_num_threads()})
    proc = subprocess.run([sys.executable, "-m", "leviathan.bench", "--rss"], input=payload, text=True,
                          capture_output=True, timeout=1800)
    if proc.returncode != 0:
        return None
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["peak_rss_mb"])


def rss_child() -> None:
    """Entry of ``peak_rss_mb``'s subprocess: read the request on stdin, build, train, print the peak RSS."""
    req = json.loads(sys.stdin.read())
    torch.set_num_threads(req["threads"])
    x, y = torch.tensor(req["x"]), torch.tensor(req["y"])
    step = ModeStep(build_model(CONFIGS[req["config"]].model(req["variant"])), [(x, y)], req["mode"])
    for _ in range(req["steps"]):
        step()
    print(json.dumps({"peak_rss_mb": _peak_rss_mb()}))


def _peak_rss_mb() -> float:
    """This process's peak resident memory. Linux: VmHWM of its own address space. Not ``ru_maxrss``: that
    survives execve, so a child forked from a large parent reports the parent's peak."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(opts: BenchOptions, data: dict[str, TokenData], log: Callable[[str], None]) -> dict:
    out = {}
    for name in opts.configs:
        bc = CONFIGS[name]
        reps = opts.repeats_for(5 if name != "paper" else 3, 1)
        batches = data[name].batches(bc.batch_size, bc.seq_len, count=4)
        log(f"[modes] {name}: plain / chunked / compiled x dense_tied / leviathan, {reps} alternating repeats ...")
        out[name] = bench_modes(bc, batches, reps, opts.warmup, rss=not opts.quick, log=log)
    return out
