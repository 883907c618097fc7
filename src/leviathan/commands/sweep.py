"""``leviathan sweep``: run an experiment grid (iso-body, isoparametric, dense ladder), resumable.

    leviathan sweep --grid cpu --list                       # the runs and their parameter groups
    leviathan sweep --grid cpu --out runs/cpu               # train + evaluate; rerun the same line to resume
    leviathan sweep --grid paper --out runs/paper --data-dir data/pile-o200k
    leviathan sweep --grid paper --commands                 # one `leviathan train` line per run, for a scheduler
    leviathan sweep --grid cpu --only 'm-*' --max-runs 2    # a subset
    leviathan sweep --grids                                 # the grids there are, a line each
    leviathan sweep --grid cpu-bpe32k --shard 1/2 --threads 1 --out runs/s1 &   # two shards sharing 2 cores
    leviathan sweep --grid cpu-bpe32k --shard 2/2 --threads 1 --out runs/s2
    leviathan sweep --grid o200k-width --presweep o200k-width-lr --reuse results/o200k --out runs/o200k-width
        # the lr pre-sweep, its edge steps, then the main grid at each arm's pick (experiments.machinery.presweep);
        # --reuse: rows of another round that are exactly one of this grid's runs (experiments.machinery.reuse)

``--grid`` takes a name (``leviathan.configs``' lookup; ``smoke`` is the small pipeline check) or a path.
``--list`` and ``--commands`` show the runs the same selection (``--only``, ``--regime``, ``--order``, ``--shard``)
would train. Threads: one process uses torch's default (every core) unless ``--threads N``; with ``--jobs J`` each
worker gets ``--threads`` (default 1). Sweeps or shards that share a machine should split its cores between them.
"""

from __future__ import annotations

import json

from .values import data_root_folder, positive_int, seed_list, thread_count


def add_arguments(parser) -> None:
    parser.add_argument("--grid", default=None, help="grid name (cpu, paper, ...; see --grids) or path to a grid YAML")
    parser.add_argument("--grids", action="store_true", help="list the grids there are (packaged and ./configs), a "
                                                           "line each, and exit")
    parser.add_argument("--out", default=None, help="sweep output dir (default: runs/<grid name>)")
    parser.add_argument("--data-dir", default=None, help="prepared data dir (overrides the grid's data.dir)")
    parser.add_argument("--data-root", default=None, type=data_root_folder,
                        help="folder that relative eval-text paths resolve against (default: $LEVIATHAN_DATA)")
    parser.add_argument("--seeds", type=seed_list, default=None,
                        help="comma-separated model-init seeds (overrides the grid's; refused when it leaves out runs "
                        "whose rows --out holds: the folder holds one grid)")
    parser.add_argument("--only", action="append", default=None, metavar="PATTERN",
                        help="run only runs whose name matches this glob (repeatable)")
    parser.add_argument("--regime", action="append", default=None,
                        choices=["iso_body", "isoparametric", "scaling", "variants"],
                        help="run only runs of this regime (repeatable)")
    parser.add_argument("--max-runs", type=positive_int, default=None, help="stop after this many runs (resume later)")
    parser.add_argument("--jobs", type=positive_int, default=1,
                        help="runs trained at once, one process with one torch thread each (2 on a 2-core CPU)")
    parser.add_argument("--threads", type=thread_count, default=None,
                        help="torch threads per run (default: every core for one run at a time, 1 per run with "
                             "--jobs); give each of several sweeps or shards on one machine its share")
    parser.add_argument("--order", choices=["grid", "seed"], default="grid",
                        help="grid: runs as the grid lists them; seed: every seed-0 run first, then seed 1, ... "
                             "(each comparison gets a first pair early, its interval later)")
    parser.add_argument("--skip-eval", action="store_true", help="train only; rows then hold training summaries")
    parser.add_argument("--shard", default=None, metavar="I/N",
                        help="run only the I-th of N disjoint parts of the selected runs (one task of a cluster job "
                             "array, each with its own --out; `leviathan report OUT1 OUT2 ...` merges them)")
    parser.add_argument("--list", action="store_true",
                        help="print the runs this selection would train (--only, --regime, --order, --shard) and exit")
    parser.add_argument("--presweep", default=None, metavar="GRID",
                        help="the grid's lr pre-sweep (a grid): run whichever stage is due (base lrs, edge steps, "
                             "then this grid with each arm at its pick) into OUT/presweep and OUT/main; with "
                             "--shard one stage per command (experiments.machinery.presweep)")
    parser.add_argument("--reuse", action="append", default=None, metavar="DIR",
                        help="a results folder of another round: its rows that trained exactly one of this grid's "
                             "runs (settings, data, evaluation) stand for that run (repeatable; experiments.machinery.reuse)")
    parser.add_argument("--commands", action="store_true", help="print one `leviathan train` line per run and exit")
    parser.add_argument("--json", action="store_true", help="with --list: print the expanded grid as JSON")
    parser.add_argument("overrides", nargs="*", help="KEY=VALUE overrides applied to every run's config")


