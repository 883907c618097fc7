"""``width``: what a training step costs at each width of a width round, every arm side by side, and where it goes.

    leviathan bench --only width --config widths --threads 1 --repeats 3    # o200k-d32L6, -d64L6, -d128L6

The width round (results/o200k-width/PLAN.md) trains each arm at widths 32, 64 and 128, so its budget is set by how
the step's cost grows with the width. Every (configuration, arm) training step (forward + backward + AdamW, the
chunked head over the configuration's softmax ids) is alternated with the others in one process
(``harness.alternate``); each width's cost is reported against the reference configuration's (width 64 when it is
among them) per arm. Where the cost goes, from two more callables in the same rotation: ``head`` (the chunked
cross-entropy of the restricted head alone, forward + backward from fixed hidden states, its gradient scattered into
the (V, D) head as in training), ``generator`` (the generator alone on the batch's ids, ``train.GeneratorStep``) and
``rest`` (the leviathan step minus the two: body, optimizer, bookkeeping; a difference of medians, in wall and CPU
time, of which under load only the CPU one means anything).

Next to the measured ratios, the analytic ratio of forward FLOPs per token (``accounting.flops_per_token``, the
head over the scored ids, the generator per distinct id of the batch): a measured ratio well above it is
overhead that does not scale with the work (small-matrix dispatch, the optimizer's (V, D) passes), which is ours.

Footgun: the softmax's ids are the batch's targets filled up to ``softmax_ids`` with the lowest other ids, not
the prepared corpus's own set: the cost depends on how many ids are scored, not which, and the benchmark needs
no prepared data folder. Losses of these steps therefore mean nothing; only their times do.
"""

from __future__ import annotations

from typing import Callable

import torch

from ...errors import UserError
from ...model.accounting import count_config, flops_per_token
from ...model.loss import linear_cross_entropy
from ..configs import CONFIGS, BenchConfig, BenchOptions
from ..data import TokenData
from ..harness import TrainStep, alternate, build_model, free, throughput_row
from .train import GeneratorStep

ARMS = ("dense_untied", "leviathan", "dense_tied")  # the width round's arms, its primary pair first
PARTS = ("head", "generator")  # timed alone; ``rest`` = the leviathan step minus these


def softmax_ids(batches, count: int | None, vocab_size: int) -> torch.Tensor | None:
    """Sorted ids the head scores: every target of ``batches``, filled up to ``count`` with the lowest other ids
    (None: the full vocabulary). A count below the batches' distinct targets is an error."""
    if count is None:
        return None
    targets = torch.cat([y.flatten() for _, y in batches]).unique()
    if count < targets.numel() or count > vocab_size:
        raise UserError(f"softmax_ids {count:,} must lie between the batches' {targets.numel():,} distinct targets "
                        f"and the vocabulary ({vocab_size:,}); use more ids or smaller batches")
    mask = torch.ones(vocab_size, dtype=torch.bool)
    mask[targets] = False
    others = mask.nonzero().flatten()[:count - targets.numel()]
    return torch.cat([targets, others]).sort().values


class HeadStep:
    """Callable: the model's head alone, chunked cross-entropy forward + backward from fixed hidden states."""

    def __init__(self, model, batches):
        self.model, self.batches, self.i = model, batches, 0
        x, _ = batches[0]
        g = torch.Generator().manual_seed(0)
        self.hidden = torch.randn(*x.shape, model.config.hidden_size, generator=g).requires_grad_()  # (B, T, D)

    def __call__(self) -> None:
        _, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        head, targets = self.model._head_and_targets(y)  # (|ids|, D) slice of the head, positions in it
        linear_cross_entropy(self.hidden, head, targets).backward()
        self.model.zero_grad(set_to_none=True)
        self.hidden.grad = None


def _flops(bc: BenchConfig, batches) -> dict[str, float]:
    """Forward FLOPs per token of each arm and of the parts, the head over the scored ids."""
    tokens = batches[0][0].numel()
    distinct = sum(int(x.unique().numel()) for x, _ in batches) / len(batches)
    out = {}
    for arm in ARMS:
        f = flops_per_token(bc.model(arm), bc.seq_len)
        head = 2 * (bc.softmax_ids or bc.model(arm).vocab_size) * bc.model(arm).hidden_size
        generator = f.get("generator_per_distinct_id", 0.0) * distinct / tokens
        out[arm] = f["body"] + head + generator
        if arm == "leviathan":
            out.update(head=head, generator=generator, rest=f["body"])
    return out


