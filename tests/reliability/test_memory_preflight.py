"""A model this machine's memory cannot train is refused in one line before it is built (issue 30 round 25, X70:
`demo --preset paper-1.2b` under `ulimit -v` ended in the allocator's RuntimeError traceback after building most of
the model; X71: without a limit it grew to 21 GB of 23 until the out-of-memory killer ended it, nothing said)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_error, run_overrides  # noqa: E402

LIMIT = 6 * 2**30  # `ulimit -v` of X70: room for python and torch, none for a 1.2B model's 18 GiB


def _limited(argv: list, cwd: Path, **env) -> subprocess.CompletedProcess:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    full = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), **env}
    return subprocess.run([sys.executable, "-m", "leviathan", *map(str, argv)], env=full, cwd=cwd, preexec_fn=limit,
                          capture_output=True, text=True, timeout=300)


def test_demo_refuses_a_preset_no_memory_here_holds(data, tmp_path):
    done = _limited(["demo", "--data-dir", data, "--steps", "2", "--variants", "dense_tied", "--run-dir",
                     tmp_path / "dm2", "--preset", "paper-1.2b", "--quiet"], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "--preset paper-1.2b: training 1,219,207,168 parameters needs at least" in line
    assert "a smaller --preset" in line and "LEVIATHAN_SKIP_MEMORY_CHECK=1" in line, line
    assert not (tmp_path / "dm2").exists()


def test_train_refuses_a_model_no_memory_here_holds(data, tmp_path):
    done = _limited(["train", *run_overrides(data, **{"model.preset": "paper-1.2b"}), "device=cpu", "--run-dir",
                     tmp_path / "run"], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "the run's model (model.*): training" in line and "GiB" in line, line
    assert not (tmp_path / "run").exists()


def test_the_skip_setting_takes_1_or_0_and_refuses_anything_else(monkeypatch):
    """Round 26 (P17): ``LEVIATHAN_SKIP_MEMORY_CHECK=false``, a user turning the check on, was read as "skip"."""
    import pytest

    from leviathan.errors import UserError
    from leviathan.memory_preflight import SKIP, check_training_memory

    huge = [2**60]  # more than any machine holds
    for value in ("false", "yes", "2"):
        monkeypatch.setenv(SKIP, value)
        with pytest.raises(UserError, match=f"{SKIP}='{value}' is neither 1 .* nor 0"):
            check_training_memory(huge, "--preset x", "a smaller --preset")
    for value in ("0", ""):
        monkeypatch.setenv(SKIP, value)
        with pytest.raises(UserError, match="--preset x: training .* parameters needs at least"):
            check_training_memory(huge, "--preset x", "a smaller --preset")
    monkeypatch.setenv(SKIP, "1")
    check_training_memory(huge, "--preset x", "a smaller --preset")  # skipped: nothing said
