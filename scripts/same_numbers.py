"""Do two commits train bit-identically? The check a round runs before mixing rows of two commits.

    python scripts/same_numbers.py 77586a3 76566ea --grid o200k-fair --run d64L6-dense_untied-s0 \
        --run d64L6-leviathan-s0 --steps 32 --data-dir /abs/path/data/gutenberg-o200k

For each commit a temporary ``git worktree`` is made; each named run of the grid is trained there for ``--steps``
optimizer steps (the run's own ``leviathan train`` line from ``sweep --commands`` with ``max_tokens`` cut to that
many steps: the schedule then differs from the full run's, but identically for both commits), one thread, and
every number its metrics.jsonl logs (losses, gradient norms, lr, validation losses; not times or throughput) is
compared for exact equality. Prints one line per run and exits 1 if any number differs.

Same machine only: the o200k-fair round found that the same commit on another machine's CPU gives validation
losses that differ in the 7th digit (results/o200k-fair/PLAN.md, the reproduction check), so this compares code,
not hardware.
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

TIMING_KEYS = {"time_s", "tokens_per_s", "elapsed_s", "wall_time_s", "step_time_s"}


def numbers(metrics: Path) -> list[dict]:
    """metrics.jsonl lines without their timing fields."""
    rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    return [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in rows]


def train_line(worktree: Path, grid: str, run: str, steps: int, batch_tokens: int, data_dir: str,
               out: Path) -> list[str]:
    """The run's ``leviathan train`` argv from the grid at this worktree, shortened to ``steps`` steps."""
    env = {**os.environ, "PYTHONPATH": str(worktree / "src")}
    text = subprocess.run([sys.executable, "-m", "leviathan", "sweep", "--grid", grid, "--commands", "--only", run,
                           "--data-dir", data_dir], cwd=worktree, env=env, capture_output=True, text=True,
                          check=True).stdout
    line = next(ln for ln in text.splitlines() if ln.startswith("leviathan train"))
    argv = shlex.split(line)[2:]
    argv = argv[:argv.index("--run-dir")]  # the run's settings; its --run-dir and --resume are ours to choose
    return [a for a in argv if not a.startswith("max_tokens=")] + [f"max_tokens={steps * batch_tokens}",
                                                                    "--run-dir", str(out)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("commits", nargs=2)
    ap.add_argument("--grid", required=True)
    ap.add_argument("--run", action="append", required=True)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--data-dir", required=True, help="absolute path of the prepared data folder")
    args = ap.parse_args()
    repo = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                               check=True).stdout.strip())
    results: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for commit in args.commits:
            wt = Path(tmp) / f"wt-{commit}"
            subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(wt), commit], check=True)
            try:
                env = {**os.environ, "PYTHONPATH": str(wt / "src"), "OMP_NUM_THREADS": "1"}
                for run in args.run:
                    out = Path(tmp) / commit / run
                    argv = train_line(wt, args.grid, run, args.steps, args.batch_tokens, args.data_dir, out)
                    done = subprocess.run([sys.executable, "-m", "leviathan", "train", *argv], cwd=wt, env=env,
                                          capture_output=True, text=True)
                    if done.returncode != 0:
                        raise SystemExit(f"error: {run} at {commit} failed: {done.stderr.strip()[-2000:]}")
                    results.setdefault(run, {})[commit] = numbers(out / "metrics.jsonl")
            finally:
                subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(wt)], check=False)
    same = True
    a, b = args.commits
    for run, by_commit in results.items():
        equal = by_commit[a] == by_commit[b]
        same &= equal
        losses = [r["val_loss"] for r in by_commit[a] if "val_loss" in r]
        print(f"{run}: {'identical' if equal else 'DIFFERENT'} over {len(by_commit[a])} metrics lines "
              f"({args.steps} steps; validation losses {losses})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
