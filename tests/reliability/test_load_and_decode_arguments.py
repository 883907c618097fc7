"""Arguments of the loading and decoding functions a caller can import, taken unchecked (issue 30 round 22, S108,
S118, S119, S234, S503, S513-S515, S588-S594, S604, S608, S609): a config.json whose dtype names no torch type or that
is not JSON, a ``device_map`` on a GPU this machine lacks, a ``Decoder`` of a model that takes no native cache, and
``KVCache.update`` of mismatched tensors or layer indices ended in raw errors from transformers, torch or Python, or
were taken silently. Each is one error naming the argument (or file), the value and the fix; the refused call changes
nothing."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from test_decode_and_score_inputs import model  # noqa: E402,F401 (the module's tiny dense CausalLM fixture)
from test_hf_load_check import _adopted_folder, _native_folder  # noqa: E402

from leviathan import CausalLM, KVCache  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.generation import Decoder  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _edit_config(folder: Path, **edits) -> Path:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **edits}))
    return folder


@pytest.mark.parametrize("key", ["dtype", "torch_dtype"])
def test_a_config_dtype_torch_lacks_is_one_line_for_both_loaders(tmp_path, key):
    """S108, S119: 'float8' was transformers' "module 'torch' has no attribute 'float8'" AttributeError."""
    from leviathan.hf import LeviathanConfig, load_adopted
    from leviathan.hf.modeling import LeviathanForCausalLM

    native = _native_folder(tmp_path / "n")
    config = json.loads((native / "config.json").read_text())
    config.pop("dtype", None)
    (native / "config.json").write_text(json.dumps({**config, key: "float8"}))
    with pytest.raises(UserError, match=rf"config\.json': {key} 'float8' is not a type the weights load in .*write "
                                        r"float32"):
        LeviathanForCausalLM.from_pretrained(str(native))
    adopted = _edit_config(_adopted_folder(tmp_path / "ad"), **{key: "float8"})
    with pytest.raises(UserError, match=rf"config\.json': {key} 'float8' is not a type the weights load in"):
        load_adopted(adopted)
    with pytest.raises(UserError, match=rf"{key} 'float8' is not a type the weights load in"):
        LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, **{key: "float8"})


def test_a_binary_config_json_names_the_file_and_the_fix(exported, tmp_path):
    """S118: a marker-less export whose config.json holds bytes was transformers' OSError "is not a valid JSON file"
    with no fix."""
    from leviathan.hf.modeling import LeviathanForCausalLM

    folder = tmp_path / "d20"
    shutil.copytree(exported, folder)
    (folder / "leviathan_output.json").unlink()
    (folder / "config.json").write_bytes(b"\x00\x01binary")
    with pytest.raises(UserError, match=r"d20/config\.json' is not readable JSON .*restore it from a copy, or export "
                                        r"the checkpoint again \(leviathan export RUN OUT\)"):
        LeviathanForCausalLM.from_pretrained(str(folder))


def test_a_device_map_on_a_gpu_this_machine_lacks_is_one_line(exported, tmp_path):
    """S604, S608, S609: device_map='cuda' / 'cuda:3' on a torch without CUDA was torch's AssertionError; a GPU index
    past the count is named too where CUDA exists."""
    from leviathan.hf import load_adopted
    from leviathan.hf.modeling import LeviathanForCausalLM

    absent = torch.cuda.device_count() + 3
    said = r"is not available here; use cpu" if not torch.cuda.is_available() else r"this machine has \d+ GPU"
    folder = _adopted_folder(tmp_path / "ad")
    for device_map in (f"cuda:{absent}", absent, {"": f"cuda:{absent}"}, torch.device("cuda", absent)):
        with pytest.raises(UserError, match=rf"load_adopted: device_map.* is 'cuda:{absent}', but .*{said}"):
            load_adopted(folder, device_map=device_map)
        with pytest.raises(UserError, match=rf"from_pretrained: device_map.* is 'cuda:{absent}', but .*{said}"):
            LeviathanForCausalLM.from_pretrained(str(exported), device_map=device_map)
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match=r"device_map is 'cuda', but CUDA is not available here; use cpu"):
            LeviathanForCausalLM.from_pretrained(str(exported), device_map="cuda")
    assert load_adopted(folder, device_map="cpu") is not None


