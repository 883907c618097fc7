"""Digits and spline coordinates outside their range are refused (issue 30 round 29, W793 and W795).

``from_digits([[1, 9, 0]], 7)`` (a digit past the base) returned 112, the id of the digits (2, 2, 0), and
``dense_basis(tensor([1.5]), 8)`` (a coordinate past the knot grid's [0, 1]) a row of NaN, both without a word.
Each is now one line naming the value and the range: an ``ArgumentValueError``, a UserError that is still a
ValueError. The generator's own path (``window_rows``, coordinates from a sigmoid) is unchanged.
"""

from __future__ import annotations

import pytest
import torch

from leviathan.errors import ArgumentValueError
from leviathan.model import bspline
from leviathan.model.digits import from_digits, to_digits


@pytest.mark.parametrize("digits, bad", [([[1, 9, 0]], "digit 9"), ([[1, 7, 0]], "digit 7"), ([[0, -1, 2]], "digit -1")])
def test_a_digit_outside_the_base_is_refused(digits, bad):
    with pytest.raises(ArgumentValueError, match=rf"from_digits: {bad} is outside \[0, 7\)"):
        from_digits(torch.tensor(digits), 7)


def test_digits_inside_the_base_still_give_their_ids():
    ids = torch.tensor([0, 112, 342])
    assert torch.equal(from_digits(to_digits(ids, 7, 3), 7), ids)
    assert from_digits(torch.zeros((0, 3), dtype=torch.long), 7).shape == (0,)


@pytest.mark.parametrize("api", [bspline.dense_basis, bspline.window])
@pytest.mark.parametrize("u, shown", [(1.5, "1.5"), (-0.25, "-0.25"), (float("nan"), "nan")])
def test_a_coordinate_outside_the_grid_is_refused(api, u, shown):
    with pytest.raises(ArgumentValueError, match=rf"{api.__name__}: coordinate u={shown} is outside .*\[0, 1\]"):
        api(torch.tensor([0.5, u]), 8)


def test_the_ends_of_the_grid_are_coordinates():
    basis = bspline.dense_basis(torch.tensor([0.0, 1.0]), 8)
    assert torch.allclose(basis.sum(-1), torch.ones(2))
    _, w, _ = bspline.window(torch.tensor([0.0, 1.0]), 8)
    assert torch.allclose(w.sum(-1), torch.ones(2))
