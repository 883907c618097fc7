"""A grid whose learning rates come from its pre-sweep by the committed rule: the stages, which runs each needs,
and one command that does whichever stage is due.

    leviathan sweep --grid o200k-width --presweep o200k-width-lr --out runs/o200k-width --jobs 2
    leviathan sweep --grid paper-width --presweep paper-width-lr --out runs/paper-width --shard $I/$N   # a job array

The rule (results/o200k/PLAN.md): every arm of the pre-sweep grid (a variant at a body, ``lr_sweep.arm_key``: the
size ``d32L6-lr1e-3`` trains the body ``d32L6``) lists its peak lrs as sizes; the smallest and the largest are the
one-step edge extensions, the others the base sweep (at least two). The rows that exist decide the stage:

1. ``base``: every arm at every base lr;
2. ``edge``: an arm whose pick over its base lrs (``lr_sweep.pick``) is its lowest base lr also runs the lower
   extension, at its highest the upper one;
3. ``main``: every run of a pre-swept arm at its arm's pick over the base lrs and the extension it ran (appended
   after the grid's own settings); an arm the pre-sweep does not cover keeps the grid's own lr;
4. ``done``: every main run has a row.

Folders: ``OUT/presweep`` and ``OUT/main``, or with ``--shard I/N`` ``OUT/presweep/shard-I`` and ``OUT/main/shard-I``
(``shards``). The pre-sweep's rows are read from all of them, so each shard sees the same stage and picks, and a
stage's runs are split round robin in the grid's order, so the shards are disjoint and cover it. Without
``--shard`` one command runs every stage in turn; with it, a command runs its part of the stage that is due and
returns, and the same command started again once every shard has finished does the next (README: "The width round
on GPUs"). Footgun: a shard that starts a stage before the others finished the previous one finds nothing of its
own left to do; it says so and exits, it never guesses at picks from partial rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...config import ConfigError
from ...errors import UserError
from .grid import Grid, RunSpec
from ..method.lr_sweep import LrChoice, arm_key, pick, pick_learning_rates
from ..method.records import Record
from .results import RESULTS, ResultRow, read_results
from .shards import merge_sweeps

STAGES = ("base", "edge", "main", "done")


@dataclass
class PresweepArm(Record):
    """One arm of the pre-sweep grid: its base lrs, its extensions and the run of each lr."""

    arm: str  # BODY:VARIANT, or VARIANT for a pre-sweep of one body
    base: list[float]
    lower: float  # the extension below the base lrs
    upper: float  # ... and above
    runs: dict[float, str]  # lr -> run name


@dataclass
class PresweepState(Record):
    """Which stage the rows leave the plan at, and what it needs."""

    stage: str  # base | edge | main
    base_runs: list[str]  # every base run, in the pre-sweep grid's order
    base_missing: list[str]
    edge_runs: list[str] = field(default_factory=list)  # the extensions due (known once the base runs are in)
    edge_missing: list[str] = field(default_factory=list)
    picks: dict[str, LrChoice] = field(default_factory=dict)  # arm -> its choice (stage main)


def run_lr(grid: Grid, spec: RunSpec) -> float:
    """The peak lr a run of ``grid`` trains at: the last ``optim.lr`` of its overrides (base, size, variant)."""
    lrs = [o.split("=", 1)[1] for o in grid.run_overrides(spec) if o.split("=", 1)[0] == "optim.lr"]
    if not lrs:
        raise ConfigError(f"pre-sweep run {spec.name!r} of grid {grid.name!r} sets no optim.lr; give each of its "
                          f"sizes its lr (run: {{optim.lr: ...}})")
    return float(lrs[-1])


def presweep_arms(grid: Grid) -> list[PresweepArm]:
    """The arms of a pre-sweep grid (seed 0 expected: one run per arm and lr), in the grid's order."""
    by_arm: dict[str, dict[float, str]] = {}
    for spec in grid.runs:
        runs = by_arm.setdefault(arm_key(spec.size, spec.variant), {})
        lr = run_lr(grid, spec)
        if lr in runs:
            raise ConfigError(f"pre-sweep grid {grid.name!r} has two runs of arm {arm_key(spec.size, spec.variant)} "
                              f"at lr {lr:g} ({runs[lr]}, {spec.name}); a pre-sweep runs one seed per arm and lr")
        runs[lr] = spec.name
    out = []
    for arm, runs in by_arm.items():
        lrs = sorted(runs)
        if len(lrs) < 4:
            raise ConfigError(f"pre-sweep arm {arm} of grid {grid.name!r} lists {len(lrs)} lrs; it needs its base "
                              f"lrs (two or more) and one step beyond each end (the smallest and the largest)")
        out.append(PresweepArm(arm, lrs[1:-1], lrs[0], lrs[-1], dict(sorted(runs.items()))))
    return out


