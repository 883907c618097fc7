"""What the corpus-restricted softmax (``data.softmax: corpus``) saves per training step, side by side.

    OMP_NUM_THREADS=1 python scripts/bench_corpus_softmax.py data/gutenberg-o200k --config o200k-d64

Builds dense_tied and leviathan of a benchmark configuration (``leviathan.bench.configs.CONFIGS``), each
twice from one seed: the full softmax and the softmax over ``corpus_ids(DATA)`` (the ids that occur in the
prepared data). The four training steps (chunked head, AdamW) run alternately on the same batches of the
data's training split (``harness.alternate``); the printed ratios of medians are the result, wall and CPU time.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from leviathan.bench.configs import CONFIGS
from leviathan.bench.harness import TrainStep, alternate, build_model, throughput_row, time_ratios
from leviathan.data.loader import TokenDataset, corpus_ids


def batches(data_dir: str, count: int, batch: int, seq_len: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``count`` (x, y) batches of ``batch`` consecutive windows from the start of the training split."""
    tokens = TokenDataset(data_dir, "train").tokens
    n = batch * (seq_len + 1)
    out = []
    for i in range(count):
        w = torch.from_numpy(np.asarray(tokens[i * n:(i + 1) * n], dtype=np.int64)).view(batch, seq_len + 1)
        out.append((w[:, :-1].contiguous(), w[:, 1:].contiguous()))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data", help="prepared data folder whose tokenizer matches the configuration")
    p.add_argument("--config", default="o200k-d64", choices=sorted(CONFIGS))
    p.add_argument("--batch", type=int, default=64, help="sequences per step (the ablations: 64 x 128)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=None, help="also write the rows and ratios here")
    args = p.parse_args()
    bc = CONFIGS[args.config]
    ids = torch.from_numpy(corpus_ids(args.data))
    data = batches(args.data, 2, args.batch, bc.seq_len)
    steps = {}
    for variant in ("dense_tied", "leviathan"):
        steps[f"{variant} full"] = TrainStep(build_model(bc.model(variant)), data)
        steps[f"{variant} corpus"] = TrainStep(build_model(bc.model(variant)).restrict_output_(ids), data)
    cpu: dict[str, list[float]] = {}
    times = alternate(steps, args.repeats, warmup=1, cpu_times=cpu)
    tokens = data[0][0].numel()
    rows = {name: throughput_row(t, cpu[name], tokens) for name, t in times.items()}
    vocab = bc.model("dense_tied").vocab_size
    print(f"{bc.description}; {tokens:,} tokens a step; softmax over {ids.numel():,} of {vocab:,} ids; "
          f"{args.repeats} alternating repeats, {torch.get_num_threads()} thread(s)")
    for name, r in rows.items():
        print(f"  {name:18s} median {r['median_s']:7.2f} s  cpu {r['cpu_median_s']:7.2f} s  {r['tokens_per_s']:8,.0f} tok/s")
    ratios = {v: time_ratios(rows, f"{v} full", f"{v} corpus") for v in ("dense_tied", "leviathan")}
    for v, r in ratios.items():
        print(f"  {v}: full / corpus step time {r['ratio']:.2f}x wall, {r['cpu_ratio']:.2f}x cpu")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": bc.name, "data": args.data, "ids": int(ids.numel()), "vocab_size": vocab,
                       "tokens_per_step": tokens, "rows": rows, "ratios": ratios}, f, indent=2)


if __name__ == "__main__":
    main()
