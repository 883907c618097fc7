"""``leviathan analyze``: the paper's analyses (docs/DESIGN.md §7) over sweep results or single runs.

    leviathan analyze scaling runs/cpu                     # dense power law + dense-equivalent multipliers
    leviathan analyze compare runs/cpu                     # iso-body / isoparametric perplexity reductions
    leviathan analyze frequency runs/cpu                   # per-frequency-bucket reductions (from the rows)
    leviathan analyze frequency --runs RUN_A RUN_B --data DATA_DIR   # same, evaluating two checkpoints now
    leviathan analyze efficiency runs/cpu                  # tokens to reach the baseline's final loss
    leviathan analyze efficiency --model RUN_DIR --reference RUN_DIR
    leviathan analyze throughput runs/cpu
    leviathan analyze lr results/o200k/o200k-lr            # an lr pre-sweep: loss per lr, each arm's pick
    leviathan analyze fit --sizes 1e6,2e6,4e6,8e6 --losses 4.1,3.8,3.6,3.45   # a fit from numbers
    leviathan analyze embeddings RUN_DIR --out results/o200k/embeddings/NAME.json   # input side, init -> end
    leviathan analyze embeddings A.json B.json             # two arms of one seed: neighbour agreement
    leviathan analyze embeddings --sweep runs/o200k --dest results/o200k   # a record per finished run

Every subcommand takes ``--json`` to print machine-readable output.
"""

from __future__ import annotations

import math
import sys

from ..experiments.machinery.grid import REGIMES as REGIME_CHOICES
from ..model.config import EMBEDDING_KINDS
from .values import add_bootstrap_option, bucket_count, eval_set_name, open_fraction, positive_int, seed
from .. import json_text


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="analysis", metavar="ANALYSIS", required=True)

    def common(p, results=True):
        if results:
            p.add_argument("results", nargs="?", default=None, help="sweep output dir or results.jsonl")
        p.add_argument("--eval-set", default="val", type=eval_set_name, help="eval set of the rows to use (default: val)")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("scaling", help="fit L(N) = E + A N^-alpha to the dense ladder; dense-equivalent sizes")
    common(p)
    p.add_argument("--variant", default=None, help="dense ladder variant (default: the scaling experiment's)")
    p.add_argument("--count", default="total", choices=["total", "body", "non_input"], help="parameters counted as N")
    add_bootstrap_option(p)
    p.add_argument("--ci", type=open_fraction, default=0.95)
    p.add_argument("--seed", type=seed, default=0)

    p = sub.add_parser("fit", help="power-law fit of given sizes and losses")
    p.add_argument("--sizes", required=True, help="comma-separated parameter counts")
    p.add_argument("--losses", required=True, help="comma-separated losses, same order")
    p.add_argument("--invert", default=None, help="LOSS:PARAMS pairs (comma-separated) to place on the fit")
    add_bootstrap_option(p)
    p.add_argument("--ci", type=open_fraction, default=0.95)
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("compare", help="perplexity of each variant vs the baseline of its comparison")
    common(p)

    p = sub.add_parser("frequency", help="loss by training-frequency bucket and the reduction vs a baseline")
    common(p)
    # an unknown regime or variant printed "no nope pairs ..." and exit 0 (issue 30 round 14, B52, B53)
    p.add_argument("--regime", default="iso_body", choices=REGIME_CHOICES,
                   help="comparison regime of the rows (default: iso_body)")
    p.add_argument("--baseline", default=None, choices=EMBEDDING_KINDS,
                   help="baseline variant (default: dense_tied; isoparametric: dense_untied)")
    p.add_argument("--runs", nargs="+", default=None, metavar="RUN_DIR",
                   help="evaluate these checkpoints now instead (the first is the baseline)")
    p.add_argument("--data", default=None, help="with --runs: prepared data dir (train_freq.npy, val split)")
    p.add_argument("--split", default="val", help="with --runs: split of the data dir to evaluate")
    p.add_argument("--buckets", type=bucket_count, default=5)
    p.add_argument("--method", default="mass", choices=["mass", "log"])
    p.add_argument("--seq-len", type=positive_int, default=None)
    p.add_argument("--batch-size", type=positive_int, default=8)
    p.add_argument("--max-tokens", type=positive_int, default=None)

    p = sub.add_parser("efficiency", help="tokens a model needs to reach a reference's final validation loss")
    common(p)
    p.add_argument("--regime", default="iso_body", choices=REGIME_CHOICES)
    p.add_argument("--model", default=None, help="run dir (or metrics.jsonl) of the model")
    p.add_argument("--reference", default=None, help="run dir (or metrics.jsonl) of the reference")
    p.add_argument("--split", default=None, help="validation split name in metrics.jsonl (default: any)")

    p = sub.add_parser("throughput", help="tokens/s per variant and the slowdown vs the baseline")
    common(p)
    p.add_argument("--allow-mixed-hardware", action="store_true")

    p = sub.add_parser("lr", help="a learning-rate pre-sweep: each arm's final loss per lr and the lr the rule picks")
    common(p)

    p = sub.add_parser("embeddings", help="the input side at init and at the end: scale, shared share, effective "
                                          "rank, cosine per frequency bucket; two runs: neighbour agreement")
    p.add_argument("paths", nargs="*", metavar="RUN_OR_RECORD",
                   help="one run folder (its record), or two run folders / records (their neighbour agreement)")
    p.add_argument("--out", default=None, metavar="FILE", help="one run: write its record here (JSON)")
    p.add_argument("--sweep", default=None, metavar="DIR", help="a sweep's --out folder: a record per finished run")
    p.add_argument("--dest", default=None, metavar="DIR",
                   help="with --sweep: write DIR/embeddings/<run>.json (default: the sweep folder)")
    p.add_argument("--redo", action="store_true", help="with --sweep: remake records that exist")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="the prepared data the runs trained on, for train_freq.npy (default: the config's data.path)")
    p.add_argument("--buckets", type=bucket_count, default=None,
                   help="training-frequency buckets (default: 5; with --sweep, the grid's)")
    p.add_argument("--method", default=None, choices=["mass", "log"],
                   help="bucketing rule (default: mass; with --sweep, the grid's)")
    p.add_argument("--probes", type=positive_int, default=200, help="probe ids per bucket (and unseen group)")
    p.add_argument("--top-k", type=positive_int, default=10, help="nearest neighbours per probe")
    p.add_argument("--json", action="store_true", help="print JSON (the record, or the pair's agreement)")


