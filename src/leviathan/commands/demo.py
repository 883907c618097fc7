"""``leviathan demo``: dense-tied vs leviathan, side by side, on a fresh machine, in a few minutes.

    leviathan demo                         # prepares the corpus on first use, trains both, prints the table
    leviathan demo --run-dir runs/demo --steps 300

What it does:
1. Data: the Python standard library's own source (``leviathan.data.sources`` ``stdlib``: no
   download) with a byte-level BPE of 4,096 ids trained on it, 3% of the documents held out for
   validation. Prepared once into ``~/.cache/leviathan/data/stdlib-bpe4096`` (``$LEVIATHAN_CACHE``
   or ``--data-dir`` move it) and reused (about 15 s the first time).
2. Two models with the same backbone (the ``cpu-small`` preset: width 128, 4 layers, 4 heads):
   ``dense_tied`` (one 4,096 x 128 table, also the head) and ``leviathan`` (the generator for input,
   an untied head): the iso-body comparison of SPEC section 3. Both train from the same seed on the
   same tokens in the same order (same loader seed), with the same AdamW settings and schedule.
3. Both are evaluated on the whole held-out split; the table gives parameters by group (input,
   body, head, total), validation loss, perplexity and bits per byte, training tokens per second
   and wall time. It is printed and written to ``<run-dir>/demo.json`` and ``demo.md``; each model's
   run folder (checkpoints, metrics.jsonl, TensorBoard) is ``<run-dir>/<variant>``.

Sizes: 200 steps x 4,096 tokens (sequences of 256) per model = 819,200 tokens each. On 2 idle CPU
cores (fp32, 2 threads) dense_tied trains at about 9-10k tokens/s and leviathan at about 8-9k, so
the whole demo takes about 3-4 minutes, 5-15 s of it preparing the corpus the first time. On a busy
machine (load average above cores - 1) it trains with one thread, which is then faster, and takes
longer (the table reports the measured throughput). ``--steps`` scales it. This is
a smoke-scale comparison: at under a million tokens the ranking can go either way; the paper's
gains are measured over billions of tokens (``leviathan sweep`` runs proper grids).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

VARIANTS = ("dense_tied", "leviathan")
BPE_VOCAB = 4096


def default_data_dir() -> Path:
    cache = os.environ.get("LEVIATHAN_CACHE")
    root = Path(cache).expanduser() if cache else Path.home() / ".cache" / "leviathan"
    return root / "data" / f"stdlib-bpe{BPE_VOCAB}"


def add_arguments(parser) -> None:
    parser.add_argument("--run-dir", default="runs/demo", help="output folder (default runs/demo); replaced if it holds an earlier demo")
    parser.add_argument("--data-dir", default=None,
                        help=f"prepared data folder; created from the stdlib corpus if missing "
                             f"(default {default_data_dir()})")
    parser.add_argument("--steps", type=int, default=200, help="optimizer steps per model (default 200)")
    parser.add_argument("--preset", default="cpu-small", help="backbone preset for both models (default cpu-small)")
    parser.add_argument("--seq-len", type=int, default=256, help="training sequence length (default 256)")
    parser.add_argument("--batch-tokens", type=int, default=4096, help="tokens per optimizer step (default 4096)")
    parser.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (default 2e-3)")
    parser.add_argument("--eval-tokens", type=int, default=None, help="validation tokens (default: the whole split)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated embedding variants")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's choice, or 1 when the machine is already busy)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def _prepare_data(data_dir: Path, explicit: bool, quiet: bool) -> dict:
    """The demo corpus: an explicit ``--data-dir`` that is already prepared is used as it is; the cache
    is (re)built from the stdlib when missing or out of date (another Python, other settings)."""
    from ..data.prepare import prepare
    from ..errors import UserError
    from ..train.config import data_meta

    meta = data_meta(data_dir)
    if explicit and meta is not None:
        return meta
    if meta is None:
        print(f"preparing the demo corpus (Python stdlib, BPE {BPE_VOCAB}) into {data_dir} ...", file=sys.stderr)
    kwargs = dict(tokenizer=f"bpe:{BPE_VOCAB}", val_fraction=0.03, progress=not quiet,
                  log=(lambda m: None) if quiet else None)
    try:
        return prepare("stdlib", data_dir, **kwargs)  # returns at once when the cache is up to date
    except UserError:
        if explicit:
            raise
        print(f"the cached demo corpus in {data_dir} is out of date; rebuilding it", file=sys.stderr)
        return prepare("stdlib", data_dir, overwrite=True, **kwargs)


def run_config(args, data_dir: Path, embedding: str):
    from ..presets import preset_dict
    from ..train.config import build_run_config

    micro = max(1, min(16, args.batch_tokens // args.seq_len))
    model = {"preset": args.preset, "embedding": embedding}
    if args.seq_len > preset_dict(args.preset).get("max_position_embeddings", 512):
        model["max_position_embeddings"] = args.seq_len
    raw = {
        "model": model,
        "data": {"path": str(data_dir), "seq_len": args.seq_len, "shuffle": "windows"},
        "optim": {"lr": args.lr, "betas": [0.9, 0.95], "weight_decay": 0.1, "grad_clip": 1.0},
        "schedule": {"warmup_steps": max(1, args.steps // 10), "min_lr_ratio": 0.1},
        "batch_tokens": args.batch_tokens,
        "micro_batch_size": micro,
        "max_steps": args.steps,
        "log_interval": max(1, args.steps // 20),
        "eval_interval": 0,  # evaluate once, at the end, on the held-out split
        "eval_tokens": args.eval_tokens,
        "eval_batch_size": 16,
        "checkpoint_interval": 0,
        "keep_last": 1,
        "seed": 1337,
        "device": "cpu",
        "dtype": "float32",
    }
    return build_run_config(raw)


def format_table(rows: list[dict]) -> str:
    header = ["model", "input", "body", "head", "total", "val loss", "val ppl", "val bpb", "tok/s", "wall s"]
    lines = []
    for r in rows:
        p = r["params"]
        lines.append([r["variant"], f"{p['input']:,}", f"{p['body']:,}", "tied" if p["tied"] else f"{p['head']:,}",
                      f"{p['total']:,}", f"{r['val_loss']:.4f}", f"{r['val_ppl']:.2f}",
                      f"{r['val_bpb']:.4f}" if r["val_bpb"] is not None else "n/a",
                      f"{r['tokens_per_s']:,.0f}", f"{r['wall_time_s']:.1f}"])
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *map(fmt, lines)])


def format_markdown(rows: list[dict], info: dict) -> str:
    out = ["# leviathan demo: dense_tied vs leviathan (iso-body)", "",
           f"Data: {info['data_dir']} ({info['train_tokens']:,} train / {info['val_tokens']:,} validation tokens, "
           f"tokenizer {info['tokenizer']}). Each model: {info['steps']} steps x {info['batch_tokens']:,} tokens "
           f"= {info['steps'] * info['batch_tokens']:,} tokens, sequence {info['seq_len']}, preset {info['preset']}.", "",
           "| model | input | body | head | total | val loss | val ppl | val bpb | tok/s | wall s |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p = r["params"]
        bpb = f"{r['val_bpb']:.4f}" if r["val_bpb"] is not None else "n/a"
        head = "tied" if p["tied"] else f"{p['head']:,}"
        out.append(f"| {r['variant']} | {p['input']:,} | {p['body']:,} | {head} | "
                   f"{p['total']:,} | {r['val_loss']:.4f} | {r['val_ppl']:.2f} | {bpb} | {r['tokens_per_s']:,.0f} | "
                   f"{r['wall_time_s']:.1f} |")
    comparison = compare(rows)
    if comparison:
        out += ["", comparison]
    return "\n".join(out) + "\n"


def compare(rows: list[dict]) -> str | None:
    by = {r["variant"]: r for r in rows}
    if "dense_tied" not in by or "leviathan" not in by:
        return None
    d, lev = by["dense_tied"], by["leviathan"]
    ppl = 100 * (lev["val_ppl"] / d["val_ppl"] - 1)
    speed = 100 * (lev["tokens_per_s"] / d["tokens_per_s"] - 1)
    params = 100 * (lev["params"]["total"] / d["params"]["total"] - 1)
    return (f"leviathan vs dense_tied: validation perplexity {ppl:+.1f}%, training throughput {speed:+.1f}%, "
            f"total parameters {params:+.1f}% (same body; the untied head is the difference)")


def _busy() -> bool:
    try:
        return os.getloadavg()[0] > max(1, (os.cpu_count() or 1) - 1)
    except OSError:  # not available on this platform
        return False


def run(args) -> int:
    import torch

    from ..errors import UserError
    from ..train.loop import train

    if args.steps < 1 or args.batch_tokens < args.seq_len:
        raise UserError("--steps must be >= 1 and --batch-tokens at least --seq-len")
    variants = [v for v in args.variants.split(",") if v]
    if args.threads:
        torch.set_num_threads(args.threads)
    elif _busy():
        # OpenMP regions stall whenever another process holds one of their cores: on a busy 2-core
        # machine one thread was measured 2-4x faster than two
        torch.set_num_threads(1)
        print(f"the machine is busy (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores): "
              f"training with 1 thread (override with --threads)", file=sys.stderr)
    t0 = time.time()
    run_dir = Path(args.run_dir)
    data_dir = Path(args.data_dir).expanduser() if args.data_dir else default_data_dir()
    meta = _prepare_data(data_dir, args.data_dir is not None, args.quiet)
    prep_s = time.time() - t0
    if run_dir.exists():
        if not (run_dir / "demo.json").exists() and any(run_dir.iterdir()):
            raise UserError(f"{run_dir} exists and is not an earlier demo run; pass another --run-dir")
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    rows = []
    for variant in variants:
        cfg = run_config(args, data_dir, variant)
        print(f"training {variant} ({cfg.max_steps} steps x {cfg.batch_tokens:,} tokens) ...", file=sys.stderr)
        t = time.time()
        summary = train(cfg, run_dir / variant, quiet=args.quiet)
        rows.append({"variant": variant, "params": summary["params"], "val_loss": summary["final_val_loss"],
                     "val_ppl": summary["final_val_ppl"], "val_bpb": summary["final_val_bpb"],
                     "tokens_per_s": summary["tokens_per_s"], "train_time_s": summary["train_time_s"],
                     "wall_time_s": time.time() - t, "tokens": summary["tokens"], "run_dir": summary["run_dir"]})
    info = {"data_dir": str(data_dir), "tokenizer": meta.get("tokenizer"),
            "train_tokens": meta["splits"]["train"]["tokens"], "val_tokens": meta["splits"]["val"]["tokens"],
            "steps": args.steps, "batch_tokens": args.batch_tokens, "seq_len": args.seq_len, "preset": args.preset,
            "threads": torch.get_num_threads(), "prepare_s": prep_s, "total_wall_s": time.time() - t0}
    table = format_table(rows)
    (run_dir / "demo.json").write_text(json.dumps({"info": info, "rows": rows}, indent=2) + "\n")
    (run_dir / "demo.md").write_text(format_markdown(rows, info))
    print()
    print(table)
    comparison = compare(rows)
    if comparison:
        print(comparison)
    print(f"\ntotal wall time {info['total_wall_s']:.0f} s (data {prep_s:.0f} s); "
          f"details in {run_dir / 'demo.md'} and {run_dir / 'demo.json'}")
    return 0
