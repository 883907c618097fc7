"""The memory pre-flight's own public functions check their arguments in one line (issue 30 round 27, S306, S307,
S309).

``step_activation_bytes(model, tokens)`` took a ModelConfig (its docstring) under a parameter named model: the model
itself (S306) and a text (S307) were raw AttributeErrors, "'CausalLM' object has no attribute 'hidden_size'"; a
CausalLM is now read by its ``.config``. ``check_training_memory(..., activations=-10**15)`` subtracted the negative
count from the need, so any model passed the check (S309).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_loss_and_generation_values_held_to_their_meaning import one_line  # noqa: E402
from test_model_inputs_held_like_their_siblings import _config, _model  # noqa: E402

from leviathan.errors import ArgumentTypeError, ArgumentValueError  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_the_activation_estimate_takes_a_config_or_its_model_and_nothing_else():
    from leviathan.memory_preflight import step_activation_bytes

    assert step_activation_bytes(_model(), 64) == step_activation_bytes(_config(), 64) > 0  # S306: read its .config
    one_line(lambda: step_activation_bytes("x", 5), ArgumentTypeError, "step_activation_bytes: model must be a "
             "ModelConfig", "got str 'x'", "pass run_config.model")  # S307
    one_line(lambda: step_activation_bytes(_config(), -5), ArgumentValueError, "tokens must be a whole number >= 1",
             "got -5")
    one_line(lambda: step_activation_bytes(_config(), 5.0), ArgumentTypeError, "tokens must be a whole number")
    one_line(lambda: step_activation_bytes(_config(), 5, "no"), ArgumentTypeError, "chunked_loss must be True or False")


def test_the_check_refuses_a_negative_or_fractional_count():
    from leviathan.memory_preflight import check_training_memory

    one_line(lambda: check_training_memory([10**12], "x", "y", activations=-10**16), ArgumentValueError,
             "check_training_memory: activations must be a whole number >= 0", "step_activation_bytes")  # S309
    one_line(lambda: check_training_memory([-5], "x", "y"), ArgumentValueError, "each of parameters must be a whole "
             "number >= 0, got -5")
    one_line(lambda: check_training_memory([1.5], "x", "y"), ArgumentTypeError, "each of parameters")
    one_line(lambda: check_training_memory(5, "x", "y"), ArgumentTypeError, "parameters must be a list of parameter "
             "counts")
    assert check_training_memory((100,), "x", "y", activations=0) is None  # a tuple of counts is still a list of them


def test_validation_tokens_takes_a_run_config_only():
    """Round 28 (U572): a preset's name was the raw "'str' object has no attribute 'eval_batch_size'"."""
    import pytest

    from leviathan.errors import ArgumentTypeError
    from leviathan.memory_preflight import validation_tokens
    from leviathan.run_config import load_run_config

    with pytest.raises(ArgumentTypeError, match=r"^validation_tokens: cfg must be a RunConfig, got str 'tiny'"):
        validation_tokens("tiny")
    assert validation_tokens(load_run_config("tiny", ["model.vocab_size=300"])) > 0