def _rows(args, one_evaluation: bool = True):
    """The rows of ``args.results``; with ``one_evaluation`` (the analyses of eval numbers) they must have been
    evaluated alike, as in a report (``identity.check_one_evaluation``: before, ``analyze compare`` set a row's
    training-time validation loss against another's eval loss, issue 30 round 5)."""
    from ..errors import UserError
    from ..experiments.machinery.grid_agreement import check_grid_describes_rows
    from ..experiments.machinery.identity import check_eval_set, check_one_evaluation, check_one_grid
    from ..experiments.machinery.results import load_results
    from ..experiments.machinery.summary_check import check_rows_match_runs
    from ..experiments.machinery.sweep_grid import grid_json_of, read_sweep_grid

    if not args.results:
        raise UserError("pass a sweep output dir or results.jsonl (or see --help for single-run options)")
    rows = load_results(args.results)
    if one_evaluation:
        check_one_evaluation(rows, str(args.results))
    grid = read_sweep_grid(args.results)  # round 15 (B291): a grid.json of another grid was not compared here
    check_one_grid(rows, str(args.results), grid.name, str(grid_json_of(args.results)))  # round 7: pasted rows
    if one_evaluation and getattr(args, "eval_set", None) is not None:
        check_eval_set(rows, args.eval_set, str(args.results))
    check_grid_describes_rows(rows, grid, str(grid_json_of(args.results)),
                              str(args.results))  # a row edited or pasted apart from its grid (round 10, P48)
    check_rows_match_runs(rows, args.results)  # a row's numbers against its run folder, as report (round 35, AH171)
    return rows


def _dump(obj) -> None:
    from ..experiments.machinery.results import dumps

    print(dumps(obj, indent=2))


def run(args) -> int:
    return {"scaling": _scaling, "fit": _fit, "compare": _compare, "frequency": _frequency,
            "efficiency": _efficiency, "throughput": _throughput, "lr": _lr,
            "embeddings": _embeddings}[args.analysis](args)


