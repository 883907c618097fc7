"""The timing protocol and the step every training comparison times.

``alternate`` calls the compared functions in turn (a, b, a, b, ...) so that a drift in machine load
hits all of them alike; ``stats`` turns the times into the medians the report compares. ``TrainStep``
is one forward + backward + AdamW step with the training loop's optimizer (parameter groups by name).
"""

from __future__ import annotations

import gc
import statistics
import time
from typing import Callable, Optional, Sequence

import torch
import torch.nn.functional as F

from ..model.config import ModelConfig


def alternate(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 1,
              cpu_times: Optional[dict[str, list[float]]] = None) -> dict[str, list[float]]:
    """Wall seconds of each function, called in turn (a, b, a, b, ...) after ``warmup`` untimed rounds; ``cpu_times``
    receives the process CPU seconds of the same calls (with one thread on a shared machine, the steadier measure)."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            if cpu_times is not None:
                cpu_times.setdefault(name, []).append(time.process_time() - c0)
    return times


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def stats(times: Sequence[float], cpu: Optional[Sequence[float]] = None) -> dict:
    """Median, min, max and every sample (wall seconds), plus the CPU-time median and samples if given."""
    out = {"median_s": median(times), "min_s": float(min(times)), "max_s": float(max(times)),
           "times_s": [float(t) for t in times]}
    if cpu:
        out["cpu_median_s"] = median(cpu)
        out["cpu_times_s"] = [float(t) for t in cpu]
    return out


def throughput_row(times: Sequence[float], cpu: Sequence[float], tokens: int, samples: bool = True) -> dict:
    """``stats`` of one compared thing plus ``tokens_per_s`` (``tokens`` per timed call, over the median);
    ``samples=False`` drops the per-call samples (a decode section times thousands of single tokens)."""
    from ..value_rules import check_switches

    check_switches("throughput_row", samples=samples)  # 'no' was true (round 30, Y621's kind)
    row = stats(times, cpu)
    if not samples:
        row.pop("times_s"), row.pop("cpu_times_s", None)
    row["tokens_per_s"] = tokens / median(times)
    return row


def time_ratios(rows: dict, num: str, den: str) -> dict:
    """Median wall and CPU time of ``rows[num]`` over ``rows[den]`` (> 1: ``num`` is slower)."""
    a, b = rows[num], rows[den]
    return {"ratio": a["median_s"] / b["median_s"], "cpu_ratio": a["cpu_median_s"] / b["cpu_median_s"]}


def free() -> None:
    """Collect the models a section built before the next one allocates its own."""
    gc.collect()


def build_model(cfg: ModelConfig, seed: int = 0):
    from ..model.llama import CausalLM

    torch.manual_seed(seed)
    return CausalLM(cfg).train()


def build_optimizer(model: torch.nn.Module) -> torch.optim.Optimizer:
    """The training loop's AdamW (parameter groups by name, default hyperparameters)."""
    from ..run_config import OptimConfig
    from ..train.optim import build_optimizer as _build

    return _build(model, OptimConfig(), device_type="cpu")


class TrainStep:
    """Callable: one forward + backward + optimizer step on the next batch (cycling through ``batches``);
    ``logits_fn(model, x) -> logits`` lets a foreign model (transformers' Llama) take the same step and loss."""

    def __init__(self, model, batches, logits_fn: Optional[Callable] = None):
        self.model, self.batches, self.logits_fn = model, batches, logits_fn
        self.optimizer = build_optimizer(model)
        self.i = 0
        self.last_loss = float("nan")

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The step's scalar loss on (x, y); subclasses change how it is computed, not the step."""
        if self.logits_fn is None:
            return self.model(x, labels=y, return_logits=False)[1]  # the chunked head, as training runs it
        logits = self.logits_fn(self.model, x)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.reshape(-1))

    def __call__(self) -> None:
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        loss = self.loss(x, y)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.last_loss = float(loss.detach())
