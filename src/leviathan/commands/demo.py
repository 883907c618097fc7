"""``leviathan demo``: dense-tied, dense-untied and leviathan side by side, with the project's verdict beside them.

    leviathan demo                         # the corpus prepared on first use, the three trained at once, the table
    leviathan demo --run-dir runs/demo --steps 300

1. It says first what the project found (``leviathan.verdict``, the committed verdict, packaged) and how long the
   demo will take (``estimate``: the runs' training FLOPs at a throughput measured on the project's 2-core machine).
2. Data: the Gutenberg books of the project's data folder (``leviathan.io.data_root``), else the Python standard
   library's sources (no download; a note says so when $LEVIATHAN_DATA names a folder without the books, and a
   $LEVIATHAN_DATA that does not exist is refused: ``io.books_root``, ``books_note``), with a byte-level BPE of 32,768 ids (most ids rare: the regime where a
   generated input side can beat a table; docs/DESIGN.md, results/ablations), prepared once into
   ``<cache>/data/<corpus>-bpe32768`` (``leviathan.io``'s cache root; or ``--data-dir``) and reused.
3. Three models with the same backbone (``cpu-tiny``: width 64, 2 layers, 4 heads): ``dense_tied``,
   ``dense_untied`` (the control that separates the untied head from the generated input side) and ``leviathan``
   (generator d_s 64, M 8, kappa 16, r 32), trained *at the same time*, one single-threaded process each, from the
   same seed on the same tokens in the same order, with progress lines (``demo_progress.RunWatch``).
4. Validation every ``--steps / 6`` steps (the gap curve) and at the end; the table (parameters by group, loss,
   perplexity, bits per byte, throughput) is printed and written to ``<run-dir>/demo.json`` and ``demo.md``; each
   model's run folder is ``<run-dir>/<variant>``.

The headline states the phase the demo measured: a few minutes of CPU training ends near the unigram plateau, the
early phase where leviathan leads in every committed run too; beside it the committed verdict, measured to 10.5M
tokens, where it ends behind both tables, and in a checkout the seeded grid's paired intervals for these models
(``results/cpu-bpe32k``) or the one-seed ablation (``results/ablations``).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..data.meta import PreparedMeta
from ..io import books_note, books_root
from ..model.accounting import ParamCounts
from .values import bpe_vocab, non_negative_int, positive_float, positive_int, thread_count

VARIANTS = ("dense_tied", "dense_untied", "leviathan")
TABLES = ("dense_tied", "dense_untied")  # the arms leviathan is compared with
# Throughput behind the time estimate: the default demo measured 2,404 / 2,372 tokens/s per model (one thread each,
# two models on 2 idle cores of the project's machine, README "The main job"), i.e. this many training FLOPs per
# second per core (3 x forward FLOPs per token, ``flops_per_token``, for cpu-tiny at V 32,768 and sequence 128:
# 4.44 MFLOP, 94% of them the head's; tests/integration/test_cli.py checks the figure).
DEMO_FLOPS_PER_TOKEN = 4.44e6
FLOPS_PER_CORE = 2_400 * 3 * DEMO_FLOPS_PER_TOKEN
BPE_VOCAB = 32768
# the d64 arm of results/ablations: a generator with M r = 256 >= D (the old grid's M r = 64 confined
# input embeddings to a 64-dimensional subspace)
GENERATOR = {"generator_seed_dim": 64, "generator_modes": 8, "generator_knots": 16, "generator_rank": 32}


def default_data_dir(corpus: str, vocab: int = BPE_VOCAB) -> Path:
    from ..io import cache_root

    return cache_root() / "data" / f"{corpus}-bpe{vocab}"


def variant_list(text: str) -> list[str]:
    """``--variants``: known embedding variants, each once. ``--variants ,`` ended in a ValueError traceback (nothing
    to train), and ``--variants leviathan,leviathan`` trained two processes into one folder, the second refused after
    the work by the first one's lock (issue 30 round 7)."""
    import argparse

    from ..model.config import EMBEDDING_KINDS

    variants = [part.strip() for part in text.split(",") if part.strip()]
    if not variants:
        raise argparse.ArgumentTypeError(f"expected comma-separated variants such as {','.join(VARIANTS)}, got "
                                         f"{text!r}")
    for i, v in enumerate(variants):
        if v not in EMBEDDING_KINDS:
            raise argparse.ArgumentTypeError(f"unknown variant {v!r}; choose from {', '.join(EMBEDDING_KINDS)}")
        if v in variants[:i]:
            raise argparse.ArgumentTypeError(f"variant {v!r} is listed twice in {text!r}; list each variant once")
    return variants