def run(args) -> int:
    from ..errors import UserError
    from ..stop_signals import final_output
    from ..experiments.machinery.grid import format_grids, format_runs, load_grid
    from ..experiments.machinery.shards import parse_shard
    from ..experiments.machinery.sweep import (build_run_config, empty_selection, grid_snapshot, nothing_selected,
                                               run_sweep, select_runs, train_commands)

    from ..config import check_repeated_overrides

    if args.grids:
        print(format_grids())
        return 0
    if not args.grid:
        raise UserError("no grid given; pass --grid NAME (or a grid YAML path); `leviathan sweep --grids` lists them")
    check_repeated_overrides(args.overrides)
    grid = load_grid(args.grid, data_dir=args.data_dir, seeds=args.seeds, overrides=args.overrides)
    if args.reuse:  # before --out is made (round 17, D298, D299, D303)
        from ..experiments.machinery.reuse import check_reuse_sources

        check_reuse_sources(args.reuse)
    out = args.out or f"runs/{grid.name}"
    presweep = None if args.presweep is None else load_grid(args.presweep, data_dir=args.data_dir,
                                                             overrides=args.overrides)
    shard = parse_shard(args.shard) if args.shard else None
    selected = select_runs(grid, args.only, args.regime, args.order, shard)
    if not selected and presweep is not None:  # its stages shard their own runs: this grid's selection must hold some
        raise UserError(nothing_selected(grid, args.only))
    if not selected:  # --list printed an empty table, exit 0, where the sweep refuses (round 16, C218); a shard past
        print(empty_selection(grid, args.only, args.regime, shard))  # the runs has nothing to do (N285, N286)
        return 0
    if args.list or args.commands:  # what is shown must be trainable: `optim.lr=1e400` was printed as a command
        shown = [(grid, spec) for spec in selected] + [(presweep, spec) for spec in (presweep.runs if presweep else [])]
        for of_grid, spec in shown:
            _shown_config(of_grid, spec, build_run_config)
    if args.list:
        if presweep is not None:  # the plan's pre-sweep first, whole; then this grid's selection
            print(json.dumps(grid_snapshot(presweep), indent=2) if args.json else format_runs(presweep))
        if args.json:
            snapshot = grid_snapshot(grid)
            names = {r.name for r in selected}
            snapshot["runs"] = [r for r in snapshot["runs"] if r["name"] in names]
            snapshot["selection"] = _selection(args)
            print(json.dumps(snapshot, indent=2))
        else:
            print(format_runs(grid, selected, _selection(args)))
        return 0
    if presweep is not None:
        return _run_plan(args, grid, presweep, out, shard)
    if args.commands:
        for line in train_commands(grid, out, selected, threads=args.threads):
            print(line)
        return 0
    if args.reuse:
        _adopt(args, grid, selected, out)
    final_output(out)  # once every selected run has its row, a stop says the sweep is complete (round 23, T33)
    rows = run_sweep(grid, out, _options(args, shard))
    print(f"{len(rows)} new rows in {out}/results.jsonl; next: leviathan report {out} --out {out}/report")
    return 0


def _shown_config(grid, spec, build) -> None:
    """Build the run config of a run --list or --commands shows; a base no run can take is named with the grid's file
    and its base (issue 30 round 21, P185, P200: "unknown key 'unknown' in RunConfig" named neither)."""
    from ..errors import ConfigError
    from ..experiments.machinery.grid import base_problem

    try:
        build(grid, spec)
    except ConfigError as e:
        raise ConfigError(base_problem(grid, str(e)) or str(e)) from None


def _options(args, shard: tuple[int, int] | None):
    """The sweep's options as the command line gives them (``experiments.machinery.sweep.SweepOptions``)."""
    from ..experiments.machinery.sweep import SweepOptions

    return SweepOptions(only=args.only, regimes=args.regime, order=args.order, shard=shard, max_runs=args.max_runs,
                        root=args.data_root, skip_eval=args.skip_eval, jobs=args.jobs, threads=args.threads)


def _selection(args) -> str | None:
    """How the listed runs were selected, for --list's header; None for the whole grid in its order."""
    parts = [f"--shard {args.shard}"] if args.shard else []
    parts += [f"--only {p}" for p in args.only or []] + [f"--regime {r}" for r in args.regime or []]
    parts += [f"--order {args.order}"] if args.order != "grid" else []
    return " ".join(parts) or None


def _adopt(args, grid, runs, out) -> None:
    """``--reuse``: append the rows of other rounds that are exactly one of ``runs`` (``experiments.machinery.reuse``)."""
    from pathlib import Path

    from ..experiments.machinery.provenance import data_provenance
    from ..experiments.machinery.reuse import adopt_rows
    from ..experiments.machinery.sweep import SWEEP_FILES, build_run_config, sweep_lock
    from ..ownership import mark

    Path(out).mkdir(parents=True, exist_ok=True)
    with sweep_lock(Path(out)):  # the rows it appends are the sweep's: the same lock and claim as run_sweep's
        mark(Path(out), "sweep", SWEEP_FILES)
        adopt_rows(grid, runs, args.reuse, out, data_provenance(grid.data_dir), build_run_config,
                   skip_eval=args.skip_eval)


def _run_plan(args, grid, presweep, out, shard) -> int:
    """``--presweep``: the stage of the plan that is due (``experiments.machinery.presweep.run_plan``)."""
    import dataclasses

    from ..errors import UserError
    from ..experiments.machinery.presweep import run_plan
    from ..experiments.machinery.sweep import run_sweep

    for flag, value in (("--only", args.only), ("--regime", args.regime), ("--commands", args.commands),
                        ("--skip-eval", args.skip_eval)):
        if value:
            raise UserError(f"{flag} does not go with --presweep: the plan runs whole stages and picks lrs from "
                            f"evaluated rows; run the grids one at a time without --presweep for a subset")

    def sweep(g, folder, names):
        if args.reuse and g is not presweep:
            _adopt(args, g, [r for r in g.runs if r.name in set(names)], folder)
        return run_sweep(g, folder, dataclasses.replace(_options(args, None), only=names))

    step = run_plan(grid, presweep, out, sweep=sweep, shard=shard)
    print(f"plan stage {step.stage}: {len(step.trained)} run(s) trained now; {step.next}")
    return 0
