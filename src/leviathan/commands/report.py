"""``leviathan report RESULTS --out DIR``: Markdown report with figures from a sweep's results.

    leviathan report runs/cpu --out runs/cpu/report        # RESULTS: a sweep dir or its results.jsonl
    leviathan report runs/cpu/results.jsonl --eval-set wikitext2 --bootstrap 2000
    leviathan report runs/ablate-bpe8k runs/ablate-bpe32k --ablation --out results/ablations
    leviathan report results/o200k --lr-sweep results/o200k/o200k-lr --out results/o200k   # + the lr pre-sweep
    leviathan report results/o200k-fair --fair-shot results/o200k --out results/o200k-fair   # the plan's rules
    leviathan report runs/cpu/shard-1 runs/cpu/shard-2 --out runs/cpu/report   # the shards of one grid, merged
    leviathan report runs/paper-width/main/shard-* --lr-sweep runs/paper-width/presweep/shard-1 ... --out R
        # a plan's main grid and its pre-sweep, both sharded (``leviathan sweep --presweep``)
"""

from __future__ import annotations

from ..model.config import EMBEDDING_KINDS
from .values import add_bootstrap_option, eval_set_name, open_fraction, seed


def add_arguments(parser) -> None:
    parser.add_argument("results", nargs="+", help="sweep output dir or results.jsonl; several: the shards of one grid "
                                                   "(merged), or with --ablation the arms' grids")
    parser.add_argument("--ablation", action="store_true",
                        help="ablation report: each leviathan run vs the dense_tied run of its backbone, over training")
    parser.add_argument("--out", default=None, help="report dir (default: <sweep dir>/report)")
    parser.add_argument("--eval-set", default="val", type=eval_set_name, help="eval set whose losses the tables use (default: val)")
    parser.add_argument("--ladder", default=None, choices=EMBEDDING_KINDS,  # "nope" was taken (round 14, B182)
                        help="dense variant of the scaling fit (default: the grid's)")
    add_bootstrap_option(parser)
    parser.add_argument("--ci", type=open_fraction, default=0.95, help="coverage of the intervals")
    parser.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    parser.add_argument("--lr-sweep", action="append", default=None, metavar="DIR",
                        help="the learning-rate pre-sweep of this grid (a sweep dir; repeat for its shards): its "
                             "table and each arm's pick")
    parser.add_argument("--fair-shot", default=None, metavar="DIR",
                        help="the committed round a fair-shot round re-examines (results dir): the reproduction "
                             "check, screening, pick, control and primary comparison (results/o200k-fair/PLAN.md)")


def run(args) -> int:
    from pathlib import Path

    from ..errors import UserError
    from ..experiments.report import write_report

    if args.ablation:
        from ..experiments.ablation import write_ablation_report

        _check_ablation_options(args)

        out = Path(args.out) if args.out else Path(args.results[0]) / "ablations"
        command = "leviathan report " + " ".join(args.results) + f" --ablation --out {out}"
        print(f"wrote {write_ablation_report(args.results, out, command)} (+ figures and ablations.json)")
        return 0
    src = Path(args.results[0])
    if len(args.results) > 1 and not args.out:
        raise UserError(f"{len(args.results)} sweep folders are merged into one report; say where with --out DIR")
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent) / "report"
    path = write_report(list(args.results), out, eval_set=args.eval_set, num_bootstrap=args.bootstrap, ci=args.ci,
                        seed=args.seed, ladder=args.ladder, lr_sweep=args.lr_sweep,
                        fair_shot=args.fair_shot)
    print(f"wrote {path} (+ figures and analysis.json in {out})")
    return 0


# options of the sweep report that mean nothing to --ablation, with their defaults (given otherwise: refused)
SWEEP_ONLY = {"lr_sweep": None, "fair_shot": None, "ladder": None, "bootstrap": 1000, "ci": 0.95, "seed": 0,
              "eval_set": "val"}


def _check_ablation_options(args) -> None:
    """UserError naming the sweep report's options given with --ablation: ``--lr-sweep``, ``--ladder``,
    ``--bootstrap`` and ``--eval-set nope`` were accepted and ignored, the README written as if not given (issue 30
    round 15, B114, B115, B116). The ablation report has no pre-sweep section, no scaling fit and no intervals, and
    compares every eval set its arms hold."""
    from ..errors import UserError

    given = [f"--{key.replace('_', '-')}" for key, default in SWEEP_ONLY.items() if getattr(args, key) != default]
    if given:
        raise UserError(f"{', '.join(given)} {'is an option' if len(given) == 1 else 'are options'} of the sweep "
                        f"report, which --ablation does not use (it has no pre-sweep, scaling fit or intervals, and "
                        f"tables every eval set its arms hold); leave {'it' if len(given) == 1 else 'them'} out, or "
                        f"drop --ablation")
