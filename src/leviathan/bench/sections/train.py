"""``train``: the training step of leviathan vs dense_tied at iso-body, and the generator's share of it.

Both models take forward + backward + AdamW (the project's parameter groups) on the same real token
ids, alternated step by step; the generator alone (forward + backward on the same batch) is timed in
the same rotation.
"""

from __future__ import annotations

from typing import Callable

import torch

from ..configs import CONFIGS, BenchConfig, BenchOptions
from ..data import TokenData
from ..harness import TrainStep, alternate, build_model, free, throughput_row, time_ratios


class GeneratorStep:
    """Callable: the leviathan model's input side alone, forward + backward, on the next batch's ids."""

    def __init__(self, generator, batches):
        self.generator, self.batches, self.i = generator, batches, 0

    def __call__(self) -> None:
        x, _ = self.batches[self.i % len(self.batches)]
        self.i += 1
        e = self.generator(x)
        e.backward(torch.ones_like(e))
        self.generator.zero_grad(set_to_none=True)


def bench_training(bc: BenchConfig, batches, repeats: int, warmup: int = 1) -> dict:
    """leviathan vs dense_tied training step (and the generator's own share) on the same batches; refused in one line
    first when both models and a step's activations cannot fit this machine's memory (``memory_preflight``, the kind
    of issue 30 round 26, P20 and P52, in the scripts' own benchmarks)."""
    from ...memory_preflight import check_models_memory
    from ...model.accounting import count_model

    check_models_memory([bc.model(v) for v in ("dense_tied", "leviathan")], batches[0][0].numel(),
                        f"the benchmark configuration {bc.name!r}", "a smaller --config (cpu rather than paper)")
    models = {v: build_model(bc.model(v)) for v in ("dense_tied", "leviathan")}
    steps = {v: TrainStep(m, batches) for v, m in models.items()}
    steps["generator only"] = GeneratorStep(models["leviathan"].model.embed_tokens, batches)
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, repeats, warmup, cpu)
    tokens = batches[0][0].numel()
    rows = {}
    for name, t in times.items():
        row = throughput_row(t, cpu[name], tokens)
        if name in models:
            row["params"] = count_model(models[name]).as_dict()
            row["final_loss"] = steps[name].last_loss
        rows[name] = row
    dense = rows["dense_tied"]["median_s"]
    out = {
        "config": bc.name, "description": bc.description, "batch_size": bc.batch_size, "seq_len": bc.seq_len,
        "tokens_per_batch": tokens, "distinct_ids_per_batch": [int(x.unique().numel()) for x, _ in batches],
        "repeats": repeats, "warmup": warmup, "models": rows,
        **time_ratios(rows, "leviathan", "dense_tied"),
        "generator_share": rows["generator only"]["median_s"] / dense,
    }
    del models, steps
    free()
    return out


def run(opts: BenchOptions, data: dict[str, TokenData], log: Callable[[str], None]) -> dict:
    out = {}
    for name in opts.configs:
        bc = CONFIGS[name]
        reps = opts.repeats_for(7 if name != "paper" else 3, 2 if name != "paper" else 1)
        batches = data[name].batches(bc.batch_size, bc.seq_len, count=4)
        log(f"[train] {name}: {bc.description}; {reps} alternating repeats ...")
        out[name] = bench_training(bc, batches, reps, opts.warmup)
    return out
