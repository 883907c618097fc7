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


def test_keep_last_and_the_readers_leave_a_step_name_train_never_writes(data, run_copy):
    """C226 (round 16): a user's backup of step 2 as ``step-000000002`` (9 digits; train writes 8) was taken as a step
    of the run and deleted by keep_last, exit 0, no word, while ``step-2`` and ``step-00000002 copy`` were kept. Only
    the names train writes are its steps (``checkpoint.layout.step_of``, the one parser every reader asks): the
    backup is neither pruned nor resumed, evaluated or exported as the run's newest step."""
    from reliability_support import tree_hashes

    checkpoints = run_copy / "checkpoints"
    backup = checkpoints / "step-000000002"
    shutil.copytree(checkpoints / "step-00000002", backup)
    newest = checkpoints / "step-000000009"  # a copy of step 4 under a 9-digit name past the run's newest step
    shutil.copytree(checkpoints / "step-00000004", newest)
    kept = {p: tree_hashes(p) for p in (backup, newest)}
    proc = _resume_keep_one(run_copy, data)
    assert proc.returncode == 0, proc.stderr
    assert {p: tree_hashes(p) for p in (backup, newest)} == kept
    assert {p.name for p in checkpoints.iterdir()} == {"step-00000006", "step-000000002", "step-000000009"}
    from leviathan.checkpoint import find_checkpoint, list_checkpoints

    assert [step for step, _ in list_checkpoints(run_copy)] == [6]
    assert find_checkpoint(run_copy).name == "step-00000006"


@pytest.mark.parametrize("fingerprint, why", [
    ("ab" * 32, "it was trained on other data (data_fingerprint abababababab... in its state.json"),
    (None, "its state.json records no run_id (saved before run ids, or edited), so nothing proves it is a step of "
           "this run"),
], ids=["C16-other-data", "C17-before-run-ids"])
def test_keep_last_leaves_a_step_folder_whose_state_records_no_run_id(data, run_copy, other_run, fingerprint, why):
    """C16, C17 (round 16): another run's step-00000002 copied in with its state.json's run_id deleted (C16: its
    data_fingerprint another data's; C17: that deleted too, as a step saved before run ids) was deleted by keep_last,
    exit 0, no word: a step without a run_id passed as the run's own. It is left in place, with one note (not one at
    every later save) saying why, and the run's own old steps still go."""
    import json

    from reliability_support import tree_hashes

    foreign = run_copy / "checkpoints" / "step-00000002"
    shutil.rmtree(foreign)
    shutil.copytree(other_run / "checkpoints" / "step-00000002", foreign)
    state = json.loads((foreign / "state.json").read_text())
    del state["run_id"]
    state["data_fingerprint"] = fingerprint
    if fingerprint is None:
        del state["data_fingerprint"]
    (foreign / "state.json").write_text(json.dumps(state))
    before = tree_hashes(foreign)
    proc = cli(["train", *run_overrides(data, max_steps=8, keep_last=1), "--run-dir", run_copy, "--resume", "auto",
                "--quiet"])
    assert proc.returncode == 0, proc.stderr
    assert tree_hashes(foreign) == before
    assert proc.stderr.count(f"keep_last=1 left '{foreign}' in place: {why}") == 1, proc.stderr
    assert {p.name for p in (run_copy / "checkpoints").iterdir()} == {"step-00000002", "step-00000008"}
