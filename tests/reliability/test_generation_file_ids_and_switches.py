"""Issue 30 round 29, W104, W130, W726: a saved folder's generation_config.json with ``eos_token_id: []`` loaded
without a word and ``generate`` then ended in transformers' raw IndexError; ``do_sample: "yes"`` loaded as the text.
The loaders' check of the file (``hf/generation_file``) refuses a list of no ids and a switch that is not one (an id
past the vocabulary was already refused after the load: test_hf_load_check)."""

from __future__ import annotations

import re

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


# Issue 30 round 32: the file's sampling numbers, penalties, switches and list ids held to what generate can use
@pytest.mark.parametrize("given, said", [
    ({"min_p": 2.0}, "min_p 2.0 must be a finite number in [0, 1] (or null)"),  # AC25's rule
    ({"epsilon_cutoff": 1.5}, "epsilon_cutoff 1.5 must be a finite number in [0, 1) (or null)"),  # AC24
    ({"length_penalty": "NaN"}, "length_penalty 'NaN' must be a finite number (or null)"),  # AC409
    ({"max_time": -1}, "max_time -1 must be a finite number above 0"),  # AC27
    ({"output_scores": 1}, "output_scores 1 must be true or false (or null)"),  # AC87
    ({"exponential_decay_length_penalty": [1, "x"]}, "exponential_decay_length_penalty [1, 'x'] must be a pair"),
    ({"typical_p": 0, "do_sample": True}, "typical_p 0 with do_sample true leaves no token to sample"),  # AC406
])
def test_round_32_nonsense_values_are_named(given, said):
    assert said in generation_value_problem(given)


@pytest.mark.parametrize("given", [{"typical_p": 0}, {"temperature": 0, "do_sample": False}, {"min_p": 0.1},
                                   {"length_penalty": -1.5}, {"exponential_decay_length_penalty": [5, 1.01]},
                                   {"return_dict_in_generate": True}, {"max_time": 2.5}])
def test_round_32_usable_values_pass(given):
    assert generation_value_problem(given) is None


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A native folder and an adopted one (300 ids), each saved once; the tests edit copies."""
    from transformers import LlamaConfig

    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt

    root = tmp_path_factory.mktemp("saved")
    sizes = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=2)
    LeviathanForCausalLM(LeviathanConfig(**sizes)).save_pretrained(root / "native")
    adopt(LlamaConfig(**sizes), seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(root / "adopted")
    return root


@pytest.mark.parametrize("kind, edit, said", [
    ("native", {"typical_p": 0, "do_sample": True}, "typical_p 0 with do_sample true leaves no token"),  # AC406
    ("native", {"length_penalty": "NaN"}, "length_penalty 'NaN' must be a finite number"),  # AC409
    ("native", {"suppress_tokens": [400]}, "suppress_tokens holds 400, which is not a token id"),  # AC408's sibling
    ("adopted", {"suppress_tokens": [400]}, "suppress_tokens holds 400, which is not a token id"),  # AC408
])
def test_an_edited_generation_file_is_refused_at_load(saved, tmp_path, kind, edit, said):
    import json
    import shutil

    from leviathan.errors import UserError
    from leviathan.hf import LeviathanForCausalLM, load_adopted

    folder = tmp_path / kind
    shutil.copytree(saved / kind, folder)
    where = folder / "generation_config.json"
    where.write_text(json.dumps({**json.loads(where.read_text()), **edit}))
    load = LeviathanForCausalLM.from_pretrained if kind == "native" else load_adopted
    with pytest.raises(UserError, match=r"generation_config.json'.*" + re.escape(said)):
        load(folder)
