"""A save refuses generation ids its own loader refuses (issue 30 round 23, U65): ``adopt`` of a GPT-2 of 300 ids
built with GPT2Config's default bos/eos 50256 saved without a word, and ``load_adopted`` then refused the folder
("bos_token_id 50256 is not a token id of this model ... or save the model again"), saving again writing the same.
``save_folder.check_save_arguments``, which every ``save_pretrained`` of leviathan's runs (adopted and
``LeviathanForCausalLM``), now holds the model's generation_config to the loader's rule before anything is written.
"""

from __future__ import annotations

import pytest
import transformers

from leviathan.errors import UserError
from leviathan.hf import adopt, load_adopted

pytestmark = pytest.mark.reliability

SMALL = dict(seed_dim=8, modes=2, knots=8, rank=4)


def _gpt2():
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=300, n_embd=32, n_layer=1, n_head=2,
                                                                n_positions=64))


def test_an_adopted_gpt2_with_its_default_ids_is_refused_at_save(tmp_path):
    adopted = adopt(_gpt2(), **SMALL)
    with pytest.raises(UserError, match=r"save_pretrained: the model's generation_config: bos_token_id 50256 is not a "
                                        r"token id of this model \(whole numbers 0 to 299.*set "
                                        r"model.generation_config.bos_token_id and model.config.bos_token_id to the "
                                        r"tokenizer's id, or None, then save; nothing was written"):
        adopted.save_pretrained(tmp_path / "gpt2")
    assert not (tmp_path / "gpt2").exists()
    for name in ("bos_token_id", "eos_token_id"):  # the fix the line names
        setattr(adopted.config, name, 0)
        setattr(adopted.generation_config, name, 0)
    adopted.save_pretrained(tmp_path / "gpt2")
    assert load_adopted(tmp_path / "gpt2").generation_config.eos_token_id == 0


def test_a_leviathan_models_generation_id_past_its_vocabulary_is_refused_at_save(tiny_model_config, tmp_path):
    from leviathan.hf.export import from_native
    from leviathan.model.llama import CausalLM

    hf = from_native(CausalLM(tiny_model_config()))
    hf.generation_config.eos_token_id = 999
    with pytest.raises(UserError, match=r"eos_token_id 999 is not a token id of this model \(whole numbers 0 to 49"):
        hf.save_pretrained(tmp_path / "native")
    assert not (tmp_path / "native").exists()


def test_an_adopted_models_config_id_set_after_adopt_is_refused_at_save(tmp_path):
    """Round 31, AA427: ``A.config.eos_token_id = 400`` (300 ids) was saved without a word, and load_adopted then
    refused the folder, blaming an edit of config.json."""
    adopted = adopt(transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                             num_attention_heads=4, max_position_embeddings=64), **SMALL)
    adopted.config.eos_token_id = 400
    with pytest.raises(UserError, match=r"^save_pretrained: LlamaConfig\.eos_token_id 400 is not a token id of this "
                                        r"model \(whole numbers 0 to 299.*\); set eos_token_id to the tokenizer's id "
                                        r"\(below 300\), or None \(load_adopted would refuse the saved config\.json\); "
                                        r"nothing was written$"):
        adopted.save_pretrained(tmp_path / "ge2")
    assert not (tmp_path / "ge2").exists()
