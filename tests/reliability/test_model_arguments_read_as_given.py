"""The model's call arguments are refused when they cannot mean what they say, not read some other way (issue 30
round 28: U59, U99, U565, all silent).

- U59: ``model(x, return_logits=False)`` without labels returned the full (B, T, V) logits: the switch promises no
  (tokens x V) logits and there is no loss to return instead; refused naming both fixes.
- U99: ``restrict_output_([[1, 2]])`` (a 2-D id set) was read flattened; anything but a 1-D list or tensor of ids is
  refused (a 0-d id too).
- U565: ``positions.check_within_positions(-1, 5, 64)`` (a negative cached length) passed; each argument is a whole
  number now (``limit`` >= 1), as ``fit_positions``' are.
"""

from __future__ import annotations

import pytest
import torch

from leviathan.errors import ArgumentTypeError, ArgumentValueError
from leviathan.positions import check_within_positions

from test_model_inputs_held_like_their_siblings import _model

pytestmark = [pytest.mark.reliability]


def test_return_logits_false_without_labels_is_refused():
    model, ids = _model(), torch.tensor([[1, 2, 3]])
    with pytest.raises(ArgumentValueError, match=r"CausalLM\.forward: return_logits=False without labels has nothing "
                                                 r"to return .*; pass labels=\.\.\., or return_logits=True") as e:
        model(ids, return_logits=False)
    assert "\n" not in str(e.value)
    assert model(ids, labels=ids, return_logits=False)[0] is None  # with labels: the loss alone, as before
    assert model(ids)[0].shape == (1, 3, 300)


@pytest.mark.parametrize("ids", [[[1, 2]], torch.tensor([[1, 2], [3, 4]]), torch.tensor(5)],
                         ids=["U99-nested-list", "2-D-tensor", "0-d-tensor"])
def test_restrict_output_takes_only_a_flat_id_set(ids):
    model = _model()
    with pytest.raises(ArgumentValueError, match=r"restrict_output_: ids must be a 1-D set of token ids .*got "
                                                 r"[02]-D of shape"):
        model.restrict_output_(ids)
    assert not model.restricted
    assert model.restrict_output_([1, 2]).restricted and model.restrict_output_(torch.tensor([3, 4])).restricted


@pytest.mark.parametrize("args, kind, named", [
    ((-1, 5, 64), ArgumentValueError, r"past must be a whole number >= 0, got -1"),
    ((0, -5, 64), ArgumentValueError, r"length must be a whole number >= 0, got -5"),
    ((0, 5, 0), ArgumentValueError, r"limit must be a whole number >= 1, got 0"),
    ((True, 5, 64), ArgumentTypeError, r"past must be a whole number >= 0, got bool True"),
    ((0, 2.5, 64), ArgumentTypeError, r"length must be a whole number >= 0, got float 2\.5"),
], ids=["U565-negative-past", "negative-length", "no-positions", "bool", "fraction"])
def test_check_within_positions_checks_every_argument(args, kind, named):
    with pytest.raises(kind, match=rf"check_within_positions: {named}; pass token counts"):
        check_within_positions(*args)
    check_within_positions(10, 54, 64)  # fits: nothing said
    with pytest.raises(ValueError, match=r"reaches position 65 \(10 cached \+ 55 new ids\)"):
        check_within_positions(10, 55, 64)
