"""``generator``: generator forward + backward per distinct id, fast path vs the literal formula
(``leviathan.model.reference``) at paper defaults, and their largest disagreement (output and every
gradient, checked before timing)."""

from __future__ import annotations

from typing import Callable

import torch

from ..configs import CONFIGS, BenchOptions
from ..data import TokenData
from ..harness import alternate, free, median, stats


def paper_generator(hidden_size: int = 512, seed: int = 0):
    """A LeviathanGenerator at paper defaults (o200k, d_s=128, M=8, kappa=32, r=64)."""
    from ...model.generator import LeviathanGenerator

    torch.manual_seed(seed)
    return LeviathanGenerator(200_019, hidden_size, k=3, seed_dim=128, modes=8, knots=32, rank=64)


def _fwd_bwd(generator, fn, ids: torch.Tensor, grad: torch.Tensor) -> Callable[[], torch.Tensor]:
    def run() -> torch.Tensor:
        generator.zero_grad(set_to_none=True)
        y = fn(generator, ids)
        y.backward(grad)
        return y

    return run


def _scaled_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    actual, expected = actual.detach().double(), expected.detach().double()
    return float((actual - expected).abs().max() / expected.abs().max().clamp_min(1e-300))


def bench_generator(ids: torch.Tensor, repeats: int, warmup: int = 1) -> dict:
    """Forward + backward per distinct id, fast path vs the literal formula, on the given distinct ids."""
    from ...model.reference import reference_from_module

    g = paper_generator()
    ids = ids.unique()
    U = ids.numel()
    grad = torch.randn(U, g.hidden_size, generator=torch.Generator().manual_seed(0))
    fast = _fwd_bwd(g, lambda m, i: m(i), ids, grad)
    ref = _fwd_bwd(g, reference_from_module, ids, grad)

    # exactness first: same output and every gradient as the formula
    y_fast = fast().detach()
    grads_fast = {n: p.grad.clone() for n, p in g.named_parameters()}
    y_ref = ref().detach()
    errors = {"output": _scaled_error(y_fast, y_ref)}
    errors.update({f"grad {n}": _scaled_error(grads_fast[n], p.grad) for n, p in g.named_parameters()})

    cpu: dict[str, list[float]] = {}
    times = alternate({"fast": fast, "reference": ref}, repeats, warmup=max(0, warmup - 1), cpu_times=cpu)
    rows = {name: {**stats(t, cpu[name]), "us_per_id": median(t) / U * 1e6} for name, t in times.items()}
    out = {"distinct_ids": U, "repeats": repeats, "models": rows, "max_scaled_error": errors,
           "speedup": rows["reference"]["median_s"] / rows["fast"]["median_s"],
           "cpu_speedup": rows["reference"]["cpu_median_s"] / rows["fast"]["cpu_median_s"]}
    free()
    return out


def paper_batch(data: dict[str, TokenData]) -> torch.Tensor:
    """One batch of the paper configuration's ids (o200k), the input of the generator and memory sections."""
    bc = CONFIGS["paper"]
    return data["paper"].batches(bc.batch_size, bc.seq_len, count=1)[0][0]


def run(opts: BenchOptions, data: dict[str, TokenData], log: Callable[[str], None]) -> dict:
    ids = paper_batch(data).unique()
    if opts.quick:
        ids = ids[:64]
    reps = opts.repeats_for(5, 2)
    log(f"[generator] fast vs literal formula on {ids.numel()} distinct ids, {reps} repeats ...")
    return bench_generator(ids, reps, opts.warmup)
