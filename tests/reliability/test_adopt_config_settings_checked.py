"""``adopt(config)`` checks every setting of the config it builds from, not only the sizes round 26 knew (issue 30
round 27: S1-S5, S8, S16, S23, S24, S53, S54 tracebacks; S9, S14, S15 silent).

Each family's spelling is read through its ``attribute_map`` or ``adoption_config.ALIASES`` (GPT-2's ``n_positions``
and ``n_inner``), activations and rope types are held to transformers' own tables, and the line names the field as
the config spells it, the value and the range:

- S1, S2, S9: GPT-2's ``n_positions=-1`` was torch's "negative dimension", ``n_positions=0`` and Llama's
  ``max_position_embeddings=0`` a model that scored 9 positions without a word;
- S3, S8: ``resid_pdrop=1.5`` was torch's raw ValueError at build, ``attention_dropout=2.0`` a RuntimeError at the
  first training forward;
- S4: ``hidden_act='nope'`` was ACT2FN's KeyError; S5: ``pad_token_id=500`` of 300 ids torch's AssertionError;
- S14: Phi's rotary width 8 x 0.1 rounded to 0 (no rotary positions), built and run without a word;
- S15, S16: a linear rope of factor -2 was taken, a rope_type 'nope' was ROPE_INIT_FUNCTIONS' KeyError;
- S23, S24: Mistral's ``sliding_window`` of 0 or -4, S53, S54: GPT-2's ``n_inner`` of 0 or -1 were shape errors at the
  first forward (None, the valid "unset", still adopts).
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
LLAMA = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
GPT2 = dict(vocab_size=300, n_embd=32, n_layer=1, n_head=4, n_positions=64)


def _llama(**after):
    """A valid Llama config with ``after`` set on it afterwards, as a caller may (a config checks only when made)."""
    config = transformers.LlamaConfig(**LLAMA)
    for key, value in after.items():
        setattr(config, key, value)
    return config


def _phi(**kwargs):
    return transformers.PhiConfig(**{**LLAMA, "num_key_value_heads": 4, **kwargs})


def _mistral(**kwargs):
    return transformers.MistralConfig(**LLAMA, **kwargs)


@pytest.mark.parametrize("make, named", [
    (lambda: transformers.GPT2Config(**{**GPT2, "n_positions": -1}),
     r"GPT2Config\.n_positions must be a whole number in \[1, 16,777,216\], got -1; set it in the config"),
    (lambda: transformers.GPT2Config(**{**GPT2, "n_positions": 0}), r"GPT2Config\.n_positions .*got 0; "),
    (lambda: _llama(max_position_embeddings=0), r"LlamaConfig\.max_position_embeddings .*\[1, 16,777,216\], got 0"),
    (lambda: transformers.GPT2Config(**GPT2, resid_pdrop=1.5),
     r"GPT2Config\.resid_pdrop must be a probability in \[0, 1\], got 1\.5; set it in the config"),
    (lambda: _llama(attention_dropout=2.0), r"LlamaConfig\.attention_dropout must be a probability in \[0, 1\], got 2"),
    (lambda: _llama(attention_dropout=float("nan")), r"LlamaConfig\.attention_dropout must be a probability"),
    (lambda: _llama(hidden_act="nope"), r"LlamaConfig\.hidden_act is 'nope', not an activation transformers has; "
                                        r"set it to one of .*silu"),
    (lambda: transformers.GPT2Config(**GPT2, activation_function="nope"), r"GPT2Config\.activation_function is 'nope'"),
    (lambda: _llama(pad_token_id=500), r"LlamaConfig\.pad_token_id 500 is not a token id of this model \(whole "
                                       r"numbers 0 to 299, .*\); set pad_token_id to an id below 300"),
    (lambda: _llama(pad_token_id=-1), r"LlamaConfig\.pad_token_id -1 is not a token id"),
    (lambda: _phi(partial_rotary_factor=0.1), r"PhiConfig's rotary width \(head_dim x partial_rotary_factor = 8 x "
                                              r"0\.1, rounded down\) is 0, no pair of values to turn"),
    (lambda: _llama(rope_parameters={"rope_type": "linear", "factor": -2.0, "rope_theta": 10000.0}),
     r"LlamaConfig's rope_parameters factor \(rope_type 'linear'\) must be a finite number > 0, got -2\.0"),
    (lambda: _llama(rope_parameters={"rope_type": "nope", "rope_theta": 10000.0}),
     r"LlamaConfig's rope_parameters rope_type is 'nope', not a rope transformers has; set it to one of .*linear"),
    (lambda: _mistral(sliding_window=0), r"MistralConfig\.sliding_window .*got 0; .*or None for full attention"),
    (lambda: _mistral(sliding_window=-4), r"MistralConfig\.sliding_window .*got -4"),
    (lambda: transformers.GPT2Config(**GPT2, n_inner=0), r"GPT2Config\.n_inner .*got 0; .*or None for 4 x the width"),
    (lambda: transformers.GPT2Config(**GPT2, n_inner=-1), r"GPT2Config\.n_inner .*got -1"),
    (lambda: _llama(num_hidden_layers=2000), r"LlamaConfig\.num_hidden_layers .*\[1, 1,024\], got 2,000"),
], ids=["S1", "S2", "S9", "S3", "S8", "dropout-nan", "S4", "gpt2-activation", "S5", "pad-negative", "S14", "S15", "S16",
        "S23", "S24", "S53", "S54", "layers-past-bound"])
def test_adopt_refuses_each_setting_out_of_its_range_in_one_line(make, named):
    """Each was a raw torch or transformers error at build or at the first forward, or a model built without a word."""
    with pytest.raises(UserError, match=rf"^adopt: {named}") as e:
        adopt(make(), **GEN)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("make", [
    lambda: transformers.GPT2Config(**GPT2, n_inner=None, resid_pdrop=0.0),
    lambda: _phi(),  # partial_rotary_factor 0.5: a rotary width of 4
    lambda: _mistral(sliding_window=4),
    lambda: _mistral(sliding_window=None),
    lambda: _llama(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}, pad_token_id=0),
    lambda: transformers.Gemma3TextConfig(**{**LLAMA, "num_hidden_layers": 2}, head_dim=8, sliding_window=4),
], ids=["gpt2-n_inner-None", "phi", "mistral-window", "mistral-no-window", "llama-linear-rope", "gemma3-nested-rope"])
def test_valid_settings_of_each_family_still_adopt(make):
    model = adopt(make(), **GEN)
    model.train()
    assert model(torch.tensor([[1, 2, 3, 4, 5]])).logits.shape == (1, 5, 300)
