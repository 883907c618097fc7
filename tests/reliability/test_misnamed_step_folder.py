"""A step folder renamed to a name train does not write (``step-4`` for ``step-00000004``) while it holds the run's
newest step (issue 30 round 21, P373, P374): ``eval RUN`` evaluated step 2 without a word, and ``train --resume
auto`` resumed from step 2 and saved a second step 4 beside ``step-4``. Both are refused, naming the folder, nothing
written; a backup of a step the run still has stays allowed (round 16, C226)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides, tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_a_newer_step_under_another_name_stops_eval_and_resume(data, run_copy):
    checkpoints = run_copy / "checkpoints"
    (checkpoints / "step-00000004").rename(checkpoints / "step-4")
    before = tree_hashes(run_copy)
    line = cli_error(["eval", run_copy, "--data", data])
    assert "step-4' holds step 4" in line and "rename it to" in line and "step-00000004" in line, line
    line = cli_error(["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"])
    assert "cannot train" in line and "step-4' holds step 4" in line and "move it out of" in line, line
    assert tree_hashes(run_copy) == before
    assert sorted(p.name for p in checkpoints.iterdir()) == ["step-00000002", "step-4"]
    from leviathan.checkpoint import load_model
    from leviathan.errors import UserError

    with pytest.raises(UserError, match="not named as train names step folders"):
        load_model(run_copy)


def test_a_backup_of_a_step_the_run_still_has_is_left_alone(run_copy):
    checkpoints = run_copy / "checkpoints"
    shutil.copytree(checkpoints / "step-00000004", checkpoints / "step-4 backup")
    shutil.copytree(checkpoints / "step-00000002", checkpoints / "step-2")
    from leviathan.checkpoint import find_checkpoint

    assert find_checkpoint(run_copy).name == "step-00000004"
