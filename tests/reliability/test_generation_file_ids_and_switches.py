"""Issue 30 round 29, W104, W130, W726: a saved folder's generation_config.json with ``eos_token_id: []`` loaded
without a word and ``generate`` then ended in transformers' raw IndexError; ``do_sample: "yes"`` loaded as the text.
The loaders' check of the file (``hf/generation_file``) refuses a list of no ids and a switch that is not one (an id
past the vocabulary was already refused after the load: test_hf_load_check)."""

from __future__ import annotations

import pytest

from leviathan.hf.generation_file import generation_value_problem

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("given, said", [
    ({"eos_token_id": []}, "eos_token_id [] names no token: give a token id, a non-empty list of them, or null"),
    ({"pad_token_id": ()}, "pad_token_id () names no token"),
    ({"do_sample": "yes"}, "do_sample 'yes' must be true or false (or null)"),
])
def test_nonsense_ids_and_switches_are_named(given, said):
    assert said in generation_value_problem(given)


@pytest.mark.parametrize("given", [{"eos_token_id": 2}, {"eos_token_id": [2, 3]}, {"pad_token_id": None},
                                   {"do_sample": False}, {"use_cache": True}, {}])
def test_usable_values_pass(given):
    assert generation_value_problem(given) is None


def test_an_empty_eos_list_in_a_saved_folder_is_refused_at_load(tmp_path):
    import json

    from leviathan.errors import UserError
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

    config = LeviathanConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                             num_attention_heads=2, num_key_value_heads=2, embedding="dense_untied")
    folder = tmp_path / "m"
    LeviathanForCausalLM(config).save_pretrained(folder)
    where = folder / "generation_config.json"
    value = json.loads(where.read_text())
    where.write_text(json.dumps({**value, "eos_token_id": []}))
    with pytest.raises(UserError, match=r"generation_config.json'.*eos_token_id \[\] names no token"):
        LeviathanForCausalLM.from_pretrained(folder)
