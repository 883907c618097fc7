"""``leviathan lm-eval``: downstream benchmarks through lm-evaluation-harness, offline, on our weights.

    leviathan lm-eval runs/cpu/runs/m-leviathan-s0 --data-root ../shared/data            # all six
    leviathan lm-eval RUN --tasks lambada_openai,arc_easy --limit 500 --out results/lev-m
    leviathan lm-eval RUN --threads 1 --out results/lev-m &    # two evaluations at once on a 2-core machine
    LEVIATHAN_DATA=../shared/data leviathan lm-eval path/to/exported-hf-dir --tasks paper

SOURCE is a run dir (latest checkpoint), a checkpoint step dir, or an exported HF directory; how it is exported,
checked and evaluated is ``leviathan.eval.harness``. Tasks: paper (= lambada_openai, hellaswag, piqa, arc_easy,
arc_challenge, winogrande) or any of them, comma-separated. Requests longer than the model's positions are cut to
fit, and the summary lists per task how many were (also in ``--json`` and ``lm_eval.json``): partially scored
answers bias multiple-choice accuracy, so read the numbers with those counts.
"""

from __future__ import annotations

import json

from ..eval.harness import DTYPES
from .values import (data_root_folder, harness_device, non_negative_int, positive_float, positive_int,
                     thread_count)


def add_arguments(parser) -> None:
    parser.add_argument("source", help="run dir, checkpoint step dir, or exported HF directory")
    parser.add_argument("--tasks", default="paper", help="paper, or comma-separated task names")
    parser.add_argument("--data-root", default=None, type=data_root_folder,
                        help="folder with the task files (default: $LEVIATHAN_DATA)")
    parser.add_argument("--limit", type=positive_float, default=None, help="examples per task (a fraction if < 1)")
    parser.add_argument("--batch-size", type=_batch_size, default=8, help="lm-eval batch size (or 'auto')")
    parser.add_argument("--device", type=harness_device, default="cpu", help="cpu, cuda, cuda:N")
    # a name torch lacks ended in an AttributeError traceback, and int8 blamed the model folder (issue 30 round 14,
    # B135, B136): the floating-point dtypes transformers loads a model in
    parser.add_argument("--dtype", default="float32", choices=DTYPES,
                        help="dtype the exported model is loaded in")
    parser.add_argument("--num-fewshot", type=non_negative_int, default=None, help="few-shot examples (default: 0)")
    parser.add_argument("--out", default=None, help="write lm_eval.json (summary + lm-eval results) here")
    parser.add_argument("--keep-export", action="store_true",
                        help="keep the exported HF directory in OUT/hf (a run or a checkpoint; an HF folder is "
                        "evaluated as it is, and is refused with it)")
    parser.add_argument("--no-verify", action="store_true", help="skip the export parity check (not advised)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--threads", type=thread_count, default=None,
                        help="torch intra-op threads (default: torch's; 1 per process on a small shared CPU)")


def _batch_size(text: str) -> int | str:
    """``auto`` or a positive integer (argparse refuses anything else with the valid values, ``auto`` among them:
    'AUTO' was "expected a positive integer", issue 30 round 15, B215)."""
    import argparse

    if text == "auto":
        return "auto"
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or auto (in lower case), got {text!r}") from None


def run(args) -> int:
    from ..devices import unavailable_line
    from ..errors import UserError
    from ..eval.harness import evaluate, format_summary
    from ..stop_signals import final_output

    if (absent := unavailable_line(args.device, "--device ", auto=False)) is not None:  # not the API's "device"
        raise UserError(absent)  # ... "use cpu" (round 26, P33's kind)
    final_output(args.out)  # None without --out: nothing is written, a stop then says to run it again

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    limit = args.limit
    if limit is not None and limit >= 1 and float(limit).is_integer():
        limit = int(limit)  # lm-eval slices by an integer count; 2.5 is refused by the harness's check
    batch = args.batch_size
    out = evaluate(args.source, args.tasks, data=args.data_root, out_dir=args.out, keep_export=args.keep_export,
                   limit=limit, batch_size=batch, device=args.device, dtype=args.dtype,
                   num_fewshot=args.num_fewshot, verify=not args.no_verify)
    if args.json:
        print(json.dumps({"source": out["source"], "tasks": out["tasks"], "verify": out["verify"],
                          "limit": out["limit"]}, indent=2))
    else:
        if out["verify"]:
            print(f"export verified: max |logit difference| {out['verify']['max_abs_logit_diff']:.2e} "
                  f"over {out['verify']['probe_tokens']} probe tokens")
        print(format_summary(out["tasks"]))
        if args.out:
            print(f"wrote {args.out}/lm_eval.json")
    return 0
