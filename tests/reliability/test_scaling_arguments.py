"""``power_law`` and ``dense_equivalent`` given values no fit holds (issue 30 round 22, S617-S620, S623): E nan, A
inf, alpha < 0, E < 0 returned nan, inf, a loss growing with size and a negative loss; a bool was taken as the loss
1.0. Each is one UserError naming the argument, the value and the range."""

from __future__ import annotations

import math

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.experiments.method.scaling import dense_equivalent, fit_power_law, power_law

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("E, A, alpha, said", [
    (math.nan, 1.0, 0.5, "E: must be a finite number >= 0, got nan"),            # S617
    (1.0, math.inf, 0.5, "A: must be a finite number > 0, got inf"),             # S618
    (1.0, 1.0, -0.5, "alpha: must be a finite number > 0, got -0.5"),            # S619
    (-5.0, 1.0, 0.5, "E: must be a finite number >= 0, got -5.0"),               # S620
    (1.0, True, 0.5, "A: expected a number, got bool True"),
    (1.0, 1.0, "0.5", "alpha: expected a number, got str '0.5'"),
    (np.array([[1.0], [-1.0]]), 1.0, 0.5, "E: must be a finite number >= 0, got -1.0"),  # a bootstrap draw
], ids=["S617-E-nan", "S618-A-inf", "S619-alpha-negative", "S620-E-negative", "A-bool", "alpha-text", "E-draws"])
def test_power_law_refuses_values_no_fit_holds(E, A, alpha, said):
    with pytest.raises(UserError, match=f"power_law: {said}.*pass the fit's values"):
        power_law(1e6, E, A, alpha)


def test_power_law_still_takes_a_fits_values_and_its_draws():
    fit = fit_power_law([1e6, 2e6, 4e6, 8e6], [3.0, 2.9, 2.8, 2.75], num_bootstrap=10)
    assert power_law(1e6, fit.E, fit.A, fit.alpha) == pytest.approx(fit.predict(1e6))
    assert power_law(1e6, 0.0, np.float32(1.0), np.int64(1)) == pytest.approx(1e-6)
    curves = power_law(np.array([[1e6, 2e6]]), fit.draws[:, :1], fit.draws[:, 1:2], fit.draws[:, 2:3])
    assert curves.shape == (10, 2) and np.isfinite(curves).all()


@pytest.mark.parametrize("loss, params, seed, said", [
    (True, 1e6, 0, "loss: expected a number, got bool True"),                    # S623
    ([2.9, True], 1e6, 0, "loss: expected a number, got list"),
    ("2.9", 1e6, 0, "loss: expected a number, got str"),
    (2.9, True, 0, "params: expected a finite number > 0, got bool True"),
    (2.9, 1e6, -1, "seed: must be a whole number >= 0, got -1"),
], ids=["S623-bool", "bool-among-seeds", "text", "params-bool", "seed"])
def test_dense_equivalent_refuses_a_bool_or_a_text(loss, params, seed, said):
    fit = fit_power_law([1e6, 2e6, 4e6, 8e6], [3.0, 2.9, 2.8, 2.75], num_bootstrap=10)
    with pytest.raises(UserError, match=f"dense_equivalent: {said}"):
        dense_equivalent(fit, loss, params, seed=seed)
    with pytest.raises(UserError, match="dense_equivalent: fit: expected a PowerLawFit, got dict"):
        dense_equivalent({"E": 1.0}, 2.9, 1e6)
    assert dense_equivalent(fit, [2.9, np.float32(2.95)], np.int64(10**6)).flag == "ok"


