"""A reader whose step folder a live training run pruned (issue 30 round 15, A208): export / eval / generate of a run
being trained with keep_last=1 said the newest step's tokenizer.json "is missing, but state.json records it; the
checkpoint is incomplete: restore the file, or move the step folder out of checkpoints/" (nothing was damaged).
Now a line naming a step folder that is gone, of a run whose lock a live process holds, says that the run is being
trained and to run the command again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, cli_error  # noqa: E402

pytestmark = [pytest.mark.reliability]

HOLD = """
import sys, time
from leviathan.locking import folder_lock
with folder_lock(sys.argv[1], "train"):
    open(sys.argv[2], "w").close()
    time.sleep(600)
"""


@pytest.fixture
def training(run_copy, tmp_path):
    """``run_copy`` with its lock held by a live process, as a training run holds it."""
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(run_copy), str(ready)], env=env)
    try:
        for _ in range(300):
            if ready.exists():
                break
            time.sleep(0.1)
        assert ready.exists()
        yield run_copy, proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_a_step_folder_gone_under_a_live_training_says_so(training):
    from leviathan.checkpoint.vanished import pruned_while_read

    run, pid = training
    step = run / "checkpoints" / "step-00000004"
    shutil.rmtree(step)
    told = (f"'{step / 'tokenizer.json'}' is missing, but state.json records it; the checkpoint is incomplete: "
            f"restore the file, or move the step folder out of checkpoints/ to go on from the previous one")
    line = pruned_while_read(told)
    assert line is not None and f"the step folder '{step}' does not exist (any more): process {pid}" in line, line
    assert "run the command again on the run folder" in line and "restore" not in line


def test_the_cli_line_of_a_reader_names_the_training(training):
    """Through a real ``leviathan eval`` process, on a step the live run no longer keeps."""
    run, pid = training
    shutil.rmtree(run / "checkpoints" / "step-00000002")
    line = cli_error(["eval", run / "checkpoints" / "step-00000002", "--max-tokens", "64"])
    assert f"does not exist (any more): process {pid}" in line and "keep_last deletes older steps" in line, line


def test_without_a_live_writer_the_line_is_the_readers_own(run_copy):
    shutil.rmtree(run_copy / "checkpoints" / "step-00000002")
    line = cli_error(["eval", run_copy / "checkpoints" / "step-00000002", "--max-tokens", "64"])
    assert "does not exist" in line and "any more" not in line, line
