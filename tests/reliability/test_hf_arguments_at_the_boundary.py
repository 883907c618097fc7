"""Arguments of the wrong type or meaning for the transformers side are refused at leviathan's boundary in one line
naming the argument and the fix, not transformers' or torch's raw traceback (issue 30 round 24): ``load_adopted``
with ``config=`` (W193) or a config setting (``rope_theta``, ``vocab_size``: W597, W598), ``LeviathanForCausalLM``
of a ``LlamaConfig`` (W224), labels of another shape than the inputs (W226), and saving an adopted model built on
the meta device (W650).
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import ArgumentTypeError, ArgumentValueError, UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt, load_adopted  # noqa: E402

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
LLAMA = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
SMALL = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, generator_seed_dim=8,
             generator_modes=2, generator_knots=8, generator_rank=4)


@pytest.fixture(scope="module")
def adopted_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adopted") / "m"
    adopt(transformers.LlamaConfig(**LLAMA), **GEN).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("given, named", [
    (dict(config=transformers.LlamaConfig(**LLAMA)), "config=LlamaConfig is not taken"),  # W193
    (dict(rope_theta=1.0), "rope_theta=1.0 would change a setting"),  # W597
    (dict(vocab_size=299), "vocab_size=299 would change a setting"),  # W598
    (dict(dtpye="float16"), "'dtpye' is no option of from_pretrained"),  # a misspelled option: the same TypeError
])
def test_load_adopted_refuses_what_would_change_the_saved_model(adopted_folder, given, named):
    with pytest.raises(UserError, match=named) as e:
        load_adopted(adopted_folder, **given)
    assert "; " in str(e.value) and "\n" not in str(e.value)


def test_load_adopted_still_takes_from_pretrained_options(adopted_folder):
    assert load_adopted(adopted_folder, dtype=torch.float16).dtype == torch.float16


def test_a_transformers_config_is_named():
    """W224: 'LlamaConfig' object has no attribute 'to_model_config', from transformers' configuration_utils."""
    with pytest.raises(ArgumentTypeError, match="takes a LeviathanConfig, got a LlamaConfig; build one with"):
        LeviathanForCausalLM(transformers.LlamaConfig(**LLAMA))


def test_labels_of_another_shape_are_named():
    """W226: torch's "Expected input batch_size (18) to match target batch_size (10)"; and a label outside the
    vocabulary, torch's IndexError."""
    model = LeviathanForCausalLM(LeviathanConfig(**SMALL))
    x = torch.randint(0, 300, (2, 9))
    with pytest.raises(ArgumentValueError, match=r"labels must have the shape of input_ids \(2, 9\).*got \(2, 5\)"):
        model(input_ids=x, labels=x[:, :5])
    with pytest.raises(ArgumentValueError, match="label 300 is outside"):
        model(input_ids=x, labels=torch.full_like(x, 300))
    with pytest.raises(ArgumentTypeError, match="labels must be an integer tensor"):
        model(input_ids=x, labels=x.float())
    assert torch.isfinite(model(input_ids=x, labels=x).loss)


def test_saving_an_adopted_meta_model_is_named(tmp_path):
    """W650: torch's "unknown device type for autocast" from the generator's bake, and nothing written."""
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**LLAMA))
    adopted = adopt(model, **GEN)
    with pytest.raises(UserError, match="is on the meta device .*build the model off the meta device"):
        adopted.save_pretrained(tmp_path / "meta")
    assert list(tmp_path.iterdir()) == []
