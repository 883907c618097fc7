"""``leviathan sweep``: run an experiment grid (iso-body, isoparametric, dense ladder), resumable.

    leviathan sweep --grid cpu --list                       # the runs and their parameter groups
    leviathan sweep --grid cpu --out runs/cpu               # train + evaluate; rerun the same line to resume
    leviathan sweep --grid paper --out runs/paper --data-dir data/pile-o200k
    leviathan sweep --grid paper --commands                 # one `leviathan train` line per run, for a scheduler
    leviathan sweep --grid cpu --only 'm-*' --max-runs 2    # a subset

``--grid NAME`` reads ./configs/experiments/NAME.yaml if present, else the grid shipped in the package
(leviathan/configs/experiments: cpu, paper, smoke, ablate-*); or pass a path. Results:
OUT/results.jsonl, one row per finished run; ``leviathan analyze`` and ``leviathan report`` read it.
"""

from __future__ import annotations

import json

from .values import positive_int, seed_list


def add_arguments(parser) -> None:
    parser.add_argument("--grid", required=True, help="grid name (cpu, paper, ...) or path to a grid YAML")
    parser.add_argument("--out", default=None, help="sweep output dir (default: runs/<grid name>)")
    parser.add_argument("--data-dir", default=None, help="prepared data dir (overrides the grid's data.dir)")
    parser.add_argument("--data-root", default=None,
                        help="folder that relative eval-text paths resolve against (default: $LEVIATHAN_DATA)")
    parser.add_argument("--seeds", type=seed_list, default=None, help="comma-separated model-init seeds (overrides the grid's)")
    parser.add_argument("--only", action="append", default=None, metavar="PATTERN",
                        help="run only runs whose name matches this glob (repeatable)")
    parser.add_argument("--regime", action="append", default=None,
                        choices=["iso_body", "isoparametric", "scaling", "variants"],
                        help="run only runs of this regime (repeatable)")
    parser.add_argument("--max-runs", type=positive_int, default=None, help="stop after this many runs (resume later)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="runs trained at once, one process with one torch thread each (2 on a 2-core CPU)")
    parser.add_argument("--order", choices=["grid", "seed"], default="grid",
                        help="grid: runs as the grid lists them; seed: every seed-0 run first, then seed 1, ... "
                             "(each comparison gets a first pair early, its interval later)")
    parser.add_argument("--skip-eval", action="store_true", help="train only; rows then hold training summaries")
    parser.add_argument("--shard", default=None, metavar="I/N",
                        help="run only the I-th of N disjoint parts of the selected runs (one task of a cluster job "
                             "array, each with its own --out; `leviathan report OUT1 OUT2 ...` merges them)")
    parser.add_argument("--list", action="store_true", help="print the expanded runs and exit")
    parser.add_argument("--commands", action="store_true", help="print one `leviathan train` line per run and exit")
    parser.add_argument("--json", action="store_true", help="with --list: print the expanded grid as JSON")
    parser.add_argument("overrides", nargs="*", help="KEY=VALUE overrides applied to every run's config")


def run(args) -> int:
    from ..experiments.grid import format_runs, load_grid
    from ..experiments.shards import parse_shard
    from ..experiments.sweep import grid_snapshot, run_sweep, select_runs, train_commands

    from ..config import check_repeated_overrides

    check_repeated_overrides(args.overrides)
    grid = load_grid(args.grid, data_dir=args.data_dir, seeds=args.seeds, overrides=args.overrides)
    out = args.out or f"runs/{grid.name}"
    if args.list:
        if args.json:
            print(json.dumps(grid_snapshot(grid), indent=2))
        else:
            print(format_runs(grid))
        return 0
    shard = parse_shard(args.shard) if args.shard else None
    if args.commands:
        for line in train_commands(grid, out, select_runs(grid, args.only, args.regime, args.order, shard)):
            print(line)
        return 0
    rows = run_sweep(grid, out, only=args.only, regimes=args.regime, max_runs=args.max_runs,
                     root=args.data_root, skip_eval=args.skip_eval, jobs=args.jobs,
                     order=args.order, shard=shard)
    print(f"{len(rows)} new rows in {out}/results.jsonl; next: leviathan report {out} --out {out}/report")
    return 0
