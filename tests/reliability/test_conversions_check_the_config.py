"""The native <-> Hugging Face conversions check the config they carry (issue 30 round 27): ``from_native(m,
use_cache='no')`` stored the text, which transformers reads as true (S133; now ``LeviathanConfig._check_switches``,
the project's switch rule, for every switch of the config); ``to_native`` of a model whose ``config.generator_rank``
was set after it was built ended in torch's raw "size mismatch for model.embed_tokens.spline_coeff" (S134; now
``export._check_config_describes`` names the field and the model's own value).
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan import CausalLM, ModelConfig  # noqa: E402
from leviathan.errors import ArgumentValueError, UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM  # noqa: E402
from leviathan.hf.export import from_native, to_native  # noqa: E402

pytestmark = pytest.mark.reliability

SIZES = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=64,
             generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)


@pytest.mark.parametrize("given, optional", [(dict(use_cache="no"), False), (dict(return_dict="no"), True),
                                             (dict(output_hidden_states=1), True)])
def test_from_native_refuses_a_text_switch(given, optional):
    """S133."""
    (name, value), = given.items()
    said = f"{name} must be True or False, got {value!r}; pass {name}=True or {name}=False"
    with pytest.raises(UserError, match=f"^{said}.*{', or None' if optional else 'switch[)]'}$"):
        from_native(CausalLM(ModelConfig(**SIZES)), **given)


def test_from_native_still_takes_a_switch():
    assert from_native(CausalLM(ModelConfig(**SIZES)), use_cache=False).config.use_cache is False


@pytest.mark.parametrize("field, value, named", [
    ("generator_rank", 8, r"config\.generator_rank is 8, the model's 4\): .*put it back \(config\.generator_rank = 4\)"),
    ("num_hidden_layers", 2, r"config\.num_hidden_layers is 2, the model's 1\)"),
])
def test_to_native_names_a_config_changed_after_building(field, value, named):
    """S134."""
    model = LeviathanForCausalLM(LeviathanConfig(**SIZES))
    setattr(model.config, field, value)
    with pytest.raises(ArgumentValueError, match=f"^to_native: the model's config no longer describes its weights "
                                                 f"\\({named}"):
        to_native(model)


def test_to_native_still_converts():
    assert isinstance(to_native(LeviathanForCausalLM(LeviathanConfig(**SIZES))), CausalLM)
