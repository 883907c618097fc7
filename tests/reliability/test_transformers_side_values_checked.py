"""The transformers side takes its values at leviathan's boundary, in one line naming the argument, the value and the
fix, not handed to transformers or torch raw (issue 30 round 26; round 25's ``load_keywords`` closed the kind for
``subfolder=``, ``attn_implementation=`` and ``state_dict=``):

- Q128: ``adopt(LlamaConfig(vocab_size=300, hidden_size=0))`` was transformers' raw "ZeroDivisionError: 0.0 cannot
  be raised to a negative power" while building the model: the config's sizes, heads and rope settings are checked
  first (``adoption_config``), one line each with the range;
- Q196: ``from_native(adopted model)`` was a TypeError naming the model by its repr cut at 60 characters, mid-line,
  with no fix: now its class and its routes (to_original, bake_adopted), as ``to_native`` says them (Y413), for
  ``to_hf`` and ``to_plain_llama`` too;
- Q142: ``load_adopted(D, dtype='int8')`` was transformers' raw "cannot be instantiated under `dtype=torch.int8`"
  ValueError, where the same dtype in config.json is one line (Y516); ``torch_dtype=`` and
  ``LeviathanForCausalLM.from_pretrained`` took it the same way;
- Q410: ``load_adopted(D, device_map={'': 'cpu', 'lm_head': 'tpu'})`` was torch's raw "Expected one of cpu, cuda,
  ..." RuntimeError: each place of a device_map dict is now checked as the string form is (Q147).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parent))
from test_hf_load_check import _adopted_folder, _native_folder  # noqa: E402

from leviathan.errors import ArgumentTypeError, ArgumentValueError, UserError  # noqa: E402
from leviathan.hf import adopt, load_adopted  # noqa: E402
from leviathan.hf.export import from_native, to_hf, to_plain_llama  # noqa: E402
from leviathan.hf.modeling import LeviathanForCausalLM  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
LLAMA = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("q26c")
    return _adopted_folder(root / "adopted"), _native_folder(root / "native")


def _one_line(error: pytest.ExceptionInfo) -> str:
    text = str(error.value)
    assert "; " in text and "\n" not in text
    return text


@pytest.mark.parametrize("given, shown", [
    (dict(dtype="int8"), r"dtype='int8'"), (dict(torch_dtype="int8"), r"torch_dtype='int8'"),
    (dict(dtype=torch.int8), r"dtype=torch\.int8"), (dict(dtype="float8"), r"dtype='float8'"),
    (dict(dtype={"": "int8"}), r"dtype\[''\]='int8'"), (dict(dtype=5), r"dtype=5"),
])
def test_a_dtype_the_weights_do_not_load_in_is_one_line_for_both_loaders(folders, given, shown):
    """Q142: transformers' raw ValueError for int8; 'float8' its "can only be 'auto', or a string representation"."""
    adopted, native = folders
    named = rf"{shown} is not a type the weights load in \(one of float32, .*auto\); .*or leave it out"
    with pytest.raises(UserError, match=rf"^load_adopted: {named}") as e:
        load_adopted(adopted, **given)
    _one_line(e)
    with pytest.raises(UserError, match=rf"^LeviathanForCausalLM\.from_pretrained: {named}"):
        LeviathanForCausalLM.from_pretrained(str(native), **given)


@pytest.mark.parametrize("dtype, loaded", [("auto", torch.float32), ("half", torch.float16),
                                           (torch.bfloat16, torch.bfloat16), ({"": "float16"}, torch.float16)])
def test_a_floating_dtype_still_loads(folders, dtype, loaded):
    assert load_adopted(folders[0], dtype=dtype).dtype == loaded


@pytest.mark.parametrize("device_map, shown, problem", [
    ({"": "cpu", "lm_head": "tpu"}, r"device_map\['lm_head'\] is 'tpu'", "not a device torch knows"),
    ({"": "nope"}, r"device_map\[''\] is 'nope'", "not a device torch knows"),
    ({"": "cuda:x"}, r"device_map\[''\] is 'cuda:x'", "not a device torch knows"),
    ({"": "cpu", "lm_head": 2.5}, r"device_map\['lm_head'\] is float 2\.5", "not a device"),
    ({"": "cpu", "lm_head": None}, r"device_map\['lm_head'\] is NoneType None", "not a device"),
    ({"": -1}, r"device_map\[''\] is -1", "no GPU's index"),
    ("tpu", r"device_map is 'tpu'", "not a device torch knows"),
    (2.5, r"device_map is float 2\.5", "not a device"),
])
def test_each_place_of_a_device_map_is_checked_as_the_string_form_is(folders, device_map, shown, problem):
    """Q410: torch's raw RuntimeError (a name torch does not know) or many-line TypeError (a place of another type)
    through transformers' loader."""
    adopted, native = folders
    with pytest.raises(UserError, match=rf"^load_adopted: {shown}, {problem}.*; pass 'cpu', 'cuda', 'cuda:N'") as e:
        load_adopted(adopted, device_map=device_map)
    _one_line(e)
    with pytest.raises(UserError, match=rf"^from_pretrained: {shown}, {problem}"):
        LeviathanForCausalLM.from_pretrained(str(native), device_map=device_map)


