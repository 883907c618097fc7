"""``leviathan report RESULTS --out DIR``: Markdown report with figures from a sweep's results.

    leviathan report runs/cpu --out runs/cpu/report        # RESULTS: a sweep dir or its results.jsonl
    leviathan report runs/cpu/results.jsonl --eval-set wikitext2 --bootstrap 2000
"""

from __future__ import annotations


def add_arguments(parser) -> None:
    parser.add_argument("results", help="sweep output dir or results.jsonl")
    parser.add_argument("--out", default=None, help="report dir (default: <sweep dir>/report)")
    parser.add_argument("--eval-set", default="val", help="eval set whose losses the tables use (default: val)")
    parser.add_argument("--ladder", default=None, help="dense variant of the scaling fit (default: the grid's)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap draws for the scaling intervals")
    parser.add_argument("--ci", type=float, default=0.95, help="coverage of the intervals")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def run(args) -> int:
    from pathlib import Path

    from ..experiments.report import write_report

    src = Path(args.results)
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent) / "report"
    path = write_report(src, out, eval_set=args.eval_set, num_bootstrap=args.bootstrap, ci=args.ci, seed=args.seed,
                        ladder=args.ladder)
    print(f"wrote {path} (+ figures and analysis.json in {out})")
    return 0