def _lr(args) -> int:
    from ..errors import UserError
    from ..experiments.method.lr_sweep import incomplete_note, pick_learning_rates, render_lr_sweep

    choices = pick_learning_rates(_rows(args), args.eval_set)
    # a main grid's rows: "picked 0.003" for every arm, exit 0 (issue 30 round 14, B336)
    if choices and all(len(c.losses) < 2 for c in choices.values()):
        raise UserError(f"the rows of {args.results!r} hold one learning rate per arm, so there is nothing to pick: "
                        f"they are not a learning-rate pre-sweep; pass the pre-sweep's folder "
                        f"(runs/GRID/presweep, written by `leviathan sweep --presweep`)")
    if (note := incomplete_note(choices)) is not None:  # round 15, B180
        print(note, file=sys.stderr)
    if args.json:
        _dump(choices)
        return 0
    print("\n".join(render_lr_sweep(choices, args.eval_set)))
    return 0


def _scaling(args) -> int:
    from ..experiments.method.scaling import format_fit, scaling_from_results

    sc = scaling_from_results(_rows(args), args.variant, args.eval_set, args.count, args.bootstrap, args.ci, args.seed)
    if args.json:
        _dump(sc)
        return 0
    print(f"dense ladder: {sc.variant} ({len(sc.points)} runs), N = {sc.count} parameters, eval set {sc.eval_set}")
    print(format_fit(sc.fit))
    if sc.fit.num_runs < 4:
        print("note: fewer than 4 ladder runs; the intervals are not meaningful")
    for e in sc.equivalents:
        v = e.value
        ci_s = "" if not v.multiplier_ci else f" [{_num(v.multiplier_ci[0])}, {_num(v.multiplier_ci[1])}]"
        print(f"  {e.name:<32} params {v.params:>14,.0f}  loss {v.loss:.4f}  N_eq {_num(v.N_eq, ',.0f'):>14}"
              f"  multiplier {_num(v.multiplier)}x{ci_s}  {v.flag}")
    return 0


def _num(v, spec=".2f"):
    """A number for the tables; a missing one is "-" (it printed as "inf", a perplexity no run had, when a baseline's
    row was skipped: issue 30 round 5)."""
    if v is None:
        return "-"
    return "inf" if isinstance(v, float) and not math.isfinite(v) else format(v, spec)


def _written_floats(texts: list[str], option: str) -> list[float]:
    """``float`` of each text (ValueError for one that is no number), a UserError naming one a 64-bit float cannot
    hold as typed: ``--sizes 1e-400,...`` was "sizes and losses must be positive" of the 0.0 it reads as (issue 30
    round 26, P30's kind; ``float_text``)."""
    from ..errors import UserError
    from ..float_text import FLOAT_SIZES, float_lost

    values = [float(text) for text in texts]
    for text, value in zip(texts, values):
        if (lost := float_lost(text, value)) is not None:
            raise UserError(f"{option}: {text.strip()!r} {lost}; {FLOAT_SIZES}")
    return values


def _fit(args) -> int:
    from ..errors import UserError
    from ..experiments.method.scaling import dense_equivalent, fit_power_law, format_fit

    try:
        N, L = _written_floats(args.sizes.split(","), "--sizes"), _written_floats(args.losses.split(","), "--losses")
    except ValueError:
        raise UserError("--sizes and --losses take comma-separated numbers") from None
    fit = fit_power_law(N, L, num_bootstrap=args.bootstrap, ci=args.ci, seed=args.seed)
    eqs = []
    for pair in (args.invert.split(",") if args.invert else []):
        try:
            loss, params = _written_floats(pair.split(":"), f"--invert {pair!r}")
        except ValueError:
            raise UserError(f"--invert takes LOSS:PARAMS pairs, got {pair!r}") from None
        # 1e400 params: "inf params" (B48); a loss <= 0 was placed on the fit, which --losses refuses (round 16, C162)
        if not (math.isfinite(loss) and loss > 0 and math.isfinite(params) and params > 0):
            raise UserError(f"--invert takes a finite LOSS > 0 and a finite PARAMS > 0 (a loss is positive, as in "
                            f"--losses), got {pair!r}")
        eqs.append(dense_equivalent(fit, loss, params, seed=args.seed))
    if args.json:
        _dump({"fit": fit, "equivalents": eqs})
        return 0
    print(format_fit(fit))
    for e in eqs:
        ci = e.as_dict()["multiplier_ci"]  # as the JSON has it: finite values, None for infinity
        print(f"  loss {e.loss:.4f} with {e.params:,.0f} params: N_eq {_num(e.N_eq, ',.0f')}, "
              f"multiplier {_num(e.multiplier)}x {ci or ''} {e.flag}")
    return 0