def presweep_state(grid: Grid, rows: list[ResultRow], eval_set: str = "val") -> PresweepState:
    """The stage the pre-sweep's ``rows`` leave the plan at (module docstring)."""
    arms = presweep_arms(grid)
    have = {r.name: r for r in rows}
    base = [arm.runs[lr] for arm in arms for lr in arm.base]
    order = {spec.name: k for k, spec in enumerate(grid.runs)}
    base.sort(key=order.__getitem__)
    state = PresweepState("base", base, [n for n in base if n not in have])
    if state.base_missing:
        return state
    ran: dict[str, list[str]] = {}
    for arm in arms:
        losses = {lr: have[arm.runs[lr]].loss(eval_set) for lr in arm.base}
        best = pick(losses)
        due = [arm.runs[arm.lower]] if best == arm.base[0] else [arm.runs[arm.upper]] if best == arm.base[-1] else []
        ran[arm.arm] = [arm.runs[lr] for lr in arm.base] + due
        state.edge_runs += due
    state.edge_runs.sort(key=order.__getitem__)
    state.edge_missing = [n for n in state.edge_runs if n not in have]
    if state.edge_missing:
        state.stage = "edge"
        return state
    state.stage = "main"
    state.picks = {arm: choice for names in ran.values()
                   for arm, choice in pick_learning_rates([have[n] for n in names], eval_set).items()}
    undecided = [arm for arm, choice in state.picks.items() if choice.lr is None]
    if undecided:
        raise UserError(f"every pre-sweep run of {', '.join(undecided)} diverged: no lr to pick; the plan reports "
                        f"the arm as diverged (lower its lrs in the pre-sweep grid only under a written deviation)")
    return state


def apply_picks(grid: Grid, picks: dict[str, LrChoice]) -> tuple[Grid, list[str]]:
    """(``grid`` with each pre-swept arm's runs at its pick, the main grid's arms the pre-sweep does not cover).
    A pick whose arm has no run in ``grid`` is an error: the two grids name their bodies differently."""

    def arm(spec: RunSpec) -> str:
        key = f"{spec.size}:{spec.variant}"
        return key if key in picks else spec.variant

    runs = [replace(s, run_overrides=list(s.run_overrides) + [f"optim.lr={picks[arm(s)].lr!r}"])
            if arm(s) in picks else s for s in grid.runs]
    stray = sorted(set(picks) - {arm(s) for s in grid.runs})
    if stray:
        raise UserError(f"pre-sweep arm(s) {', '.join(stray)} have no run in grid {grid.name!r}; a pre-sweep size "
                        f"is the main grid's size plus -lr<value> (d32L6-lr1e-3 for d32L6)")
    uncovered = sorted({f"{s.size}:{s.variant}" for s in grid.runs if arm(s) not in picks})
    return replace(grid, runs=runs), uncovered


def stage_folder(out_dir: str | os.PathLike, stage: str, shard: tuple[int, int] | None) -> Path:
    """``OUT/presweep`` (stages base and edge) or ``OUT/main``, and ``/shard-I`` below it with a shard."""
    folder = Path(out_dir) / ("main" if stage in ("main", "done") else "presweep")
    return folder / f"shard-{shard[0]}" if shard else folder


