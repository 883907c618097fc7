"""The training helpers ``lr_at`` and ``param_groups`` given a negative or NaN value (issue 30 round 23, U462, U466,
U467).

``lr_at(step=-5, ...)`` returned a negative learning rate, and ``param_groups(model, weight_decay=-1)`` or ``nan``
returned groups torch's AdamW takes (it checks its default decay, not a group's), without a word, while a train
config's ``optim.weight_decay=-0.1`` is refused. Each is now one line naming the argument, the value and the rule
(``errors.ArgumentValueError``: a UserError that is still the ValueError torch's convention expects).
"""

from __future__ import annotations

import math

import pytest

from leviathan import CausalLM
from leviathan.errors import ArgumentTypeError, ArgumentValueError
from leviathan.presets import preset
from leviathan.train.optim import param_groups
from leviathan.train.schedule import lr_at

pytestmark = [pytest.mark.reliability]


def test_lr_at_refuses_a_negative_step_or_warmup():
    """U462: ``lr_at(-5, 1e-3, 10, 100, 1e-4)`` was -0.0004; the documented values still answer (U463-U465)."""
    with pytest.raises(ArgumentValueError, match=r"lr_at: step must be a whole number >= 0, got -5; steps count"):
        lr_at(-5, 1e-3, 10, 100, 1e-4)
    with pytest.raises(ArgumentValueError, match=r"lr_at: warmup_steps must be a whole number >= 0, got -10"):
        lr_at(5, 1e-3, -10, 100, 1e-4)
    with pytest.raises(ArgumentTypeError, match=r"lr_at: step must be a whole number >= 0, got float 2.5"):
        lr_at(2.5, 1e-3, 10, 100, 1e-4)
    assert lr_at(5, 1e-3, 10, 0, 1e-4) == pytest.approx(6e-4) and lr_at(200, 1e-3, 10, 100, 1e-4) == 1e-4
    assert math.isnan(lr_at(5, math.nan, 10, 100, 1e-4))


@pytest.mark.parametrize("name, value", [("weight_decay", -1), ("weight_decay", math.nan),
                                         ("head_weight_decay", -0.5), ("input_lr_mult", 0.0),
                                         ("input_lr_mult", math.inf)])
def test_param_groups_refuses_a_decay_or_multiplier_no_config_takes(name, value):
    """U466: weight_decay=-1 and U467: weight_decay=nan gave groups with that decay; the other two values alike."""
    model = CausalLM(preset("cpu-tiny", vocab_size=64, num_hidden_layers=1))
    kwargs = {"weight_decay": 0.1, name: value}
    with pytest.raises(ArgumentValueError, match=rf"param_groups: {name} must be a finite number [>=]+ 0, got "
                                                 rf"{value!r}; pass the value of the train config's optim.{name}"):
        param_groups(model, **kwargs)
    with pytest.raises(ArgumentTypeError, match=r"param_groups: weight_decay must be a finite number >= 0, got str"):
        param_groups(model, "0.1")
    assert [g["weight_decay"] for g in param_groups(model, 0.0, head_weight_decay=None)] == [0.0, 0.0]