def test_a_decoder_of_a_model_that_takes_no_native_cache_is_refused_when_built(model, tmp_path):
    """S503, S513, S514, S515: raw AttributeError / TypeError at the first prefill; generate() refused them (S501)."""
    from leviathan.hf import load_adopted
    from leviathan.hf.export import from_native

    for other, said in ((load_adopted(_adopted_folder(tmp_path / "ad")), "LeviathanLlamaForCausalLM is a transformers"),
                        (from_native(model), "LeviathanForCausalLM is a transformers model"),
                        ("x", r"CausalLM .*got str 'x'"), (torch.nn.Linear(2, 2), "a model with a config.*Linear")):
        with pytest.raises(UserError, match=rf"^Decoder takes leviathan's .*{said}"):
            Decoder(other)
    assert Decoder(model, temperature=0).prefill(torch.tensor([[1, 2]])).shape == (1,)


@pytest.mark.parametrize("key, value, layer, error, said", [
    ((1, 2, 3, 4), (1, 2, 3, 5), 0, ValueError, r"key and value must be of one shape.*\(1, 2, 3, 4\).*\(1, 2, 3, 5\)"),
    ((1, 2, 3, 4), (1, 2, 5, 4), 0, ValueError, r"key and value must be of one shape.*\(1, 2, 5, 4\)"),
    ((2, 3, 4), (2, 3, 4), 0, ValueError, r"key must be a 4-D tensor .*got shape \(2, 3, 4\)"),
    ((1, 2, 3, 4), (1, 2, 3, 4), 5, ValueError, r"layer_idx must be in \[0, 0\] .*got 5"),
    ((1, 2, 3, 4), (1, 2, 3, 4), -1, ValueError, r"layer_idx must be in \[0, 0\] .*got -1"),
    ((1, 2, 3, 4), (1, 2, 3, 4), "a", TypeError, r"layer_idx must be a whole number .*got str 'a'"),
    ((1, 2, 3, 4), (1, 2, 3, 4), True, TypeError, r"layer_idx must be a whole number .*got bool True"),
], ids=["S588-head-size", "S594-length", "S591-3d", "S589-layer-5", "S590-layer-minus-1", "S593-layer-a", "bool"])
def test_kv_cache_update_names_the_argument_it_cannot_store(key, value, layer, error, said):
    """S588-S594: stored silently, or Python's IndexError / TypeError."""
    cache = KVCache()
    with pytest.raises(error, match=rf"^KVCache\.update: {said}"):
        cache.update(torch.zeros(key), torch.zeros(value), layer)
    assert cache.keys == [] and cache.values == []
    cache.update(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4), 0)
    with pytest.raises(ValueError, match=r"layer_idx must be in \[0, 1\] .*layers 0 to 0 are cached.*got 2"):
        cache.update(torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4), 2)
    assert [k.shape[-2] for k in cache.update(torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4), 0)] == [4, 4]


def test_a_cache_filled_by_one_model_is_refused_by_another_of_the_same_shapes(model):
    """S234: another CausalLM of the same shapes continued the cache without a word, its logits computed from the first
    model's keys. The first model to fill a cache claims it; the refused call adds nothing."""
    other = CausalLM(model.config).eval()
    cache = KVCache()
    with torch.no_grad():
        model(torch.tensor([[1, 2, 3]]), cache=cache)
        with pytest.raises(ValueError, match=r"holds the keys and values of another model .*start a new KVCache"):
            other(torch.tensor([[4]]), cache=cache)
        assert cache.get_seq_length() == 3
        model(torch.tensor([[4]]), cache=cache)  # its own model continues it
        fresh = KVCache()
        other(torch.tensor([[1, 2]]), cache=fresh)  # another model fills a cache of its own
    assert cache.get_seq_length() == 4 and fresh.get_seq_length() == 2


