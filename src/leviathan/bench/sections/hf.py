"""``hf``: our dense_tied training step vs ``transformers.LlamaForCausalLM`` with the same weights, batch,
loss and AdamW (both take ``harness.TrainStep``)."""

from __future__ import annotations

from typing import Callable

import torch

from ..configs import CONFIGS, BenchConfig, BenchOptions
from ..data import TokenData
from ..harness import TrainStep, alternate, build_model, free, throughput_row, time_ratios


def hf_llama_like(model):
    """``transformers.LlamaForCausalLM`` with the config and weights of a dense CausalLM (SDPA attention)."""
    import transformers

    from ...hf.export import plain_llama_config

    hf_cfg = plain_llama_config(model.config, use_cache=False)
    hf_cfg._attn_implementation = "sdpa"
    hf = transformers.LlamaForCausalLM(hf_cfg)
    hf.load_state_dict(model.state_dict(), strict=True)
    return hf.train()


def _hf_logits(model, x: torch.Tensor) -> torch.Tensor:
    return model(input_ids=x, use_cache=False).logits


def bench_hf(bc: BenchConfig, batches, repeats: int, warmup: int = 1) -> dict:
    """Training step of our dense_tied model vs transformers' Llama: same weights, batch, loss and AdamW."""
    ours = build_model(bc.model("dense_tied"))
    hf = hf_llama_like(ours)
    x = batches[0][0]
    with torch.no_grad():
        diff = float((ours(x)[0] - _hf_logits(hf, x)).abs().max())
    steps = {"ours (dense_tied)": TrainStep(ours, batches), "transformers Llama": TrainStep(hf, batches, _hf_logits)}
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, repeats, warmup, cpu)
    tokens = x.numel()
    rows = {n: {**throughput_row(t, cpu[n], tokens), "final_loss": steps[n].last_loss} for n, t in times.items()}
    out = {"config": bc.name, "max_abs_logit_diff": diff, "repeats": repeats, "models": rows,
           **time_ratios(rows, "ours (dense_tied)", "transformers Llama")}
    del ours, hf, steps
    free()
    return out


def run(opts: BenchOptions, data: dict[str, TokenData], log: Callable[[str], None]) -> dict:
    out = {}
    for name in opts.configs:
        bc = CONFIGS[name]
        reps = opts.repeats_for(7 if name != "paper" else 3, 2 if name != "paper" else 1)
        batches = data[name].batches(bc.batch_size, bc.seq_len, count=4)
        log(f"[hf] {name}: our dense_tied vs transformers.LlamaForCausalLM, {reps} repeats ...")
        out[name] = bench_hf(bc, batches, reps, opts.warmup)
    return out
