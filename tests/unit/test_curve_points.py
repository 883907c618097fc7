"""A validation ``Curve`` is checked where it is made, and a diverged point is not interpolated from (issue 30 round 23;
``efficiency.Curve.__post_init__``, ``efficiency.tokens_to_reach``).

- U438: ``sample_efficiency(Curve([], []), c)`` ended in numpy's IndexError from ``final_loss``.
- U439: a curve whose tokens run 512, 256 was taken, its first point read as its last (factor 1.0, no word).
- U440: a model curve of losses [nan, 5.5] "reached" the target at NaN tokens.
- U442: ``tokens_to_reach(Curve(tokens of 2, losses of 3), 2.5)`` returned 1.5.
"""

import numpy as np
import pytest

from leviathan.errors import ArgumentTypeError, ArgumentValueError
from leviathan.experiments.method.efficiency import Curve, gain_over_training, sample_efficiency, tokens_to_reach

REFERENCE = Curve(np.array([256.0, 512.0]), np.array([5.6, 5.5]))


@pytest.mark.parametrize("tokens, loss, said", [
    ([], [], "Curve: holds no points; "),
    ([512.0, 256.0], [5.5, 5.6], "Curve: tokens are not in increasing order: tokens[1] is 256 after 512; "),
    ([256.0, 256.0], [5.6, 5.5], "Curve: tokens are not in increasing order: tokens[1] is 256 after 256; "),
    ([1.0, 2.0], [3.0, 2.0, 1.0], "Curve: holds 2 token counts but 3 losses; "),
    ([0.0, float("nan")], [3.0, 2.0], "Curve: tokens[1] is nan, not a token count >= 0; "),
    ([-1.0, 2.0], [3.0, 2.0], "Curve: tokens[0] is -1.0, not a token count >= 0; "),
    ([[1.0, 2.0]], [3.0, 2.0], "Curve: tokens must be a 1-d array, got shape (1, 2); "),
], ids=["U438-empty", "U439-unsorted", "repeated", "U442-lengths", "nan-tokens", "negative", "2-d"])
def test_a_curve_that_is_no_curve_is_refused_in_one_line(tokens, loss, said):
    with pytest.raises(ArgumentValueError) as caught:
        Curve(np.array(tokens), np.array(loss))
    assert str(caught.value).startswith(said) and "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_the_functions_that_take_curves_name_what_is_not_one():
    with pytest.raises(ArgumentTypeError, match=r"^Curve: tokens must be an array of numbers, got str 'ab'; "):
        Curve("ab", [1.0, 2.0])
    for call, said in ((lambda: sample_efficiency((1, 2), REFERENCE), "sample_efficiency: model must be a Curve"),
                       (lambda: gain_over_training(REFERENCE, None), "gain_over_training: reference must be a Curve"),
                       (lambda: tokens_to_reach([1.0], 2.0), "tokens_to_reach: curve must be a Curve")):
        with pytest.raises(ArgumentTypeError, match="^" + said):
            call()


def test_a_point_after_a_diverged_evaluation_is_reached_where_it_was_measured():
    """U440: the crossing is not interpolated from a NaN (or infinite) loss; a NaN loss is still a point (J280)."""
    for before in (float("nan"), float("inf")):
        res = sample_efficiency(Curve(np.array([256.0, 512.0]), np.array([before, 5.5])), REFERENCE)
        assert res.reached and res.tokens == 512.0 and res.factor == 1.0
    assert tokens_to_reach(Curve([0, 100, 200, 300], [9.0, float("nan"), 4.0, 3.0]), 3.5) == pytest.approx(250.0)
    assert Curve([256, 512], [5.6, 5.5]).final_tokens == 512.0  # lists are taken as the arrays they hold


@pytest.mark.parametrize("tokens, loss, name", [
    (np.array([False, True]), [5.0, 4.0], "tokens"),
    (["1", "2"], [5.0, 4.0], "tokens"),
    ([1, True], [5.0, 4.0], "tokens"),
    ([1.0, 2.0], [True, False], "loss"),
    ([1.0, 2.0], np.array(["5", "4"]), "loss"),
], ids=["Y188-bools", "Y189-texts", "a-bool-among-ints", "bool-losses", "text-losses"])
def test_bools_and_texts_are_no_token_counts_or_losses(tokens, loss, name):
    """Y188, Y189 (issue 30 round 30): ``Curve(np.array([False, True]), ...)`` read the bools as token counts 0 and 1,
    ``Curve(['1', '2'], ...)`` the texts as 1.0 and 2.0, without a word."""
    with pytest.raises(ArgumentTypeError, match=rf"^Curve: {name} must be an array of numbers, got .*; pass a 1-d "):
        Curve(tokens, loss)


def test_numbers_of_any_numpy_kind_still_make_a_curve():
    curve = Curve([np.int64(1), 2, np.uint8(3)], np.array([5.0, float("nan"), 4.0], dtype=np.float32))
    assert curve.tokens.tolist() == [1.0, 2.0, 3.0] and curve.loss.dtype == float