@pytest.mark.parametrize("device_map", ["cpu", {"": "cpu"}, {"": torch.device("cpu")}, "auto"])
def test_a_device_map_on_this_machine_still_loads(folders, device_map):
    model = load_adopted(folders[0], device_map=device_map)
    assert {p.device.type for p in model.parameters()} == {"cpu"}


@pytest.mark.parametrize("setting, error, named", [
    (dict(hidden_size=0), ArgumentValueError, r"LlamaConfig\.hidden_size must be a whole number in \[1, 16,777,216\], "
                                              r"got 0; set it in the config"),
    (dict(hidden_size=-8), ArgumentValueError, r"LlamaConfig\.hidden_size must be a whole number in \[1, "),
    (dict(vocab_size=-1), ArgumentValueError, r"LlamaConfig\.vocab_size must be a whole number in \[1, "),
    (dict(vocab_size=10**12), ArgumentValueError, r"LlamaConfig\.vocab_size .*got 1,000,000,000,000"),
    (dict(num_attention_heads=0), ArgumentValueError, r"LlamaConfig\.num_attention_heads must be a whole number"),
    (dict(num_key_value_heads=0), ArgumentValueError, r"LlamaConfig\.num_key_value_heads must be a whole number"),
    (dict(num_key_value_heads=3), UserError,
     r"LlamaConfig\.num_key_value_heads must divide num_attention_heads \(4\), got 3; set it to a divisor"),
    (dict(num_hidden_layers=0), ArgumentValueError, r"LlamaConfig\.num_hidden_layers must be a whole number in \[1, "),
    (dict(num_hidden_layers=-1), ArgumentValueError, r"LlamaConfig\.num_hidden_layers must be a whole number"),
    (dict(intermediate_size=0), ArgumentValueError, r"LlamaConfig\.intermediate_size must be a whole number"),
    (dict(head_dim=0), ArgumentValueError, r"LlamaConfig\.head_dim must be a whole number in \[1, "),
    (dict(head_dim=7), UserError, r"LlamaConfig's rotary width .* is 7, odd, and rope turns pairs; choose an even"),
    (dict(rope_parameters={"rope_type": "default", "rope_theta": 0.0}), UserError,
     r"LlamaConfig's rope_theta must be a finite number > 0, got 0\.0; set it in the config's rope_parameters"),
    (dict(rope_parameters={"rope_type": "default", "rope_theta": float("nan")}), UserError,
     r"LlamaConfig's rope_theta must be a finite number > 0, got nan"),
    (dict(rms_norm_eps=-1.0), UserError, r"LlamaConfig\.rms_norm_eps must be a finite number >= 0, got -1\.0"),
])
def test_adopt_checks_the_config_it_builds_from_before_building(setting, error, named):
    """Q128: a ZeroDivisionError, torch's "negative dimension", a shape mismatch at the first forward, or (no layers,
    a zero-width MLP, a rope_theta of 0 or NaN) a model built without a word. Each value is set on a valid config, as
    a caller may set it after the config checked its own (the config's checks run only when it is made)."""
    config = transformers.LlamaConfig(**LLAMA)
    for key, value in setting.items():
        setattr(config, key, value)
    with pytest.raises(error, match=rf"^adopt: {named}") as e:
        adopt(config, **GEN)
    _one_line(e)


@pytest.mark.parametrize("config", [
    transformers.LlamaConfig(**LLAMA, num_key_value_heads=2),
    transformers.GPT2Config(vocab_size=300, n_embd=32, n_layer=1, n_head=4, n_positions=64),
    transformers.GemmaConfig(**LLAMA, num_key_value_heads=1, head_dim=16),
    transformers.GPTNeoXConfig(**LLAMA),
], ids=["llama", "gpt2", "gemma", "neox"])
def test_adopt_still_builds_the_configs_of_other_families(config):
    model = adopt(config, **GEN)
    assert model(torch.tensor([[1, 2, 3]])).logits.shape == (1, 3, 300)


@pytest.mark.parametrize("writer", [from_native, lambda m: to_hf(m, "never-written"),
                                    lambda m: to_plain_llama(m, "never-written")],
                         ids=["from_native", "to_hf", "to_plain_llama"])
def test_a_native_writer_given_an_adopted_model_names_its_class_and_routes(writer, tmp_path, monkeypatch):
    """Q196: "got LeviathanLlamaForCausalLM LeviathanLlamaForCausalLM(" and the model's repr cut mid-line, no fix."""
    monkeypatch.chdir(tmp_path)
    adopted = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    with pytest.raises(ArgumentTypeError, match=r"takes a leviathan model \(CausalLM or LeviathanForCausalLM\), got "
                                                r"an adopted LlamaForCausalLM; .*leviathan\.hf\.to_original\(model\) "
                                                r"/ bake_adopted\(model, DIR\)") as e:
        writer(adopted)
    assert "LeviathanLlamaModel(" not in _one_line(e)
    assert not (tmp_path / "never-written").exists()