def _compare(args) -> int:
    from ..experiments.report.analysis import comparison_table
    from ..experiments.machinery.results import COMPARISONS

    rows = _rows(args)
    tables = {regime: comparison_table(rows, regime, base, args.eval_set) for regime, base in COMPARISONS}
    if args.json:
        _dump(tables)
        return 0
    if not any(tables.values()):  # a folder of one arm printed nothing at all, exit 0 (round 20, K205)
        wanted = ", ".join(f"{regime}: a model beside {base}" for regime, base in COMPARISONS)
        print(f"no pairs to compare in {args.results}: no size and seed has a row of a model and of its baseline "
              f"({wanted}); sweep the missing arm (leviathan sweep --grid GRID --out FOLDER)")
        return 0
    for regime, entries in tables.items():
        if not entries:
            continue
        print(f"{regime}:")
        for e in entries:
            red = "-" if e.reduction is None else f"{100 * e.reduction:+.1f}%"
            print(f"  size {e.size:<6} seed {e.seed}  {e.variant:<14} ppl {_num(e.ppl, '.3f'):>9}  "
                  f"{e.baseline} ppl {_num(e.baseline_ppl, '.3f'):>9}  reduction {red}")
    return 0


def _frequency(args) -> int:
    if args.runs:
        return _frequency_runs(args)
    given = [flag for flag, value in (("--data", args.data), ("--seq-len", args.seq_len),
                                      ("--max-tokens", args.max_tokens)) if value is not None]
    if given:  # round 10 (Q154): `--data RUN_FOLDER` without --runs was ignored without a word
        from ..errors import UserError

        raise UserError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} read only with --runs (they say "
                        f"how to evaluate checkpoints now); without --runs the rows' own bucket losses are shown: "
                        f"drop {'it' if len(given) == 1 else 'them'}, or pass --runs RUN_DIR ...")
    from ..experiments.method.frequency import frequency_from_results

    res = frequency_from_results(_rows(args), args.regime, args.baseline, args.eval_set)
    if args.json:
        _dump(res)
        return 0
    if not res:
        print(f"no {args.regime} pairs with per-bucket losses on {args.eval_set!r}")
        return 0
    for f in res:
        scheme = f.scheme
        print(f"{f.regime} size {f.size} seed {f.seed}: {f.variant} vs {f.baseline} "
              f"({scheme.method or '?'} buckets, rarest first)")
        for j, red in enumerate(f.reduction):
            lab = f"{scheme.ranges[j][0]:,}-{scheme.ranges[j][1]:,}" if scheme.ranges else str(j)
            print(f"  {j}  train count {lab:>20}  targets {f.count[j]:>8,}  "
                  f"ppl {_num(_exp(f.baseline_loss[j]), '.2f'):>10} -> {_num(_exp(f.model_loss[j]), '.2f'):>10}"
                  f"  reduction {'-' if red is None else f'{100 * red:+.1f}%'}")
    return 0


def _exp(v):
    from ..eval.frequency import ppl_of

    return None if v is None else ppl_of(v)  # inf past float range (round 14, B295)


def _check_window_cap(args, run_dir) -> None:
    """UserError when --max-tokens is fewer than one evaluation window of ``run_dir`` (--seq-len, else the run's
    data.seq_len, + 1 tokens), as `eval` refuses it (``eval.window_floor.short_cap_problem``; issue 30 round 29, W692's kind,
    found beside it): the buckets were filled from a few targets of each sequence's first positions, no word."""
    from .. import checkpoint as ckpt
    from ..errors import UserError
    from ..eval.window_floor import short_cap_problem

    if args.max_tokens is None:
        return
    given = args.seq_len is not None
    seq_len = args.seq_len if given else ckpt.load_run_config(ckpt.find_checkpoint(run_dir)).data.seq_len
    short = short_cap_problem("--max-tokens", args.max_tokens, seq_len,
                              "--seq-len" if given else f"data.seq_len of run {str(run_dir)!r}")
    if short is not None:
        raise UserError(short)


