"""``leviathan.hf.adopted_class`` holds its class to ``adopt``'s rule (issue 30 round 25, Y600-Y602): the abstract
``PreTrainedModel`` gave a class named ``LeviathanPreTrainedModel`` (the name of leviathan.hf's own base class), the
project's own ``LeviathanForCausalLM`` gave ``LeviathanLeviathanForCausalLM``, and ``BertForMaskedLM``, which adopt
refuses as no causal LM, gave ``LeviathanBertForMaskedLM``, each without a word. The same lookup crashed
``load_adopted`` of a folder whose config.json names ``PreTrainedModel`` as its architecture.
"""

from __future__ import annotations

import json

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, adopt, adopted_class, load_adopted  # noqa: E402


@pytest.mark.parametrize("base, why", [
    (transformers.PreTrainedModel, r"no causal language model class \(it has no config class"),  # Y600
    (LeviathanForCausalLM, r"leviathan's own model, whose input embedding is a LeviathanGenerator already"),  # Y601
    (transformers.BertForMaskedLM, r"no causal language model class .*BertConfig, to BertLMHeadModel"),  # Y602
    (transformers.LlamaModel, r"no causal language model class .*LlamaConfig, to LlamaForCausalLM"),
])
def test_a_class_adopt_refuses_is_refused(base, why):
    with pytest.raises(UserError, match=rf"adopted_class\({base.__name__}\): it is {why}"):
        adopted_class(base)


def test_causal_lm_classes_are_taken():
    """What adopt adopts still gets its class, an adopted class itself, and a BERT's decoder form."""
    llama = adopted_class(transformers.LlamaForCausalLM)
    assert llama.__name__ == "LeviathanLlamaForCausalLM" and adopted_class(llama) is llama
    assert adopted_class(transformers.BertLMHeadModel).__name__ == "LeviathanBertLMHeadModel"


def test_a_saved_architecture_of_the_abstract_base_is_refused(tmp_path):
    """load_adopted's own check (``_base_class``): config.json edited to name ``PreTrainedModel`` was an AttributeError
    from transformers' mapping (its config class is None)."""
    config = transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=4)
    adopt(config, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(tmp_path / "s")
    saved = json.loads((tmp_path / "s" / "config.json").read_text())
    saved["leviathan_generator"]["architecture"] = "PreTrainedModel"
    (tmp_path / "s" / "config.json").write_text(json.dumps(saved))
    with pytest.raises(UserError, match=r"architecture is 'PreTrainedModel', which is no causal language model"):
        load_adopted(tmp_path / "s")
