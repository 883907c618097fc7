"""``leviathan.hf.model_card.native_card`` refuses arguments it does not take (issue 30 round 25, Y640, Y641): an
unknown ``kind`` ('nonsense-kind', 'plain') was written as a ``leviathan`` card and ``training=5`` was taken, without a
word; ``tokenizer='no'`` (read as true) and a model that is no native one are refused the same way.
"""

from __future__ import annotations

import pytest

from leviathan import CausalLM, ModelConfig
from leviathan.errors import UserError
from leviathan.hf.model_card import native_card


@pytest.fixture(scope="module")
def model():
    return CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4))


@pytest.mark.parametrize("args, kwargs, refusal", [
    (("nonsense-kind",), {}, r"kind: 'nonsense-kind' is none of 'leviathan', 'plain_llama'; pass"),  # Y640
    (("plain",), {"training": 5}, r"kind: 'plain' is none of"),  # Y641
    (("leviathan",), {"training": 5}, r"training: expected a Training or None, got int 5; pass checkpoint_training"),
    (("plain_llama",), {"tokenizer": "no"}, r"tokenizer: must be True or False, got 'no'"),
])
def test_an_argument_it_does_not_take_is_refused(model, args, kwargs, refusal):
    with pytest.raises(UserError, match=rf"^native_card: {refusal}"):
        native_card(model, *args, **kwargs)


def test_a_model_that_is_no_native_one_is_refused():
    with pytest.raises(UserError, match=r"^native_card: model: expected a native leviathan model \(CausalLM\), got int"):
        native_card(5, "leviathan")


def test_the_two_kinds_still_make_their_cards(model):
    assert native_card(model, "leviathan", tokenizer=True).architecture == "LeviathanForCausalLM"
    assert native_card(model, "plain_llama").architecture == "LlamaForCausalLM"
