"""A step folder that a live training run is pruning, its files half deleted, is named as pruned, not as damaged
(issue 30 round 28: T31, "unclear").

``export rk ek`` while ``train ... keep_last=1`` saved step after step found step 28's folder and then lost its
model.safetensors to the rotation: "... is not a readable safetensors file (No such file or directory ...); the
checkpoint is damaged ...: delete its step folder". ``checkpoint.vanished.pruned_while_read`` (which every verb's
one-line error goes through) passed over a step folder that still existed: keep_last removes its files before the
folder. A folder missing its state.json or model.safetensors while a newer complete step exists and a live process
holds the run's lock is now one being pruned.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402
from test_pruned_while_read import training  # noqa: E402,F401 - fixture


def test_export_of_a_step_losing_its_weights_says_it_is_pruned(training, tmp_path):
    run, pid = training
    step = run / "checkpoints" / "step-00000002"
    (step / "model.safetensors").unlink()  # the rotation's first deletion, the folder still there
    line = cli_error(["export", step, tmp_path / "ek"])
    assert f"the step folder '{step}' is being deleted, a newer step saved: process {pid} (" in line, line
    assert f"is training run '{run}', whose keep_last deletes older steps" in line, line
    assert "(the checkpoint is not damaged); run the command again on the run folder" in line, line
    assert "delete its step folder" not in line and "damaged or" not in line, line


def test_the_line_of_the_finding_is_recognised(training):
    from leviathan.checkpoint.vanished import pruned_while_read

    run, pid = training
    step = run / "checkpoints" / "step-00000002"
    (step / "model.safetensors").unlink()
    told = (f"'{step / 'model.safetensors'}' is not a readable safetensors file (No such file or directory: "
            f"{step / 'model.safetensors'}); the checkpoint is damaged or not one leviathan wrote: delete its step "
            f"folder (--resume auto then uses the previous one) or pass another checkpoint")
    assert f"is being deleted, a newer step saved: process {pid} (" in (pruned_while_read(told) or ""), told


def test_the_newest_step_missing_a_file_is_still_the_readers_own_line(training):
    from leviathan.checkpoint.vanished import pruned_while_read

    run, _ = training
    newest = run / "checkpoints" / "step-00000004"
    (newest / "model.safetensors").unlink()  # no newer step: not the rotation
    assert pruned_while_read(f"'{newest / 'model.safetensors'}' is not a readable safetensors file") is None
