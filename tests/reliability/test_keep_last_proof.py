"""keep_last deletes only step folders that are provably this run's own complete steps (issue 30 round 15, A164,
A165): a step folder copied in from another run under an older name, or one holding a model.safetensors train did
not write, was deleted by the pruning, exit 0, no word. Now either is left in place with one note naming it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, run_overrides  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _resume_keep_one(run: Path, data: Path):
    return cli(["train", *run_overrides(data, max_steps=6, keep_last=1), "--run-dir", run, "--resume", "auto",
                "--quiet"])


def test_keep_last_leaves_a_step_folder_whose_state_names_another_step(data, run_copy):
    """A164: step-4's folder copied in as step-00000001 (state.json says step 4) was pruned with the run's steps."""
    foreign = run_copy / "checkpoints" / "step-00000001"
    shutil.copytree(run_copy / "checkpoints" / "step-00000004", foreign)
    proc = _resume_keep_one(run_copy, data)
    assert proc.returncode == 0, proc.stderr
    assert foreign.is_dir() and (foreign / "model.safetensors").is_file()
    assert f"keep_last=1 left '{foreign}' in place" in proc.stderr and "step-00000001" in proc.stderr, proc.stderr
    assert not (run_copy / "checkpoints" / "step-00000002").exists()  # the run's own old steps still go
    assert not (run_copy / "checkpoints" / "step-00000004").exists()


def test_keep_last_leaves_a_step_folder_whose_weights_train_did_not_write(data, run_copy):
    """A165: step-2's model.safetensors replaced by other bytes (its sha256 not the recorded one) was deleted."""
    step2 = run_copy / "checkpoints" / "step-00000002"
    (step2 / "model.safetensors").write_bytes(b"\x07" * 5000)
    proc = _resume_keep_one(run_copy, data)
    assert proc.returncode == 0, proc.stderr
    assert (step2 / "model.safetensors").read_bytes() == b"\x07" * 5000
    assert f"keep_last=1 left '{step2}' in place" in proc.stderr and "not the file saved" in proc.stderr, proc.stderr
    assert not (run_copy / "checkpoints" / "step-00000004").exists()
