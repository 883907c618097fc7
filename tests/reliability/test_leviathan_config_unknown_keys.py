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
import os

import numpy as np
import pytest
from transformers import AutoConfig, AutoModelForCausalLM

from leviathan.config import ConfigError
from leviathan.errors import UserError
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


@pytest.mark.parametrize("change", [{"hidden_size": "x"}, {"generator_rank": -1}, {"vocab_size": float("nan")},
                                    {"num_attention_heads": 5}, {"use_cache": "no"}, {"eos_token_id": 400},
                                    {"embedding": "bogus"}])
def test_update_holds_a_known_setting_to_the_constructors_rules(change):
    """Round 32, AC251-AC256, AC258: ``config.update`` stored each of these without a word (``config_values``)."""
    config = LeviathanConfig(**SMALL)
    before = config.to_dict()
    with pytest.raises(ConfigError, match=r"^update: .*; nothing was changed: give the setting a value "
                                          r"LeviathanConfig\(\.\.\.\) takes$"):
        config.update(change)
    assert config.to_dict() == before
    config.update({"hidden_size": np.int64(64), "embedding": "dense_tied"})  # numpy's int taken as Python's
    assert type(config.hidden_size) is int and config.tie_word_embeddings is True


@pytest.mark.parametrize("text", ["hidden_size=64,hidden_size=48", "hidden_size=-8", "rms_norm_eps=nan",
                                  "hidden_size=48,generator_rank=-1"])
def test_update_from_string_is_all_or_nothing_under_the_constructors_rules(text):
    """Round 32, AC259 (a key twice: the last kept), AC264, AC265, AC268 (the first pair kept beside a bad second)."""
    config = LeviathanConfig(**SMALL)
    before = config.to_dict()
    with pytest.raises(ConfigError, match=r"^update_from_string: .*nothing was changed"):
        config.update_from_string(text)
    assert config.to_dict() == before


def test_the_readers_hold_keywords_and_files_to_the_constructors_rules(tmp_path):
    """Round 32: AC277 (``from_pretrained(DIR, hidden_size=-1)`` a config of width -1), AC273 (a numpy keyword:
    json's raw TypeError), AC271 (``from_dict('x')``: Python's raw TypeError), AC287 (``from_json_file`` kept the last
    of a key given twice)."""
    LeviathanConfig(**SMALL).save_pretrained(tmp_path / "c")
    with pytest.raises(ConfigError, match=r"^LeviathanConfig: model\.hidden_size must be a positive integer, got -1 "
                                          r"\(from the keywords hidden_size=-1\); pass values the config takes"):
        LeviathanConfig.from_pretrained(tmp_path / "c", hidden_size=-1)
    assert LeviathanConfig.from_pretrained(tmp_path / "c", hidden_size=64).hidden_size == 64
    assert LeviathanConfig.from_dict(dict(SMALL), hidden_size=np.int64(64)).to_json_string()
    with pytest.raises(ConfigError, match=r"^from_dict: expected a dict of setting -> value, got str; pass e\.g\."):
        LeviathanConfig.from_dict("x")
    text = (tmp_path / "c" / "config.json").read_text().replace('"hidden_size": 32', '"hidden_size": 48, '
                                                                                      '"hidden_size": 32')
    (tmp_path / "c" / "config.json").write_text(text)
    with pytest.raises(UserError, match=r"config\.json' is not readable JSON \(key 'hidden_size' appears twice"):
        LeviathanConfig.from_json_file(tmp_path / "c" / "config.json")


def test_a_config_save_takes_the_model_saves_checks(tmp_path):
    """Round 32, AC281-AC285: a file, a pipe, a NUL, a 300-byte name (transformers' AssertionError, os.makedirs' raw
    errors) and ``push_to_hub='no'`` (read as true: the network tried) each one UserError line; nothing written."""
    config = LeviathanConfig(**SMALL)
    (tmp_path / "afile").write_text("mine")
    os.mkfifo(tmp_path / "pipe")
    for place, said in [(tmp_path / "afile", "something is in the way"), (tmp_path / "pipe", "named pipe"),
                        (f"{tmp_path}/c\x00", "NUL byte"), (tmp_path / ("a" * 300), "too long")]:
        with pytest.raises(UserError, match=said):
            config.save_pretrained(place)
    with pytest.raises(UserError, match=r"^save_pretrained: push_to_hub must be True or False, got 'no'"):
        config.save_pretrained(tmp_path / "c", push_to_hub="no")
    assert sorted(os.listdir(tmp_path)) == ["afile", "pipe"] and (tmp_path / "afile").read_text() == "mine"
    config.save_pretrained(tmp_path / "c")
    assert LeviathanConfig.from_pretrained(tmp_path / "c").to_dict() == config.to_dict()
