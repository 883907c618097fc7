"""``leviathan eval``: loss, perplexity and bits per byte of a checkpoint.

    leviathan eval runs/tiny                         # the run's validation split (its data.path)
    leviathan eval runs/tiny --data data/other --split val --max-tokens 100000
    leviathan eval runs/tiny/checkpoints/step-00000500 --text notes.txt   # raw text, the checkpoint's tokenizer

CHECKPOINT is a run folder (its latest complete step) or a step folder; the tokens and their byte count come from
``leviathan.eval.stream.EvalStream``. A model trained with a restricted softmax (``data.softmax: corpus``) cannot
predict ids outside its set: those targets are left out and a ``note:`` says how many (no bits per byte, which
would divide the nats of some targets by the bytes of all); text none of whose targets it can predict is an error.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

from ..errors import UserError
from ..eval.result import EvalResult
from .values import device, positive_int


def add_arguments(parser) -> None:
    parser.add_argument("checkpoint", help="run folder or checkpoints/step-XXXXXXXX folder")
    parser.add_argument("--data", default=None, help="prepared data folder (default: the one the run trained on)")
    parser.add_argument("--split", default=None, help="split of the prepared data (default val)")
    parser.add_argument("--text", default=None, help="evaluate a raw UTF-8 text file instead of a prepared split")
    parser.add_argument("--seq-len", type=positive_int, default=None, help="window length (default: the run's data.seq_len)")
    parser.add_argument("--batch-size", type=positive_int, default=8, help="windows per forward")
    parser.add_argument("--max-tokens", type=positive_int, default=None, help="evaluate only the first N tokens")
    parser.add_argument("--device", type=device, default="auto", help="auto | cpu | cuda | cuda:N")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _score(model, stream, seq_len: int, batch_size: int, dtype) -> EvalResult:
    """``perplexity.summarize`` of the targets the model can predict; a note names those it cannot (see above)."""
    import sys

    import numpy as np

    from ..eval.perplexity import summarize, token_losses

    nats = token_losses(model, stream.tokens, seq_len, batch_size, dtype=dtype, outside="nan")
    inside = ~np.isnan(nats)
    if inside.all():
        return summarize(float(nats.sum()), len(nats), stream.num_bytes)
    kept, left = int(inside.sum()), int((~inside).sum())
    ids = f"{model.output_ids.numel():,} of {model.config.vocab_size:,} ids"
    if not kept:
        raise UserError(f"none of the {left:,} targets of {stream.source} is among the {ids} this model predicts "
                        f"(trained with data.softmax=corpus): evaluate text of the data it was trained on, or a model "
                        f"trained with data.softmax=full")
    print(f"note: {left:,} of {len(nats):,} targets ({left / len(nats):.1%}) of {stream.source} are outside the {ids} "
          f"this model predicts (data.softmax=corpus) and are left out: the loss is over the other {kept:,}, and "
          f"bits per byte is not reported", file=sys.stderr)
    return replace(summarize(float(nats[inside].sum()), kept, None), targets_outside=left,
                   share_outside=left / len(nats))


def _scored(model, stream, seq_len: int, batch_size: int, device):
    """``_score`` after ``memory_preflight``'s check of its largest forward (on the CPU; a GPU's bf16 forward is the
    device's), and an out-of-memory forward said in one line naming the batch and the smaller --batch-size: both were
    the allocator's traceback, exit 1, the fix unsaid (issue 30 round 27, R11: --batch-size 1300 --seq-len 128 of a
    width-1,024 model under `ulimit -v 6000000`)."""
    import torch

    from ..eval.perplexity import window_batches
    from ..memory_preflight import allocator_words, check_eval_memory, out_of_memory

    rows, length = max(((len(starts), n) for starts, n in window_batches(len(stream.tokens) - 1, seq_len, batch_size)),
                       key=lambda b: b[0] * b[1])
    batch = f"--batch-size {batch_size}: a forward of {rows} windows of {length} tokens"
    fix = f"a smaller --batch-size (e.g. --batch-size {max(1, rows // 2)})"
    if device.type == "cpu":
        check_eval_memory(model, rows * length, batch, fix, device)
    try:
        return _score(model, stream, seq_len, batch_size, torch.bfloat16 if device.type == "cuda" else None)
    except (RuntimeError, MemoryError) as e:
        if not out_of_memory(e):
            raise
        said = allocator_words(e)
    raise UserError(f"{batch} ran out of memory ({said}); nothing was scored; use {fix}, or free memory")


def _refuse_changed_data(step: Path, data_dir: str) -> None:
    """UserError when the run's own data folder (the default, no --data) now holds other data than the step trained
    on: it was prepared again from another corpus under the same name, and eval scored that corpus as the run's
    validation split, exit 0 (issue 30 round 15, A123). Given as --data, any data is evaluated as asked."""
    from ..checkpoint.state import read_step_state
    from ..train.data_identity import data_changed

    if (changed := data_changed(read_step_state(step).raw, data_dir, step)) is not None:  # K9
        raise UserError(f"{changed}: it is not the run's validation data any more; to score it anyway, name it "
                        f"with --data {data_dir}")


def _check_window_fits(data_dir, split: str, tokens: int, seq_len: int, args) -> None:
    """UserError for a split shorter than one evaluation window (``seq_len`` + 1 tokens), the floor train and sweep
    hold a val split to (round 28, T13): ``eval --data`` of such a folder printed a loss "on 79 tokens", exit 0
    (issue 30 round 29, V23). ``tokens``: those read. A split with nothing to score (fewer than 2 tokens) keeps
    the stream's own line, whose fix names --split train too."""
    from ..eval.stream import short_split_problem

    if 2 <= tokens < seq_len + 1:  # a --max-tokens under one window is refused before (short_cap_problem)
        setting = "--seq-len" if args.seq_len is not None else "--seq-len (default the run's data.seq_len)"
        what = f"--data {str(data_dir)!r}" if args.data is not None else f"the run's data.path {str(data_dir)!r}"
        raise UserError(short_split_problem(what, split, tokens, seq_len, setting))


