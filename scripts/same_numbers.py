"""Do two commits train bit-identically? The check a round runs before mixing rows of two commits.

    python scripts/same_numbers.py 77586a3 76566ea --grid o200k-fair --run d64L6-dense_untied-s0 \
        --run d64L6-leviathan-s0 --steps 32 --data-dir /abs/path/data/gutenberg-o200k

For each commit a temporary ``git worktree`` is made; each named run of the grid is trained there for ``--steps``
optimizer steps (the run's own ``leviathan train`` line from ``sweep --commands`` with its length set to
``max_steps`` of the run's own batch: the schedule then differs from the full run's, but identically for both
commits), one thread, and
every number its metrics.jsonl logs (losses, gradient norms, lr, validation losses; not times or throughput) is
compared for exact equality. Prints one line per run and exits 1 if any number differs.

Same machine only: the o200k-fair round found that the same commit on another machine's CPU gives validation
losses that differ in the 7th digit (results/o200k-fair/PLAN.md, the reproduction check), so this compares code,
not hardware.

Held to the verbs' rules (issue 30 round 24, V32, V33): a refusal is one line ``error: ...``, exit 2, before any
worktree is made: --steps below 1 or below a run's warmup, an option given twice (a --run too), a --data-dir that is no prepared data, a
commit git does not know; a git command that fails is one line with what git said. The repository is the script's own
checkout, wherever it is typed from (a relative --data-dir is taken from the folder it is typed in).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from leviathan.commands.values import positive_int
from leviathan.empty_paths import refuse_empty_path
from leviathan.errors import UserError, not_a_file
from leviathan.once_options import once_options

COMMAND = "python scripts/same_numbers.py"
TIMING_KEYS = {"time_s", "tokens_per_s", "elapsed_s", "wall_time_s", "step_time_s"}
IDENTITY_KEYS = {"run_id"}  # a fresh id per run (leviathan.run_identity): two runs never share it


def numbers(metrics: Path) -> list[dict]:
    """metrics.jsonl lines without their timing and identity fields: every line carries its run's random ``run_id``,
    so one commit trained twice was "DIFFERENT" and the check could never answer "identical" (issue 30 round 25,
    X37)."""
    rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    return [{k: v for k, v in r.items() if k not in TIMING_KEYS | IDENTITY_KEYS} for r in rows]


def cut_to(argv: list[str], steps: int) -> list[str]:
    """A run's ``leviathan train`` settings with its length replaced by ``steps`` optimizer steps of its own batch: a
    grid whose base sets ``max_steps`` kept it beside an added ``max_tokens``, which train refuses (round 25, X34), and
    ``max_tokens`` of a --batch-tokens other than the run's ran another number of steps than the line said (X38)."""
    length = ("max_tokens=", "max_steps=")
    return [a for a in argv if not a.startswith(length)] + [f"max_steps={steps}"]


def train_line(worktree: Path, grid: str, run: str, steps: int, data_dir: str) -> tuple[str, list[str]]:
    """The run's name and its ``leviathan train`` argv from the grid at this worktree, shortened to ``steps`` steps
    (its --run-dir left for the caller to add). ``run`` may be a pattern, as ``sweep --only`` takes, of ONE run: one
    matching two was compared only for its first match, reported under the pattern (round 26, P9); it is refused,
    naming the runs it matches."""
    env = {**os.environ, "PYTHONPATH": str(worktree / "src")}
    done = subprocess.run([sys.executable, "-m", "leviathan", "sweep", "--grid", grid, "--commands", "--only", run,
                           "--data-dir", data_dir], cwd=worktree, env=env, capture_output=True, text=True)
    at = worktree.name.removeprefix("wt-")
    if done.returncode != 0:  # a CalledProcessError traceback that hid sweep's own line (round 24, V33)
        raise UserError(f"`leviathan sweep --grid {grid} --commands --only {run}` at {at} failed: "
                        f"{_last_line(done.stderr)}; pass a --grid and --run that commit has")
    lines = [shlex.split(ln)[2:] for ln in done.stdout.splitlines() if ln.startswith("leviathan train")]
    if not lines:
        raise UserError(f"grid {grid!r} at {at} has no training command for run {run!r} (`leviathan sweep --commands "
                        f"--only {run}` printed none); pass a --run of that grid")
    names = [Path(argv[argv.index("--run-dir") + 1]).name for argv in lines]
    if len(lines) > 1:
        raise UserError(f"--run {run!r} matches {len(names)} runs of grid {grid!r} at {at} ({', '.join(names)}); "
                        f"a --run names one run: give each run to compare as its own --run")
    argv = lines[0][:lines[0].index("--run-dir")]  # the run's settings; its --run-dir and --resume are ours to choose
    return names[0], cut_to(argv, steps)


