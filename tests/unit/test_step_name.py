"""``checkpoint.layout.step_name``: the one writer of step folder names, checked (issue 30 round 23, U477, U479)."""

from __future__ import annotations

import numpy as np
import pytest

from leviathan.checkpoint.layout import step_name, step_of
from leviathan.errors import UserError


def test_a_step_names_its_folder_and_reads_back():
    for step in (0, 7, 99_999_999, np.int64(12)):
        assert step_of(step_name(step)) == int(step)


@pytest.mark.parametrize("step, kind", [(2.5, TypeError), (True, TypeError), ("3", TypeError), (-1, ValueError)])
def test_a_step_that_is_no_whole_number_from_zero_is_one_line(step, kind):
    with pytest.raises(UserError, match=r"step_name: step must be a whole number >= 0") as caught:
        step_name(step)
    assert isinstance(caught.value, kind)