def run(args) -> int:
    if args.text is not None and (args.data is not None or args.split is not None):  # --data was ignored (B242)
        # what was typed, not what differs from the default: `--split val` beside --text was taken (round 25, X84)
        raise UserError("--text scores a text file, --data / --split a prepared split: give one of the two")
    split = "val" if args.split is None else args.split

    from ..eval.stream import EvalStream, run_seq_len
    from ..eval.window_floor import short_cap_problem
    from .. import checkpoint as ckpt
    from ..data.meta import data_folder_problem
    from ..run_config import data_meta
    from ..train.distributed import resolve_device

    device = resolve_device(args.device, "--device ")  # the fix names the option (round 26, P33)
    model, cfg = ckpt.load_model(args.checkpoint, device=device)
    seq_len = run_seq_len(cfg, args.seq_len)
    short = short_cap_problem("--max-tokens", args.max_tokens, seq_len,
                              "--seq-len" if args.seq_len is not None else "the run's data.seq_len")
    if short is not None:  # 10 tokens of a 64-token window: a loss of 9 targets, no word (round 29, W692)
        raise UserError(short)
    if args.text is not None:
        stream = EvalStream.from_text(args.text, ckpt.load_tokenizer(args.checkpoint), args.max_tokens)
    else:
        data_dir = args.data or cfg.data.path
        meta = data_meta(data_dir)
        if meta is None:
            how = data_folder_problem(data_dir, "pass a folder `leviathan prepare` wrote as --data")  # AD36's kind
            raise UserError(f"{data_dir!r} {how} (or score a text file with --text FILE)")
        if split not in meta.splits:
            raise UserError(f"split {split!r} not in {data_dir!r}; available: {', '.join(meta.splits)}")
        ckpt.check_tokenizer(ckpt.find_checkpoint(args.checkpoint), data_dir, "evaluate")
        if args.data is None:
            _refuse_changed_data(ckpt.find_checkpoint(args.checkpoint), data_dir)
        stream = EvalStream.from_split(data_dir, split, args.max_tokens)
        _check_window_fits(data_dir, split, len(stream.tokens), seq_len, args)
    stream.check_fits(model.config.vocab_size)
    result = _scored(model, stream, seq_len, args.batch_size, device)
    checkpoint = str(ckpt.find_checkpoint(args.checkpoint))
    if args.json:
        numbers = result.to_dict()
        if not result.restricted:  # the full softmax: no keys for the targets left out
            del numbers["targets_outside"], numbers["share_outside"]
        # a perplexity past float range (a diverged model) printed `Infinity`, which is not JSON (RFC 8259) and which
        # JSON.parse refuses: null, as results rows write it (issue 30 round 14, B346)
        numbers = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in numbers.items()}
        print(json.dumps({"source": stream.source, "checkpoint": checkpoint, "seq_len": seq_len, **numbers}, indent=2,
                         allow_nan=False))
    else:
        bpb = f"{result.bpb:.4f}" if result.bpb is not None else "n/a"
        print(f"{stream.source}: loss {result.loss:.4f} | ppl {result.ppl:.2f} | bpb {bpb} | "
              f"{result.tokens:,} tokens ({checkpoint})")
    return 0