def run_lines(worktree: Path, args: argparse.Namespace) -> dict[str, list[str]]:
    """Every --run's name and shortened ``leviathan train`` argv at this worktree, all found before any training: two
    --run naming one run (`--run a --run a`, or a name and a pattern of it) trained the second into the first's folder
    after minutes of training and failed naming a temporary folder and options the user cannot give (round 26, P8)."""
    found: dict[str, list[str]] = {}
    for run in args.run:
        name, argv = train_line(worktree, args.grid, run, args.steps, args.data_dir)
        if name in found:
            raise UserError(f"--run {run!r} names run {name}, which an earlier --run names already; give each run "
                            f"once")
        check_steps(name, argv, args.steps)
        found[name] = argv
    return found


def check_steps(run: str, argv: list[str], steps: int) -> None:
    """UserError when ``--steps`` is shorter than the run's warmup: train refused it after the worktree was made and
    the training started, its line relayed with a fix this script cannot take ("set schedule.warmup_steps"), and the
    one it takes, a longer --steps, unnamed (issue 30 round 27, R18). The config is read with this checkout's code:
    a line it cannot read (another commit's keys) is left to the training's own check."""
    from leviathan.run_config import load_run_config

    try:
        warmup = load_run_config(None, argv, check_data=False).schedule.warmup_steps
    except (UserError, ValueError, TypeError):
        return
    if warmup > steps:
        raise UserError(f"--steps {steps} is shorter than run {run}'s warmup (schedule.warmup_steps={warmup} in its "
                        f"grid): train refuses a run that ends before its learning rate is reached; pass --steps "
                        f"{warmup} or more")


def _check_steps_here(repo: Path, args: argparse.Namespace) -> None:
    """``check_steps`` with the grid as this checkout reads it, before any worktree is made; a grid or run this
    checkout does not have is left to each commit's own check (``run_lines``), made before its training."""
    for run in args.run:
        try:
            name, argv = train_line(repo, args.grid, run, args.steps, args.data_dir)
        except UserError:
            continue
        check_steps(name, argv, args.steps)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else "(it printed nothing)"


def git(*argv: str, fix: str) -> str:
    """``git argv``'s output; UserError with what git said and ``fix`` when it fails (a CalledProcessError traceback
    of `git rev-parse --show-toplevel` outside a checkout, of `git worktree add` for a commit git does not know:
    issue 30 round 24, V32, V33)."""
    try:
        done = subprocess.run(["git", *argv], capture_output=True, text=True)
    except OSError as e:  # no git on PATH
        raise UserError(f"`git` could not be run ({e.strerror}); install git, or put it on PATH") from None
    if done.returncode != 0:
        said = _last_line(done.stderr) if done.stderr.strip() else f"exit status {done.returncode}"
        raise UserError(f"`git {' '.join(argv)}` failed ({said}); {fix}")
    return done.stdout.strip()


def _check_inputs(args: argparse.Namespace) -> Path:
    """The repository (the script's own checkout), once the data folder and both commits are known good: before any
    worktree is made."""
    from leviathan.data.meta import read_meta

    here = Path(__file__).resolve().parent
    repo = Path(git("-C", str(here), "rev-parse", "--show-toplevel",
                    fix=f"run the script of a leviathan git checkout ({here} is in none)"))
    read_meta(args.data_dir)
    for commit in args.commits:
        known = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "--end-of-options",
                                f"{commit}^{{commit}}"], capture_output=True, text=True)
        if known.returncode != 0:
            raise UserError(f"commit {commit!r} is not a commit of {repo} (git knows no commit by that name); "
                            f"nothing was done; pass a commit hash, branch or tag it has (git log --oneline)")
    return repo


