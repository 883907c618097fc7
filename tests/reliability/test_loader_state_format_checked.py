"""The data loader's saved ``format`` is held to the one value its writer writes (issue 30 round 28, U410):
``BatchLoader.load_state_dict`` took a state whose ``format`` is -5 without a word while its other fields are checked
(position, seed, num_windows: U421, U424). A state without the field (before it existed) still loads. state.json's
readers of the same field, and of the file's own ``format``, took ``true`` and ``1.0`` as 1 (Python's equality):
they now take the int alone.
"""

from __future__ import annotations

import json
import shutil

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_load_state_dict_refuses_a_format_no_version_writes(data):
    from leviathan.data.loader import BatchLoader

    loader = BatchLoader(data, 32, 4, seed=3)
    loader.next_batch()
    state = loader.state_dict()
    for fmt in (-5, 2, True, 1.0, "1", None):
        with pytest.raises(UserError, match=rf"^BatchLoader\.load_state_dict: state: its format is {fmt!r}, expected "
                                            r"a dict of format 1; pass a state that BatchLoader\.state_dict\(\) "
                                            r"returned$"):
            BatchLoader(data, 32, 4, seed=3).load_state_dict({**state, "format": fmt})
    with pytest.raises(UserError, match=r"state: it is list, expected a dict of format 1"):
        BatchLoader(data, 32, 4, seed=3).load_state_dict([1])
    unversioned = {k: v for k, v in state.items() if k != "format"}
    for saved in (state, unversioned):
        again = BatchLoader(data, 32, 4, seed=3)
        again.load_state_dict(saved)
        assert again.position == loader.position


@pytest.mark.parametrize(("field", "value"), [("loader.format", True), ("loader.format", 1.0), ("format", True)])
def test_state_json_format_fields_are_the_int_written(finished_run, tmp_path, field, value):
    from leviathan.checkpoint.state import read_step_state

    step = tmp_path / "step"
    shutil.copytree(next((finished_run / "checkpoints").glob("step-*")), step)
    raw = json.loads((step / "state.json").read_text())
    *outer, last = field.split(".")
    (raw[outer[0]] if outer else raw)[last] = value
    (step / "state.json").write_text(json.dumps(raw))
    with pytest.raises(UserError, match=rf"field '{field}' is {value!r}, expected 1"):
        read_step_state(step)