def add_arguments(parser) -> None:
    parser.add_argument("--run-dir", default="runs/demo", help="output folder (default runs/demo); replaced if it holds an earlier demo")
    parser.add_argument("--data-dir", default=None,
                        help="prepared data folder; created from the Gutenberg books (or the stdlib) if missing "
                             "(default ~/.cache/leviathan/data/<corpus>-bpe32768)")
    parser.add_argument("--vocab", type=bpe_vocab, default=None,
                        help=f"BPE vocabulary of the corpus the demo prepares (default {BPE_VOCAB}); an already "
                             f"prepared --data-dir keeps its own tokenizer")
    parser.add_argument("--steps", type=positive_int, default=130, help="optimizer steps per model (default 130)")
    parser.add_argument("--preset", default="cpu-tiny", help="backbone preset for both models (default cpu-tiny)")
    parser.add_argument("--seq-len", type=positive_int, default=128, help="training sequence length (default 128)")
    parser.add_argument("--batch-tokens", type=positive_int, default=4096, help="tokens per optimizer step (default 4096)")
    parser.add_argument("--lr", type=positive_float, default=3e-3, help="peak learning rate (default 3e-3)")
    parser.add_argument("--eval-tokens", type=non_negative_int, default=32768,
                        help="validation tokens per evaluation (default 32768; 0 = the whole split)")
    parser.add_argument("--variants", type=variant_list, default=list(VARIANTS),
                        help="comma-separated embedding variants (default dense_tied,dense_untied,leviathan)")
    parser.add_argument("--threads", type=thread_count, default=None,
                        help="torch threads per model (default 1: the models train at the same time, one process each)")
    parser.add_argument("--sequential", action="store_true", help="train the models one after the other")
    parser.add_argument("--quiet", action="store_true", help="no estimate and no progress lines")


def _prepare_data(data_dir: Path, explicit: bool, vocab: int | None, quiet: bool) -> PreparedMeta:
    """The demo corpus' meta.json: an explicit ``--data-dir`` that is already prepared is used as it is (a
    ``--vocab`` it was not prepared with is an error: it was ignored without a word, issue 30 round 6); the cache
    is (re)built from the books (or the stdlib) when missing or out of date."""
    from ..data.meta import find_meta, read_meta
    from ..data.prepare import prepare
    from ..errors import UserError, not_a_folder

    meta = find_meta(data_dir)
    if explicit and meta is not None:
        asked = (meta.settings or {}).get("tokenizer", meta.tokenizer)
        if vocab is not None and asked != f"bpe:{vocab}":
            raise UserError(f"--vocab {vocab:,} does not match --data-dir {str(data_dir)!r}, prepared with tokenizer "
                            f"{asked!r} ({meta.vocab_size:,} ids); drop --vocab to use that folder as it is, or "
                            f"give a --data-dir that does not exist yet to prepare one with BPE {vocab:,}")
        return meta
    if explicit and meta is None and (not_a_folder(data_dir) or (data_dir.is_dir() and any(data_dir.iterdir()))):
        # prepare's own refusal named its flag, `--out`, which the user never gave (issue 30 round 8, D2); a named
        # pipe was "--out fifo1 is a file" (round 28, T48)
        what = not_a_folder(data_dir) or "is a folder that is not a prepared data folder (no meta.json)"
        raise UserError(f"--data-dir {str(data_dir)!r} {what}; give a folder `leviathan prepare` wrote, or a "
                        f"--data-dir that does not exist yet (or is empty) for the demo to prepare its corpus into")
    vocab = vocab or BPE_VOCAB
    books = books_root()  # a $LEVIATHAN_DATA that is not there is refused; one without the books is said (round 27)
    if (note := books_note()) is not None:
        print(note, file=sys.stderr)  # under --quiet too: it says what the demo trains on
    source = str(books / "gutenberg" / "train") if books else "stdlib"
    kwargs = dict(tokenizer=f"bpe:{vocab}", progress=not quiet, log=(lambda m: None) if quiet else None)
    kwargs.update({"val_source": str(books / "gutenberg" / "valid")} if books else {"val_fraction": 0.03})
    if meta is None:
        print(f"preparing the demo corpus ({'Gutenberg books' if books else 'Python stdlib'}, BPE {vocab:,}) "
              f"into {data_dir} (once) ...", file=sys.stderr)
    try:
        prepare(source, data_dir, **kwargs)  # returns at once when the cache is up to date
    except UserError:
        if explicit or meta is None:  # no cache was there: the failure is not a stale cache's ($XDG_CACHE_HOME a file
            raise                     # was told "out of date; rebuilding it" first, noticed in fix28f)
        print(f"the cached demo corpus in {data_dir} is out of date; rebuilding it", file=sys.stderr)
        prepare(source, data_dir, overwrite=True, **kwargs)
    return read_meta(data_dir)


