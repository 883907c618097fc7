"""The probes and candidates of ``nearest_neighbours`` are whole ids of nonzero rows (issue 30 round 29, W672, W673).

``nearest_neighbours(table, probes=np.array([1.5]), ...)`` read the float probe 1.5 as row 1 (``np.asarray(...,
dtype=np.int64)`` cut it), and a probe whose row is all zero (no direction: its cosine with every row is undefined)
was given ids 0, 1, 2 as its neighbours, both without a word. Ids must be integers by their dtype
(``integers.is_integer_array``), and a zero row among the probes or candidates is named by its id, as a NaN row is
(``_check_finite_rows``).
"""

from __future__ import annotations

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.experiments.method.embeddings import nearest_neighbours

pytestmark = pytest.mark.reliability


def _table():
    return np.random.default_rng(0).normal(size=(300, 16))


@pytest.mark.parametrize("name", ["probes", "candidates"])
@pytest.mark.parametrize("ids, shown", [([1.5], r"float64 \(1\.5\)"), ([True], r"bool \(True\)")])
def test_ids_that_are_not_whole_numbers_are_refused(name, ids, shown):
    given = {"probes": np.array([1]), "candidates": np.arange(300)}
    given[name] = np.array(ids * 12)
    with pytest.raises(UserError, match=rf"nearest_neighbours: {name}: must be whole token ids, got an array of "
                                        rf"{shown}; pass integer ids"):
        nearest_neighbours(_table(), given["probes"], given["candidates"], 3)


@pytest.mark.parametrize("probe", [5, 6])
def test_a_zero_row_is_named_by_its_id(probe):
    table = _table()
    table[5] = 0
    name = "probes" if probe == 5 else "candidates"
    with pytest.raises(UserError, match=rf"nearest_neighbours: {name}: holds 1 ids whose table rows are all zero "
                                        rf"\(ids 5\)"):
        nearest_neighbours(table, np.array([probe]), np.arange(300), 3)


def test_whole_ids_of_any_integer_type_still_work():
    table = _table()
    expected = nearest_neighbours(table, np.array([1]), np.arange(300), 3)
    assert (nearest_neighbours(table, np.array([1], dtype=np.uint16), np.arange(300, dtype=np.int32), 3)
            == expected).all()
    assert (nearest_neighbours(table, [1], list(range(300)), 3) == expected).all()
    assert nearest_neighbours(table, [], np.arange(300), 3).shape == (0, 3)


@pytest.mark.parametrize("candidates, said", [
    ([2, 2, 2, 2], r"candidates: holds id 2 twice \(at \[0\] and \[1\]\); pass each id once, ascending"),
    ([5, 3, 4, 7], r"candidates: is not in ascending order: \[1\] is 3 after 5; pass each id once, ascending"),
], ids=["Y195-repeated", "unsorted"])
def test_candidates_are_each_id_once_ascending(candidates, said):
    """Y195 (issue 30 round 30): candidates [2, 2, 2, 2] gave the three nearest neighbours [2, 2, 2] without a word;
    unsorted candidates were searched as sorted (a probe could be its own neighbour)."""
    with pytest.raises(UserError, match=rf"^nearest_neighbours: {said}"):
        nearest_neighbours(_table(), np.array([1]), np.array(candidates), 3)


def test_a_probe_given_twice_still_gets_its_row_twice():
    out = nearest_neighbours(_table(), np.array([1, 1]), np.arange(300), 3)
    assert out[0].tolist() == out[1].tolist() and 1 not in out[0]


@pytest.mark.parametrize("name", ["probes", "candidates"])
def test_ids_of_two_dimensions_are_named(name):
    """Round 31, AA393: 2-D candidates were numpy's raw "all the input arrays must have same number of dimensions"."""
    given = {"probes": np.array([1]), "candidates": np.arange(300)}
    given[name] = given[name].reshape(1, -1)
    with pytest.raises(UserError, match=rf"nearest_neighbours: {name}: must be one list of token ids \(a 1-D array\), "
                                        r"got an array of shape \(1, \d+\); pass a flat list"):
        nearest_neighbours(_table(), given["probes"], given["candidates"], 1)