def stage_folders(out_dir: str | os.PathLike, stage: str) -> list[Path]:
    """Every folder of a stage that holds rows: the unsharded one and every ``shard-*`` below it."""
    top = stage_folder(out_dir, stage, None)
    return [f for f in [top, *sorted(top.glob("shard-*"))] if (f / RESULTS).is_file() and read_results(f / RESULTS)]


def read_stage_rows(out_dir: str | os.PathLike, stage: str) -> list[ResultRow]:
    """The rows of a stage's folders, merged (a run measured differently in two folders is refused)."""
    folders = stage_folders(out_dir, stage)
    return merge_sweeps(folders)[0] if folders else []


@dataclass
class PlanStep(Record):
    """What one command did: the stage it found, the runs it trained now, and what comes next."""

    stage: str
    trained: list[str]
    next: str


def run_plan(main: Grid, presweep: Grid, out_dir: str | os.PathLike, *, sweep: Callable,
             shard: tuple[int, int] | None = None, log: Callable[[str], None] = print) -> PlanStep:
    """Do the stage that is due (every stage in turn without ``shard``; module docstring). ``sweep(grid, folder,
    names)`` trains and evaluates the named runs of ``grid`` into ``folder`` (``sweep.run_sweep`` with the
    command's options) and returns the rows it appended."""
    from ...value_rules import check_callback

    check_callback("run_plan", "log", log)  # a function of one message (round 31, AA281, AA714)
    log = print if log is None else log  # None is the default, as check_callback's line says
    trained: list[str] = []
    while True:
        state = presweep_state(presweep, read_stage_rows(out_dir, "base"))
        if state.stage in ("base", "edge"):
            grid, names = presweep, state.base_runs if state.stage == "base" else state.edge_runs
        else:
            grid, uncovered = apply_picks(main, state.picks)
            names = [r.name for r in grid.runs]
            if uncovered:
                log(f"arms the pre-sweep does not cover keep grid {main.name!r}'s own lr: {', '.join(uncovered)}")
            if all(n in {r.name for r in read_stage_rows(out_dir, "main")} for n in names):
                return PlanStep("done", trained, f"every run of {main.name!r} has a row; next: "
                                + report_command(out_dir))
        folder = stage_folder(out_dir, state.stage, shard)
        mine = [n for k, n in enumerate(names) if shard is None or k % shard[1] == shard[0] - 1]
        done = {r.name for r in read_results(folder / RESULTS)}
        todo = [n for n in mine if n not in done]
        log(f"plan stage {state.stage}: {len(names)} runs, {len(mine)} for this command, {len(todo)} to go")
        if todo:
            trained += [r.name for r in sweep(grid, folder, todo)]
            if any(n not in {r.name for r in read_results(folder / RESULTS)} for n in todo):
                return PlanStep(state.stage, trained, "stopped before its runs were done (run the same command to "
                                                      "resume)")
        if shard is not None:
            return PlanStep(state.stage, trained, f"this shard's part of stage {state.stage} is done; run the same "
                                                  f"command again once every shard has finished it")
        if not todo and state.stage != "main":  # a guard: the rows of the stage's folder say it is done
            raise UserError(f"stage {state.stage} of the plan has its runs done in {folder} yet is still due; "
                            f"its rows are not those of grid {presweep.name!r}: sweep into a new --out")


def report_command(out_dir: str | os.PathLike) -> str:
    """The ``leviathan report`` line of a plan's folders: the main grid's and, with --lr-sweep each, the
    pre-sweep's (every shard's folder named: a shell glob after --lr-sweep would give the flag only the first)."""
    main = " ".join(str(f) for f in stage_folders(out_dir, "main"))
    lr = " ".join(f"--lr-sweep {f}" for f in stage_folders(out_dir, "base"))
    return f"leviathan report {main} {lr} --out {Path(out_dir) / 'report'}"