def test_the_fit_and_its_inverse_name_arguments_of_the_wrong_kind():
    """The public functions' walk (round 22): ``invert_power_law`` took E nan and alpha 0 (inf, 0), ``fit_power_law``
    a text ci (Python's "'<' not supported"), seed -1 (numpy's error) or True, a bool among the sizes; ``format_fit``
    of a dict was an AttributeError."""
    from leviathan.experiments.method.scaling import format_fit, invert_power_law

    for E, alpha, said in ((math.nan, 0.5, "E: must be a finite number >= 0, got nan"),
                           (1.0, 0.0, "alpha: must be a finite number > 0, got 0.0")):
        with pytest.raises(UserError, match=f"invert_power_law: {said}"):
            invert_power_law(3.0, E, 1.0, alpha)
    assert math.isinf(float(invert_power_law(1.0, 1.5, 10.0, 0.3)))  # below E: no size reaches it, by design
    sizes, losses = [1e6, 2e6, 4e6, 8e6], [3.0, 2.9, 2.8, 2.75]
    for kwargs, said in (({"ci": "x"}, "ci: expected a number"), ({"seed": -1}, "seed: must be a whole number"),
                         ({"seed": True}, "seed: expected a whole number")):
        with pytest.raises(UserError, match=f"fit_power_law: {said}"):
            fit_power_law(sizes, losses, num_bootstrap=5, **kwargs)
    with pytest.raises(UserError, match="fit_power_law: N: expected a number"):
        fit_power_law([True, 2e6, 4e6, 8e6], losses, num_bootstrap=0)
    with pytest.raises(UserError, match="format_fit: fit: expected a PowerLawFit, got dict"):
        format_fit({})


def test_the_ladder_functions_name_rows_and_names_of_the_wrong_kind():
    """The public functions' walk (round 22): ``row_params(dict)`` and ``ladder_variant(path)`` were AttributeErrors,
    ``scaling_from_results(rows, variant=5)`` "no 5 runs", ``eval_set=None`` "no ... runs with a None loss"."""
    from leviathan.experiments.machinery.results import ResultRow
    from leviathan.experiments.method.scaling import ladder_variant, row_params, scaling_from_results

    row = ResultRow.from_dict({"name": "x", "variant": "dense_tied", "seed": 0, "params": {"total": 10}})
    assert row_params(row) == 10.0
    with pytest.raises(UserError, match="row_params: row: expected a ResultRow, got dict"):
        row_params({"name": "x"})
    with pytest.raises(TypeError, match=r"rows must be results rows, e.g. ladder_variant\(read_results"):
        ladder_variant("x")
    for kwargs, said in (({"variant": 5}, "variant: expected a variant's name"), ({"variant": ""}, "variant: expected"),
                         ({"eval_set": None}, "eval_set: expected the name of an eval set")):
        with pytest.raises(UserError, match=f"scaling_from_results: {said}"):
            scaling_from_results([row], **kwargs)
    with pytest.raises(UserError, match="no nope runs with a 'val' loss.*--variant"):  # a name: the flag's line
        scaling_from_results([row], variant="nope")


def test_split_for_threads_refuses_a_piece_of_no_length():
    """The walk (round 22): ``split_for_threads(text, 0)`` (or True) cut nothing, bytes were cut as text."""
    from leviathan.data.tokenizer import split_for_threads

    for chars in (0, True, -1):
        with pytest.raises(ValueError, match="split_for_threads: max_chars"):
            split_for_threads("abc\\nDef", chars)
    with pytest.raises(TypeError, match="split_for_threads: text must be a str, got bytes"):
        split_for_threads(b"abc", 10)
    assert split_for_threads("abc", 10) == ["abc"]


@pytest.mark.parametrize("argv, said", [
    (["--sizes", "-1e6,2e6,4e6,8e6", "--losses", "4,3.5,3.2,3.0"], "error: sizes and losses must be positive"),
    (["--sizes", "1e6,2e6,4e6,8e6", "--losses", "-4,3.5,3.2,3.0"], "error: sizes and losses must be positive"),
], ids=["AH162-negative-size", "negative-loss"])
def test_a_negative_first_value_reaches_its_rule_not_argparse(capsys, argv, said):
    """Round 35 (AH162): `analyze fit --sizes -1e6,2e6,...` was argparse's "argument --sizes: expected one argument"
    (it took '-1e6,...' for an option): one was given. ``negative_values`` widens the parser's negative-number rule,
    so the value reaches its own rule's line."""
    from leviathan.cli import main

    assert main(["analyze", "fit", *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and "expected one argument" not in err, err