def _frequency_runs(args) -> int:
    """Evaluate checkpoints now: token losses on a split of the data dir, bucketed by train_freq.npy."""
    import sys
    from pathlib import Path

    from .. import checkpoint as ckpt
    from ..errors import UserError
    from ..eval.stream import EvalStream
    from ..eval.frequency import format_table, make_buckets
    from ..eval.score import evaluate_checkpoint
    from ..data.companions import load_train_freq

    if not args.data:
        raise UserError("--runs needs --data (the prepared data dir the models were trained on)")
    freq = load_train_freq(args.data)  # names a missing file, or a pipe in its place (round 23, U394's kind)
    buckets = make_buckets(freq, args.buckets, args.method, "--buckets")
    stream = EvalStream.from_split(args.data, args.split, args.max_tokens)
    for run_dir in args.runs:  # as eval does: data of another tokenizer was scored without a word (round 6)
        ckpt.check_tokenizer(ckpt.find_checkpoint(run_dir), args.data, "analyze its frequency buckets")
        _check_window_cap(args, run_dir)
    results = []
    for run_dir in args.runs:
        evals, bucketed = evaluate_checkpoint(run_dir, {args.split: stream}, seq_len=args.seq_len,
                                              batch_size=args.batch_size, buckets=buckets, freq=freq)
        ev = evals[args.split]
        if ev.targets_outside:  # a restricted softmax: say what the buckets leave out
            print(f"note: {run_dir}: {ev.targets_outside:,} targets ({ev.share_outside:.1%}) are outside the "
                  f"ids its restricted softmax predicts (data.softmax=corpus) and are left out of its buckets",
                  file=sys.stderr)
        results.append(bucketed[args.split])
    names = [Path(run_dir).name for run_dir in args.runs]
    if args.json:
        _dump({"names": names, "buckets": buckets.as_dict(), "results": [r.as_dict() for r in results]})
        return 0
    print(format_table(names, results, buckets.labels()))
    return 0


def _check_same_tokenizer(model: str, reference: str) -> None:
    """UserError when the run folders ``model`` and ``reference`` were trained with different tokenizers (their newest
    steps' tokenizer.json, as state.json fingerprints it): their losses are over different ids, so "reaches the
    reference's loss after N tokens" compared nothing, exit 0 (issue 30 round 8, I13). A metrics.jsonl given alone, or
    a run without a checkpoint, is not checked."""
    import json
    from pathlib import Path

    from ..checkpoint.layout import latest_checkpoint
    from ..errors import UserError

    digests = []
    for run in (model, reference):
        step = latest_checkpoint(run) if Path(run).is_dir() else None
        try:
            digests.append(json_text.read_file(step / "state.json")["files"]["tokenizer.json"] if step else None)
        except (OSError, ValueError, KeyError, TypeError):
            digests.append(None)
    if None not in digests and digests[0] != digests[1]:
        raise UserError(f"--model {model} and --reference {reference} were trained with different tokenizers (their "
                        f"checkpoints' tokenizer.json differ): their validation losses are over different ids and "
                        f"cannot be compared; compare runs trained on the same prepared data")


def _efficiency(args) -> int:
    from ..experiments.method.efficiency import efficiency_from_results, format_efficiency, sample_efficiency, val_curve
    from ..train.metrics import read_metric_rows

    if args.model or args.reference:
        from ..errors import UserError

        if not (args.model and args.reference):
            raise UserError("pass both --model and --reference")
        _check_same_tokenizer(args.model, args.reference)
        res = sample_efficiency(val_curve(read_metric_rows(args.model, given=True), args.split),
                                val_curve(read_metric_rows(args.reference, given=True), args.split))
        if args.json:
            _dump(res)
        else:
            print(format_efficiency(args.model, args.reference, res))
        return 0
    res = efficiency_from_results(_rows(args, one_evaluation=False), args.regime, None, args.split)
    if args.json:
        _dump(res)
        return 0
    if not res:  # round 15 (B85, B89): no line at all, exit 0
        print(f"no {args.regime} pairs in {args.results}: no run of regime {args.regime!r} there has its "
              f"baseline's row to compare with")
        return 0
    for e in res:
        if e.result is None:
            print(f"{e.name} vs {e.baseline_name}: {e.error}")
        else:
            print(format_efficiency(e.name, e.baseline_name, e.result))
    return 0


def _throughput(args) -> int:
    from ..experiments.method.efficiency import throughput_table

    res = throughput_table(_rows(args, one_evaluation=False), allow_mixed_hardware=args.allow_mixed_hardware)
    if args.json:
        _dump(res)
        return 0
    for t in res:
        if t.slowdown is None:
            slow = ""
        elif t.slowdown >= 0:
            slow = f"  {100 * t.slowdown:.0f}% slower than {t.baseline}"
        else:
            slow = f"  {-100 * t.slowdown:.0f}% faster than {t.baseline}"
        print(f"{t.regime:<14} {str(t.size):<6} s{t.seed} {t.variant:<14} "
              f"{_num(t.tokens_per_s, ',.0f'):>10} tok/s{slow}{'  ' + t.note if t.note else ''}")
    return 0


