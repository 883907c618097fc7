"""The checkpoint readers name a path of another kind as what it is, never as a damaged checkpoint (issue 30 round 25).

``load_weights`` of a step folder (not its model.safetensors) said "No such device (os error 19)", and of a user's
text file "header too large", each with the damaged checkpoint's fix "delete its step folder" (Y645, Y646);
``read_step_state`` of a run folder said its state.json was unreadable and the checkpoint damaged (Y648; find_checkpoint
names that mistake). ``verify_companions`` of a name neither in the folder nor recorded returned as if verified (Y649)
and of state None was a raw AttributeError (Y651). A step folder's own damaged file is still named as damage.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _step(run: Path) -> Path:
    return run / "checkpoints" / "step-00000004"


def test_load_weights_names_a_folder_and_a_foreign_file(finished_run, data, tmp_path):
    """Y645, Y646: the fix said to delete an intact step folder, or one the file is no part of."""
    from leviathan.checkpoint.read import load_weights

    with pytest.raises(UserError, match=r"load_weights: '.*step-00000004' is a folder, not a file; pass the "
                                        r"model.safetensors inside a step folder") as info:
        load_weights(_step(finished_run))
    text = tmp_path / "notes.txt"
    text.write_text("hello " * 100)
    with pytest.raises(UserError, match=r"notes.txt' is not a readable safetensors file .*: it is not a step "
                                        r"folder's model.safetensors; pass one") as other:
        load_weights(text)
    with pytest.raises(UserError, match=r"'.*nope.safetensors' does not exist; pass a step folder's "):
        load_weights(tmp_path / "nope.safetensors")
    for error in (info, other):
        assert "delete" not in str(error.value) and "damaged" not in str(error.value)
    assert load_weights(_step(finished_run) / "model.safetensors")


def test_a_step_folders_own_unreadable_weights_are_still_damage(finished_run, tmp_path):
    """The fix of a damaged checkpoint stays where the file is a step folder's model.safetensors."""
    from leviathan.checkpoint.read import load_weights

    step = Path(shutil.copytree(_step(finished_run), tmp_path / "run" / "checkpoints" / "step-00000004"))
    (step / "model.safetensors").write_bytes(b"torn")
    with pytest.raises(UserError, match=r"the checkpoint is damaged or not one leviathan wrote: delete its step"):
        load_weights(step / "model.safetensors")


def test_read_step_state_names_a_run_folder_and_a_file(finished_run, data):
    """Y648: a run folder's missing state.json was blamed as a damaged checkpoint."""
    from leviathan.checkpoint.read import read_step_state

    with pytest.raises(UserError, match=r"is not a step folder \(a run folder: its steps are in checkpoints/\): it has "
                                        r"no state.json .*; pass one of a run's checkpoints/step-XXXXXXXX folders"):
        read_step_state(finished_run)
    with pytest.raises(UserError, match=r"step folder '.*meta.json' is a file, not a folder; pass one of a run's"):
        read_step_state(data / "meta.json")
    assert read_step_state(_step(finished_run)).step == 4


def test_verify_companions_refuses_what_it_cannot_verify(finished_run):
    """Y649: a name neither present nor recorded was 'verified'; Y651: state None an AttributeError."""
    from leviathan.checkpoint.read import read_step_state, verify_companions

    step = _step(finished_run)
    state = read_step_state(step)
    with pytest.raises(UserError, match=r"verify_companions: names: 'nope.bin' is neither in .* nor recorded in its "
                                        r"state.json, so there is nothing to verify; pass names of the step's files "
                                        r"\(recorded: config.yaml, "):
        verify_companions(step, state, names=["nope.bin"])
    for state_given, names, said in [(None, None, "state must be the StepState read_step_state"),
                                     (state, "model.safetensors", "names must be a list of file names")]:
        with pytest.raises(TypeError, match=f"verify_companions: {said}"):
            verify_companions(step, state_given, names)
    verify_companions(step, state, ["model.safetensors"])
    verify_companions(step, state, ["model.safetensors", "nope.bin"], optional=True)  # a reader's optional files
