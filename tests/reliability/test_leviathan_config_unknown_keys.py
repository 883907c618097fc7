"""LeviathanConfig refuses a key that no one reads (issue 30 round 30, Y483, Y488).

``LeviathanConfig(..., embedding='factorized', factorized_rank=0)`` (the setting is ``embedding_rank``) and
``LeviathanConfig(..., unknown_key=5)`` were stored, saved into config.json and read by nothing, as transformers keeps
any keyword a config is given, while a near miss of a field (``generator_rnk``) was refused since round 24 (W259).
Now every key that is neither a field nor one transformers itself reads or writes is refused in one ConfigError line
naming it and its near spelling (``hf.config_keys.check_config_keys``), at construction and at loading a config.json
that carries one; the keys transformers passes through (``torch_dtype``, ``architectures``, ``attn_implementation``,
``num_labels``, ``name_or_path``, transformers 4's generation defaults) still load, and save/load round trips hold.
"""

from __future__ import annotations

import copy
import json

import pytest
from transformers import AutoConfig, AutoModelForCausalLM

from leviathan.config import ConfigError
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

pytestmark = [pytest.mark.reliability]

SMALL = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4)


def test_factorized_rank_is_refused_naming_embedding_rank():
    with pytest.raises(ConfigError) as caught:
        LeviathanConfig(**SMALL, embedding="factorized", factorized_rank=0)
    assert str(caught.value) == ("LeviathanConfig has no setting 'factorized_rank' (did you mean 'embedding_rank'?), "
                                 "so it would be saved and never read; use one of ModelConfig's fields, or remove the "
                                 "key (from config.json too)")


def test_an_unknown_key_is_refused_listing_the_fields():
    with pytest.raises(ConfigError) as caught:
        LeviathanConfig(**SMALL, unknown_key=5)
    said = str(caught.value)
    assert said.startswith("LeviathanConfig has no setting 'unknown_key', so it would be saved and never read; use "
                           "one of ModelConfig's fields (vocab_size, hidden_size, ")
    assert "\n" not in said and said.endswith("or remove the key (from config.json too)")


def test_a_config_json_carrying_an_unknown_key_is_refused_at_loading(tmp_path):
    LeviathanForCausalLM(LeviathanConfig(**SMALL)).save_pretrained(tmp_path)
    path = tmp_path / "config.json"
    config = json.loads(path.read_text())
    path.write_text(json.dumps({**config, "unknown_key": 5}))
    with pytest.raises(ConfigError, match="no setting 'unknown_key'"):
        LeviathanConfig.from_pretrained(tmp_path)
    with pytest.raises(ConfigError, match="no setting 'unknown_key'"):
        LeviathanForCausalLM.from_pretrained(tmp_path)


def test_the_keys_transformers_passes_still_load_and_round_trip(tmp_path):
    config = LeviathanConfig(**SMALL, torch_dtype="float32", num_labels=3, attn_implementation="eager",
                             name_or_path="x", architectures=["LeviathanForCausalLM"], max_length=20,
                             tokenizer_class="PreTrainedTokenizerFast")
    assert LeviathanConfig.from_dict(config.to_dict()).to_dict() == config.to_dict()
    assert LeviathanConfig(**config.to_dict()).hidden_size == 32
    assert copy.deepcopy(config).vocab_size == 300
    LeviathanForCausalLM(LeviathanConfig(**SMALL)).save_pretrained(tmp_path)
    assert LeviathanForCausalLM.from_pretrained(tmp_path).config.hidden_size == 32
    assert AutoConfig.from_pretrained(tmp_path, output_hidden_states=True).output_hidden_states is True
    model = AutoModelForCausalLM.from_pretrained(tmp_path, dtype="float32", attn_implementation="eager")
    model.save_pretrained(tmp_path / "again")
    assert LeviathanConfig.from_pretrained(tmp_path / "again").to_dict()["vocab_size"] == 300


def test_the_ways_to_change_a_config_refuse_what_its_constructor_refuses(tmp_path):
    """Round 31: AA209 (``update`` stored factorized_rank), AA210 (``update_from_string`` a misspelt key: transformers'
    raw ValueError), AA203 (``from_dict``'s keyword dropped without a word), AA204 (an attribute set after, saved into
    a config.json from_pretrained refuses). Each one ConfigError line; nothing changed or written."""
    config = LeviathanConfig(**SMALL)
    with pytest.raises(ConfigError, match=r"^update: LeviathanConfig has no setting 'factorized_rank' \(did you mean "
                                          r"'embedding_rank'\?\)"):
        config.update({"factorized_rank": 0})
    with pytest.raises(ConfigError, match=r"^update_from_string: LeviathanConfig has no setting 'num_hidden_layer' "
                                          r"\(did you mean 'num_hidden_layers'\?\); write KEY=VALUE pairs"):
        config.update_from_string("hidden_size=64,num_hidden_layer=2")
    with pytest.raises(ConfigError, match=r"^update_from_string: 'hidden_size=abc': invalid literal for int\(\)"):
        config.update_from_string("num_hidden_layers=2,hidden_size=abc")
    assert (config.hidden_size, config.num_hidden_layers) == (32, 1) and "factorized_rank" not in config.to_dict()
    config.update_from_string("hidden_size=64,num_hidden_layers=2")
    assert (config.hidden_size, config.num_hidden_layers) == (64, 2)
    with pytest.raises(ConfigError, match=r"^LeviathanConfig has no setting 'factorized_rank' \(did you mean "
                                          r"'embedding_rank'\?\), so factorized_rank=0 would be dropped without a "
                                          r"word; pass one of its settings, or leave it out$"):
        LeviathanConfig.from_dict(dict(SMALL), factorized_rank=0)
    assert LeviathanConfig.from_dict(dict(SMALL), return_unused_kwargs=True, foo=1)[1] == {"foo": 1}
    config.unknown_attr = 5
    with pytest.raises(ConfigError, match=r"^save_pretrained: LeviathanConfig has no setting 'unknown_attr', .*; it "
                                          r"was set after the config was made, and from_pretrained would refuse the "
                                          r"saved config\.json: set it back \(or del config\.NAME\), then save; "
                                          r"nothing was written$"):
        config.save_pretrained(tmp_path / "cfg1")
    with pytest.raises(ConfigError, match=r"^save_pretrained: LeviathanConfig has no setting 'unknown_attr'"):
        model = LeviathanForCausalLM(LeviathanConfig(**SMALL))
        model.config.unknown_attr = 5
        model.save_pretrained(tmp_path / "model1")  # the model's save asks the same
    assert not (tmp_path / "cfg1").exists() and not (tmp_path / "model1").exists()