def run_config(args, data_dir: Path, embedding: str):
    from ..presets import preset_dict
    from ..run_config import build_run_config

    micro = max(1, min(32, args.batch_tokens // args.seq_len))
    model = {"preset": args.preset, "embedding": embedding, **GENERATOR}
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
        "eval_interval": max(1, args.steps // 6),  # the gap curve
        "eval_tokens": args.eval_tokens or None,
        "eval_batch_size": 32,
        "checkpoint_interval": 0,
        "keep_last": 1,
        "seed": 1337,
        "device": "cpu",
        "dtype": "float32",
    }
    return build_run_config(raw)


@dataclass
class DemoRow:
    """One trained model of the demo: what its table, headline and demo.json say (``codec.encode``: one key per
    field, in this order). Footgun: it crosses a process boundary (``ProcessPoolExecutor``), so it holds only
    picklable values."""

    variant: str
    params: ParamCounts
    val_loss: float
    val_ppl: float
    val_bpb: float | None
    tokens_per_s: float
    train_time_s: float
    wall_time_s: float
    tokens: int
    run_dir: str


def _train_one(cfg, run_dir: str, threads: int) -> DemoRow:
    """One model, quietly (``RunWatch`` reports its progress), in a worker process when the models train at the
    same time."""
    import multiprocessing

    import torch

    from ..train.loop import train

    from .. import stop_signals

    if multiprocessing.parent_process() is not None:  # a worker: outside train a stop is remembered, never fatal
        from ..tracker_death import quiet_tracker_death

        for sig in stop_signals.stop_and_interrupt_signals():
            signal.signal(sig, stop_signals.remember_stop)
        quiet_tracker_death(say=False)  # the demo's process says it (round 20, K113)
    torch.set_num_threads(threads)
    t = time.time()
    from ..train.checkpoint import resume_hint
    from ..train.loop import lr_fix

    says, stop_signals.caller_says_stops = stop_signals.caller_says_stops, True  # the demo prints one line for all
    try:                                                                       # its models (round 14, A56, A166)
        with resume_hint("run the same `leviathan demo` command again"), lr_fix(_lower_lr):  # no --resume (round 7)
            summary = train(cfg, run_dir, quiet=True)
    finally:
        stop_signals.caller_says_stops = says
    if summary.stopped:  # train took the signal, saved and returned: the demo stops too (a traceback formatting the
        from ..cli import Stopped  # missing loss before, issue 30 round 6)

        raise Stopped(signal.Signals[summary.stopped])
    return DemoRow(cfg.model.embedding, summary.params, summary.final_val_loss, summary.final_val_ppl,
                   summary.final_val_bpb, summary.tokens_per_s, summary.train_time_s, time.time() - t, summary.tokens,
                   summary.run_dir)


def _lower_lr(cfg) -> str:
    """The way out of a diverged demo model, in the demo's flags: it named optim.lr and schedule.warmup_steps, which
    the demo does not take, and said to run the same command again, which diverges again (issue 30 round 15, A126)."""
    return (f"Try a lower learning rate, for example --lr {cfg.optim.lr / 3:.3g} (now {cfg.optim.lr:.3g}), in the "
            f"`leviathan demo` command")


def _train_all(configs: list, run_dir: Path, args, say, watch=None) -> list[DemoRow]:
    """Every model trained (in parallel worker processes unless --sequential), a line per finished run (after the
    watcher has printed its last rows); rows in the order of ``configs``."""
    threads = args.threads or 1

    def _finished(row: DemoRow) -> DemoRow:
        if watch is not None:
            watch.poll()
        say(f"{row.variant} finished in {row.wall_time_s:.0f} s: validation loss {row.val_loss:.4f}")
        return row

    if args.sequential or len(configs) == 1:
        return [_finished(_train_one(c, str(run_dir / c.model.embedding), threads)) for c in configs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from ..stop_signals import start_resource_tracker
    from ..tracker_death import quiet_tracker_death

    start_resource_tracker()  # deaf to a SIGHUP of the group, as to SIGINT and SIGTERM
    quiet_tracker_death(say=True)  # killed, one line, not a traceback per name (round 20, K113)
    with ProcessPoolExecutor(len(configs), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_train_one, c, str(run_dir / c.model.embedding), threads): c.model.embedding
                   for c in configs}
        try:
            rows = {futures[f]: _finished(f.result()) for f in as_completed(futures)}
        except BaseException:
            _stop_workers(pool)
            with _waiting_for(pool):
                pool.shutdown(wait=True, cancel_futures=True)
            raise
    return [rows[c.model.embedding] for c in configs]


@contextlib.contextmanager
def _waiting_for(pool):
    """While the stopped workers save their checkpoints and end: a further SIGTERM or SIGHUP is the same stop (GNU
    timeout, systemd and batch schedulers signal the demo, then its whole process group); a second Ctrl-C stops the
    workers at once. The group's second SIGTERM interrupted the wait for the workers: the demo ended (or hung at
    exit) with its workers idle forever or still computing, orphaned (issue 30 round 12, U259, U271)."""
    import threading

    from ..stop_signals import stop_and_interrupt_signals

    def again(signum, frame):
        if signum == signal.SIGINT:
            print("second Ctrl-C: the workers are stopped at once (their last saved checkpoints stand)",
                  file=sys.stderr, flush=True)
            _stop_workers(pool, signal.SIGKILL)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, again) for sig in stop_and_interrupt_signals()}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _stop_workers(pool, signum: int = signal.SIGTERM) -> None:
    """``signum`` (SIGTERM; SIGKILL for a second Ctrl-C) to each worker still alive, so that its ``train`` saves a checkpoint and returns, and the pool's exit
    (which waits for them) ends. A SIGTERM sent to the demo's own process (``kill PID``, as a scheduler stops a job;
    Ctrl-C reaches the whole process group, a ``kill`` does not) left the workers training and the demo waiting for
    them without a word: 70 s after the signal, three runs of ``--steps 10**15`` were still training (issue 30 round
    10, Q94b)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):  # CPython's pid -> Process
        if process.is_alive():
            with contextlib.suppress(OSError):
                os.kill(process.pid, signum)


def estimate(configs: list, args, cores: int | None = None) -> float:
    """Seconds the training and validation of ``configs`` should take here: their training FLOPs (3 x the forward
    FLOPs per token, ``flops_per_token``, times the tokens) and validation FLOPs at ``FLOPS_PER_CORE`` each, run on
    min(cores, models) cores at once (or one after the other with --sequential). An estimate from one machine's
    measurement: a faster or busier CPU differs."""
    import os

    from ..model.accounting import flops_per_token

    cores = max(1, cores or os.cpu_count() or 1)
    work = []
    for cfg in configs:
        per_token = flops_per_token(cfg.model, args.seq_len)["total"]
        evals = max(1, args.steps // max(1, args.steps // 6)) + 1  # the curve's validations and the final one
        work.append((3 * args.steps * args.batch_tokens + evals * (args.eval_tokens or 262_144)) * per_token)
    if args.sequential:
        return sum(work) / (FLOPS_PER_CORE * (args.threads or 1))
    slots = min(cores, len(work))
    return max(max(work) / FLOPS_PER_CORE, sum(work) / (FLOPS_PER_CORE * slots))


TABLE_HEADER = ["model", "input", "body", "head", "total", "val loss", "val ppl", "val bpb", "tok/s", "wall s"]


def _table_rows(rows: list[DemoRow]) -> list[list[str]]:
    out = []
    for r in rows:
        p = r.params
        out.append([r.variant, f"{p.input:,}", f"{p.body:,}", "tied" if p.tied else f"{p.head:,}", f"{p.total:,}",
                    f"{r.val_loss:.4f}", f"{r.val_ppl:.2f}", f"{r.val_bpb:.4f}" if r.val_bpb is not None else "n/a",
                    f"{r.tokens_per_s:,.0f}", f"{r.wall_time_s:.1f}"])
    return out


def format_table(rows: list[DemoRow]) -> str:
    from ..tables import text_table

    return text_table(TABLE_HEADER, _table_rows(rows))


def format_markdown(rows: list[DemoRow], info: dict, curve: list | None = None, lines: list[str] | None = None) -> str:
    from ..tables import markdown_table

    names = [r.variant for r in rows]
    out = [f"# leviathan demo: {', '.join(names)} (iso-body)", "",
           f"Data: {info['data_dir']} ({info['train_tokens']:,} train / {info['val_tokens']:,} validation tokens, "
           f"tokenizer {info['tokenizer']}). Each model: {info['steps']} steps x {info['batch_tokens']:,} tokens "
           f"= {info['steps'] * info['batch_tokens']:,} tokens, sequence {info['seq_len']}, preset {info['preset']}, "
           f"trained {info['concurrent']}.", "",
           markdown_table(TABLE_HEADER, _table_rows(rows), align="l" + "r" * (len(TABLE_HEADER) - 1))]
    if curve:
        out += ["", markdown_table(["tokens", *[f"{v} val loss" for v in names]],
                                   [[f"{t:,}", *[f"{losses[v]:.4f}" for v in names]] for t, losses in curve],
                                   align="r" * (len(names) + 1))]
    if lines:
        out += [""] + [f"- {line.strip()}" for line in lines]
    return "\n".join(out) + "\n"


def gap_curve(rows: list[DemoRow]) -> list[tuple[int, dict[str, float]]]:
    """(tokens, {variant: validation loss}) at every validation point all the runs logged."""
    from ..train.metrics import read_metric_rows

    curves = {r.variant: {m.tokens: m.val_loss for m in read_metric_rows(r.run_dir) if m.val_loss} for r in rows}
    if len(curves) < 2:
        return []
    common = set.intersection(*(set(c) for c in curves.values()))
    return [(t, {v: c[t] for v, c in curves.items()}) for t in sorted(common)]


RESULTS = Path("results")  # the checkout's committed results, seen from its root (absent elsewhere and in a wheel)


def committed_grid(path: Path = RESULTS / "cpu-bpe32k" / "analysis.json", *, size: str = "m",
                   baselines: tuple[str, ...] | None = None, label: str = "results/cpu-bpe32k, same models") -> list[str]:
    """A committed grid's paired intervals of leviathan at ``size`` (default: the BPE-32k grid's size m, this
    demo's backbone and generator), against every baseline or the ``baselines`` named; [] before it has a pair."""
    from ..experiments.report.analysis import read_analysis
    from ..value_rules import level_percent

    try:
        paired = read_analysis(path).paired
    except (OSError, ValueError):
        return []
    lines = []
    for c in paired:
        if (c.regime, c.size, c.model) != ("iso_body", size, "leviathan") or "val" not in c.eval:
            continue
        if baselines is not None and c.baseline not in baselines:
            continue
        e, tokens = c.eval["val"], (c.curve.tokens or [0])[-1]
        loss = e.loss
        interval = "" if not loss.ci else f" [{level_percent(c.ci)}% interval {loss.ci[0]:+.3f}, {loss.ci[1]:+.3f}]"
        lines.append(f"committed grid ({label}, {tokens / 1e6:.1f}M tokens, "
                     f"{len(c.seeds)} seed(s)): leviathan - {c.baseline} validation loss {loss.mean:+.3f} "
                     f"nats{interval}, perplexity {e.ppl_change.mean:+.1%}: {loss.verdict}")
    return lines


