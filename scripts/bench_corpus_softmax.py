"""What the corpus-restricted softmax (``data.softmax: corpus``) saves per training step, side by side.

    OMP_NUM_THREADS=1 python scripts/bench_corpus_softmax.py data/gutenberg-o200k --config o200k-d64

Builds dense_tied and leviathan of a benchmark configuration (``leviathan.bench.configs.CONFIGS``), each
twice from one seed: the full softmax and the softmax over ``corpus_ids(DATA)`` (the ids that occur in the
prepared data). The four training steps (chunked head, AdamW) run alternately on the same batches of the
data's training split (``harness.alternate``); the printed ratios of medians are the result, wall and CPU time.

Held to the verbs' rules (issue 30 round 24, V40-V44, V123, V124): a refusal is one line ``error: ...``, exit 2, before
any timing: a data folder that is none or whose vocabulary is not the configuration's, --repeats or --batch below 1,
an option given twice, a --json path that holds a user's file or cannot be written (``leviathan.result_json``, the
rule of ``leviathan bench --json``).
"""

from __future__ import annotations

import _signal  # the built-in under ``signal``, loaded with the interpreter: the stops are held from the first line

HELD: list[int] = []  # stops that came while the script was importing torch (seconds): delivered once main() handles
# them; before, a SIGTERM 1 s or 3 s in ended it with exit 143 and no word (issue 30 round 25, X33; collect_results.py's
# way, round 15, B254)


def _hold(signum, _frame) -> None:
    HELD.append(signum)


if __name__ == "__main__":  # before every import
    for _number in (_signal.SIGINT, _signal.SIGTERM, getattr(_signal, "SIGHUP", _signal.SIGTERM)):
        if _signal.getsignal(_number) is not _signal.SIG_IGN:
            _signal.signal(_number, _hold)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from leviathan.bench.configs import CONFIGS, BenchConfig  # noqa: E402
from leviathan.bench.harness import TrainStep, alternate, build_model, throughput_row, time_ratios  # noqa: E402
from leviathan.commands.values import positive_int  # noqa: E402
from leviathan.data.loader import TokenDataset, corpus_ids  # noqa: E402
from leviathan.data.meta import read_meta  # noqa: E402
from leviathan.empty_paths import refuse_empty_path  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.io import atomic_write_text  # noqa: E402
from leviathan.once_options import once_options  # noqa: E402
from leviathan.result_json import check_json_target  # noqa: E402

COMMAND = "python scripts/bench_corpus_softmax.py"
RESULT_KEYS = {"config", "data", "ids", "vocab_size", "tokens_per_step", "rows", "ratios"}  # what --json writes