def _rest(steps: dict, key: str) -> float:
    """The leviathan step minus its head and its generator, in the ``key`` median (wall or CPU seconds)."""
    return steps["leviathan"][key] - steps["head"][key] - steps["generator"][key]


def bench_widths(configs: list[BenchConfig], batches, repeats: int, warmup: int = 1,
                 reference: str | None = None) -> dict:
    """Every (configuration, arm) step and the parts, alternated; tokens/s, and ratios against ``reference``
    (default: the configuration of width 64, else the first)."""
    if len(configs) < 2:
        raise UserError(f"the width section compares several configurations, got {len(configs)}; use "
                        f"--config widths (o200k-d32L6, o200k-d64L6, o200k-d128L6) or list two or more")
    reference = reference or next((c.name for c in configs if c.model("leviathan").hidden_size == 64),
                                  configs[0].name)
    steps: dict[str, Callable] = {}
    for bc in configs:
        ids = softmax_ids(batches, bc.softmax_ids, bc.model("leviathan").vocab_size)
        for arm in ARMS:
            model = build_model(bc.model(arm)).restrict_output_(ids)
            steps[f"{bc.name}/{arm}"] = TrainStep(model, batches)
        lev = steps[f"{bc.name}/leviathan"].model
        steps[f"{bc.name}/head"] = HeadStep(lev, batches)
        steps[f"{bc.name}/generator"] = GeneratorStep(lev.model.embed_tokens, batches)
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, repeats, warmup, cpu)
    tokens = batches[0][0].numel()
    rows = {name: throughput_row(t, cpu[name], tokens) for name, t in times.items()}
    widths = {}
    for bc in configs:
        r = {k: rows[f"{bc.name}/{k}"] for k in ARMS + PARTS}
        widths[bc.name] = {
            "hidden_size": bc.model("leviathan").hidden_size, "description": bc.description,
            "body_params": count_config(bc.model("leviathan")).body, "softmax_ids": bc.softmax_ids,
            "steps": r, "rest_s": _rest(r, "median_s"), "rest_cpu_s": _rest(r, "cpu_median_s"),
            "flops_per_token": _flops(bc, batches)}
    ref = widths[reference]
    for name, w in widths.items():
        w["ratio"] = {k: w["steps"][k]["median_s"] / ref["steps"][k]["median_s"] for k in ARMS + PARTS}
        w["ratio"]["rest"] = w["rest_s"] / ref["rest_s"]
        w["cpu_ratio"] = {k: w["steps"][k]["cpu_median_s"] / ref["steps"][k]["cpu_median_s"] for k in ARMS + PARTS}
        w["cpu_ratio"]["rest"] = w["rest_cpu_s"] / ref["rest_cpu_s"]
        w["flop_ratio"] = {k: w["flops_per_token"][k] / ref["flops_per_token"][k] for k in w["flops_per_token"]}
    out = {"reference": reference, "tokens_per_batch": tokens, "repeats": repeats, "warmup": warmup,
           "distinct_ids_per_batch": [int(x.unique().numel()) for x, _ in batches], "widths": widths}
    del steps
    free()
    return out


def run(opts: BenchOptions, data: dict[str, TokenData], log: Callable[[str], None]) -> dict:
    configs = [CONFIGS[name] for name in opts.configs]
    tokenizers = {bc.tokenizer for bc in configs}
    if len(tokenizers) != 1:
        raise UserError(f"the width section compares configurations of one tokenizer, got {', '.join(tokenizers)}; "
                        f"use --config widths")
    first = configs[0]
    reps = opts.repeats_for(3, 1)
    batches = data[first.name].batches(first.batch_size, first.seq_len, count=2)
    log(f"[width] {', '.join(opts.configs)}: {len(ARMS)} arms + head + generator each, {reps} alternating repeats ...")
    return bench_widths(configs, batches, reps, opts.warmup)