def _embeddings(args) -> int:
    """One run: its record (printed, and written with --out); two: their neighbour agreement; --sweep: every run's."""
    import sys

    from ..errors import UserError
    from ..experiments.machinery import embedding_files as files
    from ..experiments.method.embeddings import compare_records
    from .. import stop_signals

    # buckets left open (None): 5 by mass, or with --sweep the grid's
    options = files.RecordOptions(args.buckets, args.method, args.probes, args.top_k)
    if args.sweep:
        if args.paths or args.out:
            raise UserError("--sweep writes every finished run's record; pass no run folders or --out with it")
        written = files.write_sweep_records(args.sweep, args.dest, args.data, options, redo=args.redo)
        print(f"{len(written)} record(s) written")
        return 0
    if args.dest or args.redo:
        raise UserError("--dest and --redo go with --sweep DIR; for one run, --out FILE says where its record goes")
    if len(args.paths) not in (1, 2):
        raise UserError(f"pass one run folder (its record) or two run folders / records (their agreement), got "
                        f"{len(args.paths)}; or --sweep DIR")
    if len(args.paths) == 2 and args.out:
        raise UserError("--out writes one run's record; with two paths the pair's agreement is printed (--json)")
    if args.out:
        files.check_record_target(args.out)  # before the analysis: never over a file it did not write
        stop_signals.final_output(args.out)  # a stop once it is written says the record is complete (round 23, T13)
    records = [files.record_or_run(p, args.data, options) for p in args.paths]
    if len(records) == 1:
        record = records[0]
        if args.out:
            print(f"wrote {files.write_record(args.out, record)}", file=sys.stderr)
        if args.json:
            _dump(record)
        else:
            print("\n".join(_render_record(record)))
        return 0
    pair = compare_records(*records)
    if args.json:
        _dump(pair)
        return 0
    for record in records:
        print("\n".join(_render_record(record)) + "\n")
    print("\n".join(_render_pair(pair)))
    return 0


def _render_record(record) -> list[str]:
    """A record as text: per group, init -> final of each statistic."""
    from ..tables import arrow, text_table

    unfinished = "" if record.step >= record.total_steps else f" (NOT finished: {record.total_steps} steps planned)"
    lines = [f"{record.run} ({record.variant}, seed {record.seed}): init -> step {record.step}{unfinished}, "
             f"V {record.vocab_size:,} x D {record.hidden_size}; {record.num_buckets} {record.bucket_method} buckets "
             f"of the ids seen in training (rarest first); cosine: exact mean over all pairs"]
    init, final = record.stats("init"), record.stats("final")
    rows = [[g.group, f"{g.num_ids:,}", f"{g.min_count:,}-{g.max_count:,}",
             arrow(init[g.group].rms, g.rms, ".4f"), arrow(init[g.group].shared_share, g.shared_share, ".4f"),
             arrow(init[g.group].effective_rank, g.effective_rank, ".2f"),
             arrow(init[g.group].mean_cosine, g.mean_cosine, "+.4f")] for g in record.final]
    lines.append(text_table(["group", "ids", "train count", "RMS", "shared share", "effective rank", "mean cosine"],
                            rows))
    return lines


def _render_pair(pair) -> list[str]:
    """A pair's neighbour agreement as text, per group of probes."""
    from ..tables import cell, text_table

    lines = [f"neighbour agreement |A & B| / {pair.top_k} of the top-{pair.top_k} cosine neighbours among the ids "
             f"seen in training: {pair.run_a} ({pair.variant_a}, seed {pair.seed_a}) vs {pair.run_b} "
             f"({pair.variant_b}, seed {pair.seed_b}); chance about {pair.chance:.5f}"]
    if pair.seed_a != pair.seed_b:
        lines.append("note: different seeds (arms of one seed share their data order, and dense arms their init)")
    lines.append(text_table(["probes", "n", "init", "final"],
                            [[g.group, g.num_probes, cell(g.init, ".3f"), cell(g.final, ".3f")]
                             for g in pair.groups]))
    return lines
