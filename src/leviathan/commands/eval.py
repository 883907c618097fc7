"""``leviathan eval``: loss, perplexity and bits per byte of a checkpoint.

    leviathan eval runs/tiny                         # the run's validation split (its data.path)
    leviathan eval runs/tiny --data data/other --split val --max-tokens 100000
    leviathan eval runs/tiny/checkpoints/step-00000500 --text notes.txt   # raw text, the checkpoint's tokenizer

CHECKPOINT is a run folder (its latest complete step) or a step folder. Bits per byte use the
split's byte count from meta.json (scaled by the fraction evaluated when --max-tokens cuts it) or
the UTF-8 size of the text file.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UserError
from . import positive_int


def add_arguments(parser) -> None:
    parser.add_argument("checkpoint", help="run folder or checkpoints/step-XXXXXXXX folder")
    parser.add_argument("--data", default=None, help="prepared data folder (default: the one the run trained on)")
    parser.add_argument("--split", default="val", help="split of the prepared data (default val)")
    parser.add_argument("--text", default=None, help="evaluate a raw UTF-8 text file instead of a prepared split")
    parser.add_argument("--seq-len", type=positive_int, default=None, help="window length (default: the run's data.seq_len)")
    parser.add_argument("--batch-size", type=positive_int, default=8, help="windows per forward")
    parser.add_argument("--max-tokens", type=positive_int, default=None, help="evaluate only the first N tokens")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    import numpy as np
    import torch

    from ..eval.perplexity import evaluate
    from ..train import checkpoint as ckpt
    from ..train.distributed import resolve_device

    device = resolve_device(args.device)
    model, cfg = ckpt.load_model(args.checkpoint, device=device)
    seq_len = args.seq_len or cfg.data.seq_len
    if seq_len > model.config.max_position_embeddings:
        raise UserError(f"--seq-len {seq_len} exceeds the model's max_position_embeddings "
                        f"({model.config.max_position_embeddings}); pass a smaller --seq-len")
    if args.text is not None:
        path = Path(args.text)
        if not path.is_file():
            raise UserError(f"text file {str(path)!r} does not exist")
        from ..data.prepare import prepare_eval_text

        tokens, num_bytes = prepare_eval_text(str(path), ckpt.load_tokenizer(args.checkpoint))
        source, total_tokens = str(path), len(tokens)
    else:
        from ..data.loader import TokenDataset
        from ..train.config import data_meta

        data_dir = args.data or cfg.data.path
        meta = data_meta(data_dir)
        if meta is None:
            raise UserError(f"{data_dir!r} is not a prepared data folder (no meta.json); pass --data or --text")
        if args.split not in meta.get("splits", {}):
            raise UserError(f"split {args.split!r} not in {data_dir!r}; available: {', '.join(meta.get('splits', {}))}")
        ckpt.check_tokenizer(ckpt.find_checkpoint(args.checkpoint), data_dir, "evaluate")
        tokens = TokenDataset(data_dir, args.split).tokens
        num_bytes = meta["splits"][args.split].get("bytes")
        total_tokens = len(tokens)
        source = f"{data_dir}:{args.split}"
    if args.max_tokens is not None and args.max_tokens + 1 < len(tokens):
        tokens = tokens[: args.max_tokens + 1]
        if num_bytes:
            num_bytes = max(1, round(num_bytes * len(tokens) / total_tokens))
    if len(tokens) < 2:
        raise UserError(f"{source} has fewer than 2 tokens; nothing to evaluate")
    if int(np.max(tokens)) >= model.config.vocab_size:
        raise UserError(f"{source} holds token ids up to {int(np.max(tokens))}, beyond the model's vocabulary "
                        f"({model.config.vocab_size}); was it tokenized with another tokenizer?")
    dtype = torch.bfloat16 if device.type == "cuda" else None
    result = evaluate(model, tokens, seq_len, args.batch_size, num_bytes=num_bytes, dtype=dtype)
    result = {"source": source, "checkpoint": str(ckpt.find_checkpoint(args.checkpoint)), "seq_len": seq_len, **result}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        bpb = f"{result['bpb']:.4f}" if result["bpb"] is not None else "n/a"
        print(f"{source}: loss {result['loss']:.4f} | ppl {result['ppl']:.2f} | bpb {bpb} | "
              f"{result['tokens']:,} tokens ({result['checkpoint']})")
    return 0