def grid_argument(grid: str) -> str:
    """``--grid`` as the worktrees' sweeps must read it: a YAML file that exists where it was typed, made absolute (the
    sweep runs inside each worktree, where a relative ``g3.yaml`` was "grid file 'g3.yaml' does not exist", round 25,
    X35, as --data-dir was before round 24); a grid's name (``cpu``, ``o200k-fair``) is left to each commit's own
    configs. Footgun: a grid file of this checkout given by its path is read as it is now, by both commits; to run
    each commit's own version, pass the grid's name."""
    typed = os.path.expanduser(grid)
    if os.path.lexists(typed) and not os.path.isfile(typed) and not os.path.isdir(typed):  # a pipe went to the
        # worktrees as a grid's name: "unknown grid 'fifo1'" (issue 30 round 29, V41); a folder is a grid's name there
        raise UserError(f"--grid {grid!r} {not_a_file(typed) or 'is not a file'}; pass the path of a grid YAML file "
                        f"or a grid's name (`leviathan sweep --grids` lists them)")
    return os.path.abspath(typed) if os.path.isfile(typed) else grid


def main(argv: list[str] | None = None) -> int:
    """The exit status (1: some number differs): a refusal is one line ``error: ...``, status 2
    (``cli.one_line_errors``); a stop is one line as the verbs say it."""
    from leviathan.cli import _stoppable, one_line_errors

    name = "same_numbers"
    # ``ending``: a stop as the process ends is said in one line, not a silent kill (round 28, T34's kind)
    return one_line_errors(lambda: _stoppable(name, lambda: _main(argv), COMMAND, ending=argv is None), name)


def _main(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    ap.add_argument("commits", nargs=2)
    ap.add_argument("--grid", required=True)
    ap.add_argument("--run", action="append", required=True,
                    help="a run of the grid to compare (repeat for more runs, each once); a pattern, as sweep --only "
                         "takes, must match one run: one matching several is refused, naming them")
    ap.add_argument("--steps", type=positive_int, default=32)
    ap.add_argument("--data-dir", required=True, help="the prepared data folder")
    args = once_options(ap).parse_args(argv)
    if len(set(args.run)) < len(args.run):  # trained twice into one folder, refused only after the first training (P8)
        twice = next(r for r in args.run if args.run.count(r) > 1)
        raise UserError(f"--run {twice!r} is given {args.run.count(twice)} times; give each run once")
    refuse_empty_path(args.data_dir, "--data-dir")  # "" was made the current folder (as for the verbs: B186)
    refuse_empty_path(args.grid, "--grid")  # 'g.yaml/' went to the worktrees as a name (as for the verbs: round 27, R2)
    args.data_dir = os.path.abspath(args.data_dir)  # the runs train in the worktrees: a relative path meant nothing
    args.grid = grid_argument(args.grid)
    repo = _check_inputs(args)
    _check_steps_here(repo, args)  # --steps shorter than a run's warmup: before any worktree (round 27, R18)
    results: dict[str, dict[int, list[dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for side, commit in enumerate(args.commits):  # by side: `HEAD HEAD` met its own worktree (round 25, X36)
            wt = Path(tmp) / str(side) / f"wt-{commit}"
            git("-C", str(repo), "worktree", "add", "-q", "--detach", str(wt), commit,
                fix="see git's message (no room for the worktree under TMPDIR? set TMPDIR to a folder with room)")
            try:
                env = {**os.environ, "PYTHONPATH": str(wt / "src"), "OMP_NUM_THREADS": "1"}
                for run, argv in run_lines(wt, args).items():
                    out = Path(tmp) / str(side) / run
                    done = subprocess.run([sys.executable, "-m", "leviathan", "train", *argv, "--run-dir", str(out)],
                                          cwd=wt, env=env, capture_output=True, text=True)
                    if done.returncode != 0:
                        raise UserError(f"the training of {run} at {commit} failed (exit {done.returncode}): "
                                        f"{_last_line(done.stderr)}; fix that, then run the comparison again")
                    results.setdefault(run, {})[side] = numbers(out / "metrics.jsonl")
            finally:
                subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(wt)], check=False)
    same = True
    for run, by_side in results.items():
        equal = by_side[0] == by_side[1]
        same &= equal
        losses = [r["val_loss"] for r in by_side[0] if "val_loss" in r]
        steps = max((r["step"] for r in by_side[0] if isinstance(r.get("step"), int)), default=0)
        print(f"{run}: {'identical' if equal else 'DIFFERENT'} over {len(by_side[0])} metrics lines "
              f"({steps} steps of the run's own batch; validation losses {losses})")
    return 0 if same else 1


if __name__ == "__main__":  # without the interpreter's finalization, whose default stop actions killed a
    from leviathan.cli import end_program  # finished check without a word, -15 (the CI of stop 55, gpu_check env)

    end_program(main())
