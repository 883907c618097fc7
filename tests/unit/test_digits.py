"""Compositional index (docs/DESIGN.md §2, paper step 1): base-b digits, most significant first; min_base."""

from __future__ import annotations

import pytest
import torch

from leviathan.config import ConfigError
from leviathan.model.config import min_base
from leviathan.model.digits import check_ids, from_digits, to_digits

pytestmark = pytest.mark.usefixtures("single_thread")

O200K = 200_019


def python_digits(i: int, base: int, k: int) -> list[int]:
    """Independent decomposition by repeated division, most significant digit first."""
    out = []
    for _ in range(k):
        out.append(i % base)
        i //= base
    assert i == 0
    return out[::-1]


def naive_min_base(vocab_size: int, k: int) -> int:
    b = 2  # a base below 2 cannot address anything beyond id 0
    while b**k < vocab_size:
        b += 1
    return b


def test_o200k_base_is_59():
    assert min_base(O200K, 3) == 59
    assert 59**3 == 205_379 >= O200K > 58**3


def test_o200k_digits_most_significant_first():
    ids = torch.tensor([0, 1, 58, 59, 3481, 200_018, 205_378])
    expected = torch.tensor([
        [0, 0, 0],
        [0, 0, 1],
        [0, 0, 58],
        [0, 1, 0],
        [1, 0, 0],  # 59^2
        [57, 27, 8],  # 57*3481 + 27*59 + 8 = 200018 = V - 1
        [58, 58, 58],  # b^k - 1
    ])
    digits = to_digits(ids, 59, 3)
    assert digits.dtype == torch.int64
    assert torch.equal(digits, expected)
    assert 57 * 3481 + 27 * 59 + 8 == 200_018


def test_digits_match_repeated_division_and_keep_shape():
    base, k = 59, 3
    ids = torch.randint(0, base**k, (4, 5))
    digits = to_digits(ids, base, k)
    assert digits.shape == (4, 5, 3)
    for i, row in zip(ids.reshape(-1).tolist(), digits.reshape(-1, k).tolist()):
        assert row == python_digits(i, base, k)


def test_digits_of_int32_ids():
    digits = to_digits(torch.tensor([987], dtype=torch.int32), 10, 3)
    assert digits.dtype == torch.int64
    assert digits.tolist() == [[9, 8, 7]]


@pytest.mark.parametrize("base,k", [(10, 3), (7, 3), (2, 5), (59, 2), (5, 1)])
def test_every_id_round_trips(base, k):
    ids = torch.arange(base**k)
    digits = to_digits(ids, base, k)
    assert digits.min() >= 0 and digits.max() <= base - 1
    assert torch.equal(from_digits(digits, base), ids)
    # distinct ids have distinct digit tuples (no aliasing)
    assert len({tuple(d) for d in digits.tolist()}) == base**k


def test_last_addressable_id_is_accepted():
    base, k = 59, 3
    top = base**k - 1
    check_ids(torch.tensor([0, O200K, top]), base, k)  # ids in [V, b^k) are valid
    assert to_digits(torch.tensor([top]), base, k).tolist() == [[58, 58, 58]]


@pytest.mark.parametrize("bad", [-1, -205_379, 205_379, 205_380, 10**9])
def test_out_of_range_ids_are_rejected_with_id_and_range(bad):
    ids = torch.tensor([0, 5, bad, 7])
    with pytest.raises(ValueError) as info:
        to_digits(ids, 59, 3)
    message = str(info.value)
    assert str(bad) in message
    assert "[0, 205379)" in message


def test_rejection_names_the_negative_id_when_both_ends_are_bad():
    with pytest.raises(ValueError, match=r"token id -3 "):
        check_ids(torch.tensor([-3, 10**6]), 59, 3)


def test_empty_ids_are_fine():
    check_ids(torch.zeros(0, dtype=torch.long), 10, 3)
    assert to_digits(torch.zeros(0, dtype=torch.long), 10, 3).shape == (0, 3)


@pytest.mark.parametrize(
    "vocab_size,k,expected",
    [
        (125, 3, 5),  # V = b^k exactly
        (126, 3, 6),  # V = b^k + 1
        (205_379, 3, 59),
        (205_380, 3, 60),
        (1, 3, 2),  # the base never goes below 2
        (1, 1, 2),
        (2, 3, 2),
        (2, 1, 2),
        (3, 1, 3),  # k = 1: b = V
        (1024, 10, 2),
        (1025, 10, 3),
        (10**12, 2, 10**6),  # float root would be fragile here; the result must be exact
        (10**12 + 1, 2, 10**6 + 1),
        (3**40, 40, 3),
        (3**40 + 1, 40, 4),
    ],
)
def test_min_base_edge_cases(vocab_size, k, expected):
    assert min_base(vocab_size, k) == expected


def test_min_base_matches_brute_force():
    for k in range(1, 5):
        for vocab_size in range(1, 400):
            assert min_base(vocab_size, k) == naive_min_base(vocab_size, k), (vocab_size, k)


@pytest.mark.parametrize("vocab_size,k", [(0, 3), (-5, 3), (10, 0)])
def test_min_base_rejects_nonsense(vocab_size, k):
    with pytest.raises(ConfigError, match="at least 1"):
        min_base(vocab_size, k)
