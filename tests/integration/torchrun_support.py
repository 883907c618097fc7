"""Launching ``torchrun`` from tests: 2 CPU processes (gloo), one thread each, the source tree on the path.

Each launch costs a few seconds of process start and rendezvous (torch is imported once per rank), so
the tests that use it train the tiny model of ``test_train.tiny_overrides`` for a few steps only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def torchrun_env() -> dict:
    """This environment minus any torchrun variables of an enclosing launch, one thread per rank."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT"):
        env.pop(key, None)
    return env


def torchrun_cmd(args: list[str], nproc: int = 2, max_restarts: int | None = None) -> list[str]:
    """``python -m torch.distributed.run --standalone ...`` then ``args`` (``-m leviathan ...`` or a script)."""
    restarts = [f"--max-restarts={max_restarts}"] if max_restarts is not None else []
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", *restarts,
            *args]


def run_torchrun(args: list[str], cwd: Path, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """Run to the end; an assertion with the output's tail if it fails."""
    proc = subprocess.run(torchrun_cmd(args, **kwargs), env=torchrun_env(), cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc


def train_torchrun(overrides: list[str], run_dir: Path, cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    """``torchrun --nproc_per_node=2 -m leviathan train OVERRIDES --run-dir RUN_DIR --quiet EXTRA``."""
    return run_torchrun(["-m", "leviathan", "train", *overrides, "--run-dir", str(run_dir), "--quiet", *extra], cwd)