def test_public_loading_helpers_name_the_argument_they_cannot_take(model, tmp_path):
    """The round's kind beyond its ids: plain_llama_config('x'), plain_llama_state_dict('x'), init_generator('x') were
    AttributeErrors, adopted_class('x') "issubclass() arg 1 must be a class" (adopted_class(int) made 'Leviathanint'),
    resize_token_embeddings('x') torch's "empty(): argument 'size'" (0 and True taken), device_map=True torch's
    many-line TypeError."""
    from leviathan.hf import adopted_class, load_adopted
    from leviathan.hf.export import from_native, plain_llama_config, plain_llama_state_dict
    from leviathan.hf.modeling import init_generator

    for call, error, said in (
            (lambda: plain_llama_config("x"), TypeError, r"plain_llama_config: cfg: expected a leviathan ModelConfig"),
            (lambda: plain_llama_state_dict("x"), TypeError, r"plain_llama_state_dict: model: expected a native leviathan CausalLM"),
            (lambda: adopted_class("x"), UserError, r"adopted_class takes a transformers model class .*got str"),
            (lambda: adopted_class(int), UserError, r"adopted_class takes a transformers model class"),
            (lambda: init_generator("x"), TypeError, r"init_generator takes a LeviathanGenerator, got str"),
            (lambda: load_adopted(tmp_path, device_map=True), UserError, r"device_map is True, not a device")):
        with pytest.raises(error, match=said):
            call()
    hf = from_native(model)
    for value, said in ((0, "must be a whole number >= 1, got 0"), ("x", "expected a whole number >= 1, got 'x'"),
                        (True, "expected a whole number >= 1, got True")):
        with pytest.raises(UserError, match=rf"resize_token_embeddings: new_num_tokens: {said}"):
            hf.resize_token_embeddings(value)
    assert hf.get_input_embeddings().weight.shape[0] == 300  # nothing resized by a refused call
    assert plain_llama_config(model.config).vocab_size == 300


def test_decoding_inputs_of_the_wrong_type_or_shape_are_named(model):
    """The kind beyond the ids, in decoding: get_seq_length('a') was Python's TypeError and -1 read the last layer;
    Decoder.pick of (B, V) logits returned one id without a word; position_ids / attention_mask that are text or of
    another length were Python's or torch's errors from inside the attention."""
    from leviathan.positions import fit_positions

    cache = KVCache()
    for layer in ("a", -1, True):
        with pytest.raises(TypeError, match=r"get_seq_length: layer_idx must be a whole number >= 0"):
            cache.get_seq_length(layer)
    with pytest.raises(ValueError, match=r"Decoder\.pick takes the model's logits \(B, T, V\), got \(1, 300\)"):
        Decoder(model).pick(torch.zeros(1, 300))
    ids = torch.tensor([[1, 2]])
    for kwargs, error, said in (({"position_ids": "x"}, TypeError, r"position_ids must be a tensor"),
                                ({"attention_mask": "x"}, TypeError, r"attention_mask must be a tensor"),
                                ({"position_ids": torch.tensor([[0, 1, 2]])}, ValueError,
                                 r"position_ids must have shape \(1, 2\) .*got \(1, 3\)"),
                                ({"attention_mask": torch.ones(1, 3)}, ValueError,
                                 r"attention_mask must have shape \(1, 2\) .*got \(1, 3\)"),
                                ({"position_ids": torch.tensor([[0.0, 1.0]])}, TypeError, r"integer positions")):
        with pytest.raises(error, match=said):
            model(ids, **kwargs)
    with pytest.raises(ValueError, match=r"position_ids must have shape \(1, 4\) .*got \(4,\)"):
        model(torch.tensor([[1, 2, 3, 4]]), position_ids=torch.arange(4))  # as many ids as heads: it broadcast silently
    with torch.no_grad():
        plain = model(ids)[0]
        given = model(ids, position_ids=torch.tensor([[0, 1]]), attention_mask=torch.ones(1, 2, dtype=torch.long))[0]
    assert torch.equal(plain, given)
    with pytest.raises(UserError, match=r"fit_positions: limit: must be a whole number >= 1, got 0"):
        fit_positions(3, 3, 0)
    assert fit_positions(3, 3, 5)[:2] == (3, 2)