def committed_ablation(path: Path = RESULTS / "ablations" / "ablations.json") -> str | None:
    """One line on the committed ablation measurement (the d64 BPE-32k pair, one seed), when this is a checkout."""
    from ..experiments.ablation.analysis import read_ablations

    try:
        arms = read_ablations(path).arms
    except (OSError, ValueError):
        return None
    arm = next((a for a in arms if a.label == "bpe32k/d64"), None)
    val = arm.eval.get("val") if arm is not None else None
    if val is None or val.gap is None:
        return None
    return (f"committed measurement past the plateau (results/ablations, same models, {arm.tokens / 1e6:.1f}M "
            f"tokens, seed {arm.seed}): leviathan - dense_tied validation loss {val.gap:+.3f} nats, "
            f"perplexity {val.ppl_change:+.1%}")


def headline(rows: list[DemoRow], data_dir: Path) -> list[str]:
    """What this demo measured and in which phase: leviathan against each table, and whether dense_tied is still on
    the unigram plateau (the early phase: a lead there measures optimisation speed, not the paper's claim)."""
    from ..experiments.method.plateau import unigram_entropy

    by = {r.variant: r for r in rows}
    if "leviathan" not in by or not set(TABLES) & set(by):
        return []
    lev = by["leviathan"]
    tokens = lev.tokens / 1e6
    gaps = [f"leviathan - {t} {lev.val_loss - by[t].val_loss:+.3f} nats "
            f"(perplexity {math.exp(lev.val_loss - by[t].val_loss) - 1:+.1%})" for t in TABLES if t in by]
    ahead = all(lev.val_loss < by[t].val_loss for t in TABLES if t in by)
    entropy = unigram_entropy(data_dir)
    reference = by.get("dense_tied") or by[next(t for t in TABLES if t in by)]
    name, loss = reference.variant, reference.val_loss
    if entropy is None:
        phase = "phase unknown (no unigram entropy: the data folder has no train_freq.npy)"
    elif loss > entropy:
        phase = (f"the early phase: {name}'s validation loss {loss:.3f} is still above the unigram entropy "
                 f"{entropy:.3f}, the loss of predicting token frequencies alone")
    elif entropy - loss < 0.5:
        phase = (f"the early phase: {name}'s validation loss {loss:.3f} is within {entropy - loss:.2f} nats below the "
                 f"unigram entropy {entropy:.3f}, where the models still learn token frequencies")
    else:
        phase = (f"past the unigram plateau: {name}'s validation loss is {entropy - loss:.2f} nats below it "
                 f"({entropy:.3f})")
    amount = f"{tokens:.2f}M" if tokens >= 0.1 else f"{lev.tokens:,}"
    return [f"this demo ({amount} tokens per model; {phase}):",
            f"  {', '.join(gaps)}: leviathan is {'ahead' if ahead else 'not ahead of both tables'} here"]


