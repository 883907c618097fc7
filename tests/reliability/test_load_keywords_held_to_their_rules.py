"""``load_adopted`` and ``LeviathanForCausalLM.from_pretrained`` hold from_pretrained's keywords to a rule each, by
name (``load_keywords._RULES``), before transformers reads them (issue 30 round 27): ``use_safetensors=False`` on a
folder of safetensors only was transformers' "no file named model.safetensors" (S73, S472), ``gguf_file=`` a raw
TypeError or a hub address for a local folder (S74, S473), ``quantization_config=object()`` a raw AttributeError
(S506), and ``local_files_only='no'`` was read as true without a word (S502).
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import ArgumentTypeError, UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, load_adopted  # noqa: E402
from leviathan.hf.export import to_hf  # noqa: E402
from test_hf_keywords_at_the_boundary import _native, _one_line, adopted_folder  # noqa: E402,F401  (a fixture)

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def export_folder(tmp_path_factory):
    return to_hf(_native(), tmp_path_factory.mktemp("export") / "ex")


def _loaders(adopted_folder, export_folder):
    return [(load_adopted, adopted_folder, "load_adopted"),
            (LeviathanForCausalLM.from_pretrained, export_folder, "LeviathanForCausalLM.from_pretrained")]


@pytest.mark.parametrize("given, named", [
    (dict(use_safetensors=False), r"use_safetensors=False asks for pickled weights .* holds its weights as "
                                  r"safetensors only .*; leave use_safetensors out"),  # S73, S472
    (dict(gguf_file="x.gguf"), r"gguf_file='x.gguf' is not taken: .*; leave gguf_file out"),  # S74, S473
    (dict(quantization_config=object()), r"quantization_config=.*; "),  # S506
])
def test_a_keyword_the_product_cannot_honour_is_one_line(adopted_folder, export_folder, given, named):
    for load, folder, who in _loaders(adopted_folder, export_folder):
        with pytest.raises(UserError, match=f"^{who.replace('.', '[.]')}: {named}") as e:
            load(folder, **given)
        _one_line(e)


def test_an_adopted_model_takes_no_quantization(adopted_folder):
    """S506's kind: even a quantization config transformers knows; the generator is no quantizer's module."""
    with pytest.raises(UserError, match=r"^load_adopted: quantization_config=dict is not taken by an adopted model: "
                                        r".*bake_adopted"):
        load_adopted(adopted_folder, quantization_config={"quant_method": "bitsandbytes_8bit", "load_in_8bit": True})


@pytest.mark.parametrize("key", ["local_files_only", "use_safetensors", "force_download", "ignore_mismatched_sizes",
                                 "trust_remote_code"])
def test_a_text_switch_is_refused(adopted_folder, export_folder, key):
    """S502: transformers read local_files_only='no' as true, the opposite of what was written."""
    for load, folder, who in _loaders(adopted_folder, export_folder):
        with pytest.raises(ArgumentTypeError, match=f"^{who.replace('.', '[.]')}: {key} must be True or False, got "
                                                    f"'no'; pass {key}=True or {key}=False"):
            load(folder, **{key: "no"})


def test_the_switches_and_use_safetensors_true_still_load(adopted_folder, export_folder):
    for load, folder, _ in _loaders(adopted_folder, export_folder):
        assert load(folder, local_files_only=True, use_safetensors=True, trust_remote_code=None) is not None


@pytest.mark.parametrize("given, named", [
    (dict(device_map="auto", max_memory="1GB"), r"max_memory='1GB' is no dict of place -> size; pass a dict of a "
                                                r"GPU's index .*, or leave max_memory out$"),  # AA41
    (dict(device_map="auto", max_memory={"cpu": "lots"}), r"max_memory\['cpu'\]='lots' is no size \(a byte count, "
                                                          r"or a number with a unit: .*\); pass a dict"),  # AA511
    (dict(device_map="auto", max_memory={"cuda:0": "1GB"}), r"max_memory names the place 'cuda:0', which is none of "),
    (dict(max_memory={"cpu": "1GB"}), r"max_memory is read only when transformers computes the device_map .*, and "
                                      r"device_map is None, so it would be dropped without a word; pass "
                                      r"device_map='auto' too, or leave max_memory out$"),
])
def test_max_memory_is_held_to_accelerates_form(adopted_folder, export_folder, given, named):
    """Round 31: AA41 (a text: accelerate's raw TypeError), AA511 (a size that is none: its raw ValueError), a GPU
    named as a device (its "not recognized"), and max_memory beside no map computed (dropped without a word)."""
    for load, folder, who in _loaders(adopted_folder, export_folder):
        with pytest.raises(UserError, match=f"^{who.replace('.', '[.]')}: {named}") as e:
            load(folder, **given)
        assert "\n" not in str(e.value)


def test_a_max_memory_of_the_cpu_still_loads(adopted_folder):
    assert load_adopted(adopted_folder, device_map="auto", max_memory={"cpu": "1GB"}) is not None


@pytest.mark.parametrize("given, named", [
    (dict(token=5), r"token must be a Hugging Face token \(its text\), True .* or None, got 5"),  # AI330's sibling
    (dict(offload_state_dict="yes"), r"offload_state_dict must be True or False, got 'yes'"),  # AI126
    (dict(offload_state_dict=True), r"offload_state_dict=True does nothing: transformers .* no longer reads "
                                    r"offload_state_dict and drops it without a word; leave it out"),  # AI126
    (dict(from_tf=True), r"from_tf=True does nothing"),
])
def test_a_keyword_transformers_drops_or_a_token_that_is_no_token_is_one_line(adopted_folder, export_folder, given,
                                                                               named):
    """Round 35, AI126: ``offload_state_dict='yes'``, a keyword transformers 5 pops and drops, was taken without a
    word; a token that is a number likewise. False (asking nothing) is still taken."""
    for load, folder, who in _loaders(adopted_folder, export_folder):
        with pytest.raises(UserError, match=f"^{who.replace('.', '[.]')}: {named}") as e:
            load(folder, **given)
        _one_line(e)
    LeviathanForCausalLM.from_pretrained(export_folder, offload_state_dict=False)