def batches(data_dir: str, count: int, batch: int, seq_len: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``count`` (x, y) batches of ``batch`` consecutive windows from the start of the training split; UserError when
    the split is too short for them (it was view()'s RuntimeError traceback)."""
    tokens = TokenDataset(data_dir, "train").tokens
    n = batch * (seq_len + 1)
    if len(tokens) < count * n:
        raise UserError(f"the training split of {data_dir!r} holds {len(tokens):,} tokens, fewer than the {count} "
                        f"batches of {batch} x {seq_len + 1} the benchmark takes ({count * n:,}); pass a smaller "
                        f"--batch (at most {len(tokens) // (count * (seq_len + 1))}) or a larger data folder")
    out = []
    for i in range(count):
        w = torch.from_numpy(np.asarray(tokens[i * n:(i + 1) * n], dtype=np.int64)).view(batch, seq_len + 1)
        out.append((w[:, :-1].contiguous(), w[:, 1:].contiguous()))
    return out


def check_vocabulary(data_dir: str, bc: BenchConfig) -> None:
    """UserError unless the data's tokenizer is the configuration's (by name, or a tokenizer of the same vocabulary
    size: the cost depends on the sizes only) and its ids fit the head: o200k's 200,019-id head against a BPE-300
    folder's 127 corpus ids was timed and reported as a 7.46x saving o200k data would not give (issue 30 round 24,
    V44). Footgun: a BPE trained on little text stops short of its size (bpe:512 with 395 ids) and still matches."""
    meta = read_meta(data_dir)
    vocab = bc.model("dense_tied").vocab_size
    if not _matches(meta, bc.tokenizer, vocab):
        fitting = [name for name, c in sorted(CONFIGS.items())
                   if _matches(meta, c.tokenizer, c.model("dense_tied").vocab_size)]
        other = f", or --config {' / '.join(fitting)} for this data" if fitting else ""
        raise UserError(f"data folder {data_dir!r} is tokenized with {meta.tokenizer!r} ({meta.vocab_size:,} ids), "
                        f"but --config {bc.name} is {bc.tokenizer} ({vocab:,} ids): its saving would be measured on "
                        f"ids of another vocabulary; pass a data folder prepared with {bc.tokenizer} (leviathan "
                        f"prepare SOURCE --out DIR --tokenizer {bc.tokenizer}){other}")


def check_memory(bc: BenchConfig, batch: int) -> None:
    """``memory_preflight``'s refusal before any model is built (issue 30 round 26, P52: the paper configuration's
    models built, and AdamW's first step met the allocator's traceback under `ulimit -v 6000000`): the four models'
    weights, gradients and AdamW state, all held at once, and one step's activations (the chunked head, the full
    vocabulary's: an upper bound for the corpus rows), fp32 on the CPU, where the script trains, against MemAvailable
    and ``ulimit -v``."""
    from leviathan.memory_preflight import check_models_memory

    check_models_memory([bc.model(variant) for variant in ("dense_tied", "leviathan")], batch * bc.seq_len,
                        f"--config {bc.name} with --batch {batch}", "a smaller --config or --batch",
                        copies=2)  # each model with the full and the corpus softmax


def _matches(meta, tokenizer: str, vocab: int) -> bool:
    """By the tokenizer asked for (meta.json's settings: since round 27, S537, a BPE short of its size is named by the
    size it reached, bpe:395 for a bpe:512 asked) or its own name, or the same vocabulary size; its ids fit the head."""
    asked = (meta.settings or {}).get("tokenizer", meta.tokenizer)
    return (tokenizer in (meta.tokenizer, asked) or meta.vocab_size == vocab) and meta.vocab_size <= vocab


def _is_result(earlier) -> bool:
    return isinstance(earlier, dict) and RESULT_KEYS <= set(earlier)


def main(argv: list[str] | None = None) -> int:
    """The exit status: a refusal or a storage failure is one line ``error: ...``, status 2 (``cli.one_line_errors``,
    as collect_results.py says them); a stop is one line as the verbs say it."""
    from leviathan.cli import _stoppable, one_line_errors

    name = "bench_corpus_softmax"
    # ``ending``: a stop as the process ends is said in one line, not a silent kill (round 28, T34's kind)
    return one_line_errors(lambda: _stoppable(name, lambda: _delivered(argv), COMMAND, ending=argv is None), name)


def _delivered(argv: list[str] | None) -> int:
    """``_main(argv)``, once a stop held while importing (``HELD``) is delivered again to the handlers now set."""
    if signal.getsignal(signal.SIGINT) is _hold:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in HELD:
        os.kill(os.getpid(), signum)
    return _main(argv)


def _main(argv: list[str] | None) -> int:
    p = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    p.add_argument("data", help="prepared data folder whose tokenizer matches the configuration")
    p.add_argument("--config", default="o200k-d64", choices=sorted(CONFIGS))
    p.add_argument("--batch", type=positive_int, default=64, help="sequences per step (the ablations: 64 x 128)")
    p.add_argument("--repeats", type=positive_int, default=3, help="timed alternating rounds (default 3)")
    p.add_argument("--json", default=None, help="also write the rows and ratios here")
    args = once_options(p).parse_args(argv)
    for value, option in ((args.data, "the data argument"), (args.json, "--json")):
        refuse_empty_path(value, option)  # --json "" was no JSON without a word (as for the verbs: round 15, B186)
    bc = CONFIGS[args.config]
    if args.json:  # before the timing, not after it (V123); never over a user's file (V40)
        check_json_target(args.json, "--json", _is_result, f"`{COMMAND} --json`", by="the script")
    check_vocabulary(args.data, bc)
    ids = torch.from_numpy(corpus_ids(args.data))
    data = batches(args.data, 2, args.batch, bc.seq_len)  # a batch the data cannot fill is said first
    check_memory(bc, args.batch)
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
        atomic_write_text(args.json, json.dumps({"config": bc.name, "data": args.data, "ids": int(ids.numel()),
                                                 "vocab_size": vocab, "tokens_per_step": tokens, "rows": rows,
                                                 "ratios": ratios}, indent=2) + "\n")
    return 0


if __name__ == "__main__":  # without the interpreter's finalization, whose default stop actions killed a
    from leviathan.cli import end_program  # finished check without a word, -15 (the CI of stop 55, gpu_check env)

    end_program(main())
