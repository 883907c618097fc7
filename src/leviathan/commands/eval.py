"""``leviathan eval``: loss, perplexity and bits per byte of a checkpoint.

    leviathan eval runs/tiny                         # the run's validation split (its data.path)
    leviathan eval runs/tiny --data data/other --split val --max-tokens 100000
    leviathan eval runs/tiny/checkpoints/step-00000500 --text notes.txt   # raw text, the checkpoint's tokenizer

CHECKPOINT is a run folder (its latest complete step) or a step folder. The tokens and their byte
count come from ``leviathan.eval.stream.EvalStream``: a split's byte count from meta.json (scaled by
the share evaluated when --max-tokens cuts it), or the UTF-8 size of the text file, which is tokenized
with the checkpoint's tokenizer.
"""

from __future__ import annotations

import json

from ..errors import UserError
from .values import positive_int


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
    import torch

    from ..eval.perplexity import evaluate
    from ..eval.stream import EvalStream, run_seq_len
    from .. import checkpoint as ckpt
    from ..run_config import data_meta
    from ..train.distributed import resolve_device

    device = resolve_device(args.device)
    model, cfg = ckpt.load_model(args.checkpoint, device=device)
    seq_len = run_seq_len(cfg, args.seq_len)
    if args.text is not None:
        stream = EvalStream.from_text(args.text, ckpt.load_tokenizer(args.checkpoint), args.max_tokens)
    else:
        data_dir = args.data or cfg.data.path
        meta = data_meta(data_dir)
        if meta is None:
            raise UserError(f"{data_dir!r} is not a prepared data folder (no meta.json); pass --data or --text")
        if args.split not in meta.get("splits", {}):
            raise UserError(f"split {args.split!r} not in {data_dir!r}; available: {', '.join(meta.get('splits', {}))}")
        ckpt.check_tokenizer(ckpt.find_checkpoint(args.checkpoint), data_dir, "evaluate")
        stream = EvalStream.from_split(data_dir, args.split, args.max_tokens)
    stream.check_fits(model.config.vocab_size)
    dtype = torch.bfloat16 if device.type == "cuda" else None
    result = evaluate(model, stream.tokens, seq_len, args.batch_size, num_bytes=stream.num_bytes, dtype=dtype)
    result = {"source": stream.source, "checkpoint": str(ckpt.find_checkpoint(args.checkpoint)), "seq_len": seq_len,
              **result}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        bpb = f"{result['bpb']:.4f}" if result["bpb"] is not None else "n/a"
        print(f"{stream.source}: loss {result['loss']:.4f} | ppl {result['ppl']:.2f} | bpb {bpb} | "
              f"{result['tokens']:,} tokens ({result['checkpoint']})")
    return 0