def verdict(rows: list[DemoRow], data_dir: Path) -> list[str]:
    """The headline (this demo's phase and gaps) with the committed verdict beside it (``leviathan.verdict``: the
    packaged verdict.yaml, updated by the commit that changes the finding), then in a checkout the committed
    measurement of these same models past the plateau."""
    from ..verdict import committed_verdict

    lines = headline(rows, data_dir) + committed_verdict().lines()
    refs = committed_grid() or [r for r in [committed_ablation()] if r]
    return lines + [f"same models past the plateau, {line}" for line in refs]


def _demo_files() -> tuple[str, ...]:
    """Glob patterns of every file a demo folder holds: its summary and a run folder per variant."""
    from ..model.config import EMBEDDING_KINDS

    return ("demo.json", "demo.md", *(f"{kind}/*" for kind in EMBEDDING_KINDS))


def _earlier_demo(folder: Path, files: list[str]) -> bool:
    """A demo folder written before markers existed: demo.json, demo.md and a run folder per variant, nothing else."""
    from ..model.config import EMBEDDING_KINDS

    top = {f.split(os.sep)[0] for f in files}
    return "demo.json" in top and top <= {"demo.json", "demo.md", *EMBEDDING_KINDS}


def _check_flags(args) -> None:
    """The demo's numbers, each named by its own flag: the line named two rules and not which failed (issue 30 round
    15, A128), and train's settings the demo does not take (``batch_tokens=96``, ``micro_batch_size``, ``optim.lr``:
    A129, A126)."""
    from ..errors import UserError
    from ..presets import preset_dict_named
    from ..run_config import OPTIM_RANGES

    preset_dict_named("--preset", args.preset)  # before the corpus is prepared: `--preset nope` began a 32,768-id
    # BPE first (round 17, E339)
    if args.steps < 1:
        raise UserError(f"--steps must be at least 1, got {args.steps}")
    low, high = OPTIM_RANGES["lr"]
    if not low <= args.lr <= high:
        raise UserError(f"--lr {args.lr:g} is outside the range a run can use: give --lr in [{low:g}, {high:g}] "
                        f"(default 3e-3)")
    seq, total = args.seq_len, args.batch_tokens
    if total < seq:
        raise UserError(f"--batch-tokens {total} is less than --seq-len {seq}: a step trains whole sequences; give "
                        f"--batch-tokens of at least {seq} (a multiple of it), or a smaller --seq-len")
    micro = max(1, min(32, total // seq))  # as run_config makes it
    if total % (micro * seq):
        lower = total // (micro * seq) * micro * seq
        raise UserError(f"--batch-tokens {total} is not a multiple of {micro * seq} ({micro} sequences of --seq-len "
                        f"{seq} per micro batch): give --batch-tokens {lower} or {lower + micro * seq}")


def _check_memory(configs: list, args) -> None:
    """``memory_preflight``'s refusal for models this machine cannot hold: all of them at once when they train in
    parallel, the largest when one after the other (the demo trains on the CPU: ``run_config``'s device), each with
    its micro batch's activations (round 26, P18's kind)."""
    from ..memory_preflight import check_run_memory
    from ..model.accounting import count_config

    held = configs if not (args.sequential or len(configs) == 1) else [
        max(configs, key=lambda c: count_config(c.model).total)]
    check_run_memory(held, f"--preset {args.preset}", "a smaller --preset (cpu-tiny, cpu-small, ...)"
                     + ("" if args.sequential or len(configs) == 1 else " or --sequential"))


def run(args) -> int:
    from ..codec import encode
    from ..errors import UserError
    from ..io import atomic_write_json, atomic_write_text
    from ..ownership import (CONTAINERS, check_apart, check_not_inside, check_replaceable, listed_files, replaced_folder,
                             write_marker)
    from ..removal import remove_tree
    from ..verdict import committed_verdict
    from .demo_progress import RunWatch

    _check_flags(args)
    variants = list(args.variants)  # checked by variant_list: known, each once
    say = (lambda line: None) if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    for line in ["what the project found, before this demo's own measurement:", *committed_verdict().lines(), ""]:
        say(line)
    t0 = time.time()
    run_dir = Path(args.run_dir)
    check_not_inside(run_dir, "--run-dir", ("train", "prepare", "export"), within=CONTAINERS, verb="demo")  # N121
    if args.data_dir:  # a prepared --data-dir reads no data folder: $LEVIATHAN_DATA is not looked at for it
        data_dir = Path(args.data_dir).expanduser()
    else:
        data_dir = default_data_dir("gutenberg" if books_root() else "stdlib", args.vocab or BPE_VOCAB)
    # the data folder apart from the run folder, before it is prepared: `--data-dir D/data --run-dir D` prepared the
    # corpus into D, then refused D as holding files no demo writes, and the data blocked that command from then on
    # (issue 30 round 14, A244, A246)
    check_apart(data_dir, "--data-dir", run_dir, "--run-dir")
    meta = _prepare_data(data_dir, args.data_dir is not None, args.vocab, args.quiet)
    prep_s = time.time() - t0
    configs = [run_config(args, data_dir, v) for v in variants]
    from ..train.loop import _check_run_length

    _check_run_length(configs[0], meta, flag="--steps")  # before the estimate and --run-dir (Z61): one length for all
    _check_memory(configs, args)  # before --run-dir is replaced and any model built (round 25, X70, X71)
    if run_dir.exists() or run_dir.is_symlink():  # a link to a missing folder is named (replaced_folder)
        run_dir = replaced_folder(run_dir, "--run-dir")  # deleted and made anew: never the current folder
        if any(run_dir.iterdir()):  # only an earlier demo (its marker and files), no live run: leviathan.ownership
            check_replaceable(run_dir, "demo", "--run-dir", legacy=_earlier_demo, own=_demo_files())
        if run_dir.is_symlink():  # the link is replaced, as prepare and export replace theirs; what it names is kept
            run_dir.unlink()  # (rmtree refused a link: a traceback, issue 30 round 6)
        elif (problem := remove_tree(run_dir)) is not None:  # round 10 (P23): 'metrics.jsonl' named alone
            raise UserError(f"could not delete the earlier demo in '{run_dir}' that --run-dir replaces ({problem}); "
                            f"make it deletable (or delete the folder by hand) and run the demo again, or choose "
                            f"another --run-dir")
    run_dir.mkdir(parents=True)
    write_marker(run_dir, "demo")  # claimed before the first file: the rerun a stopped demo advises may replace it
    how = "one after the other" if args.sequential or len(configs) == 1 else "at the same time, one process each"
    expected = estimate(configs, args)
    say(f"training {', '.join(variants)} {how} ({args.steps} steps x {args.batch_tokens:,} tokens, "
        f"{args.threads or 1} thread(s) per model): about {math.ceil(expected / 60)} min on this machine's "
        f"idle cores (estimated from the project's 2-core measurement; longer when the cores are busy)")
    watch = RunWatch({v: run_dir / v for v in variants}, args.steps, say=say) if not args.quiet else None
    with (watch or contextlib.nullcontext()):
        rows = _train_all(configs, run_dir, args, say, watch)
    info = {"data_dir": str(data_dir), "tokenizer": meta.tokenizer, "source": meta.source,
            "train_tokens": meta.tokens("train"), "val_tokens": meta.tokens("val"),
            "steps": args.steps, "batch_tokens": args.batch_tokens, "seq_len": args.seq_len, "preset": args.preset,
            "generator": GENERATOR, "threads_per_model": args.threads or 1, "concurrent": how, "prepare_s": prep_s,
            "estimated_s": expected, "total_wall_s": time.time() - t0}
    curve = gap_curve(rows)
    lines = verdict(rows, data_dir)
    table = format_table(rows)
    atomic_write_json(run_dir / "demo.json", {"info": info, "rows": encode(rows), "curve": curve, "verdict": lines})
    atomic_write_text(run_dir / "demo.md", format_markdown(rows, info, curve, lines))
    write_marker(run_dir, "demo", listed_files(run_dir))  # what the next demo may replace
    print()
    print(table)
    if curve:
        names = [r.variant for r in rows]
        print(f"\nvalidation loss over training (tokens: {' / '.join(names)})")
        print("  ".join((f"{t / 1e3:,.0f}k: " if t >= 10_000 else f"{t:,}: ")
                        + " / ".join(f"{losses[v]:.3f}" for v in names) for t, losses in curve))
    print()
    print("\n".join(lines))
    print(f"\ntotal wall time {info['total_wall_s']:.0f} s (data {prep_s:.0f} s, estimated {expected:.0f} s); "
          f"details in {run_dir / 'demo.md'} and {run_dir / 'demo.json'}")
    return 0
