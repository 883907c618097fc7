"""``load_adopted`` / ``from_pretrained`` of a saved folder that transformers would refuse raw: each one line naming the
file or keyword and the fix (issue 30 round 28).

U274: a sharded save whose index was deleted was transformers' raw OSError "no file named model.safetensors, or
pytorch_model.bin" (``shard_index._refuse_lost_index``; a folder without any weights, the same error, now
``model_path.weights_failure``'s line in load_adopted too). U291: ``attn_implementation='flash_attention_2'`` without
flash-attn was its raw ImportError (``load_keywords._attention_unusable``). U298: a generation_config.json holding
``max_new_tokens: -5`` was its raw ValueError out of the load (``generation_file.check_generation_json``, before
transformers reads the folder). Each for ``LeviathanForCausalLM.from_pretrained`` too, the same kind on its path.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, adopt, load_adopted  # noqa: E402

from test_adopted_save_files_held_to_the_save import GEN, INDEX, LLAMA  # noqa: E402

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def saves(tmp_path_factory):
    """An adopted model saved whole and sharded, and a native LeviathanForCausalLM sharded."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf.export import from_native

    root = tmp_path_factory.mktemp("saves")
    torch.manual_seed(1)
    model = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    model.save_pretrained(root / "whole")
    model.save_pretrained(root / "sharded", max_shard_size="20KB")
    native = from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                              num_attention_heads=4, max_position_embeddings=64)))
    native.save_pretrained(root / "native", max_shard_size="20KB")
    return root


def _copy(saves, name, tmp_path):
    return shutil.copytree(saves / name, tmp_path / name)


def _one_line(load, folder, match, **kwargs):
    with pytest.raises(UserError, match=match) as e:
        load(folder, **kwargs)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name, load", [("sharded", load_adopted), ("native", LeviathanForCausalLM.from_pretrained)])
def test_shards_without_their_index_name_the_index(saves, tmp_path, name, load):
    """U274."""
    folder = _copy(saves, name, tmp_path)
    (folder / INDEX).unlink()
    _one_line(load, folder, rf"holds \d+ shard\(s\) of a sharded save \(model-00001-of-\d+\.safetensors, \.\.\.\) but "
                            rf"not their index {INDEX}.*restore {INDEX} from a copy")


def test_a_folder_without_weights_says_so(saves, tmp_path):
    """U274's kind: no weights file at all, the same raw OSError in load_adopted."""
    folder = _copy(saves, "whole", tmp_path)
    (folder / "model.safetensors").unlink()
    _one_line(load_adopted, folder, r"load_adopted: '.*whole' holds config.json but no weights")


@pytest.mark.skipif(transformers.utils.is_flash_attn_2_available(), reason="flash-attn is usable here")
@pytest.mark.parametrize("load", [load_adopted, LeviathanForCausalLM.from_pretrained])
def test_flash_attention_that_is_not_here_is_named(saves, load):
    """U291. LeviathanForCausalLM supports no flash attention at all (transformers' "does not support Flash Attention
    2 yet", flash-attn installed or not): since round 31 (AA657) its line says so, before the package is asked."""
    name = "whole" if load is load_adopted else "native"
    said = (r"cannot be used here: .*FlashAttention2.*leave it out \(sdpa where the model supports it\), or pass "
            r"'sdpa' or 'eager'" if load is load_adopted else
            r"is not one LeviathanForCausalLM supports; pass one of 'eager', 'sdpa', or leave it out")
    _one_line(load, saves / name, rf"attn_implementation='flash_attention_2' {said}",
              attn_implementation="flash_attention_2")


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_an_attention_implementation_that_is_here_loads(saves, implementation):
    assert load_adopted(saves / "whole", attn_implementation=implementation) is not None


@pytest.mark.parametrize("values, match", [
    ({"max_new_tokens": -5}, r"max_new_tokens -5 must be a whole number >= 1"),  # U298
    ({"early_stopping": "x"}, r"transformers refuses it \(`early_stopping` must be a boolean"),  # its other refusals
])
@pytest.mark.parametrize("name, load", [("whole", load_adopted), ("native", LeviathanForCausalLM.from_pretrained)])
def test_a_generation_value_transformers_refuses_names_the_file(saves, tmp_path, values, match, name, load):
    """U298."""
    folder = _copy(saves, name, tmp_path)
    (folder / "generation_config.json").write_text(json.dumps(values))
    _one_line(load, folder, rf"generation_config\.json': {match}.*the file was edited")


def test_a_usable_generation_value_loads(saves, tmp_path):
    folder = _copy(saves, "whole", tmp_path)
    (folder / "generation_config.json").write_text(json.dumps({"max_new_tokens": 5}))
    assert load_adopted(folder).generation_config.max_new_tokens == 5


@pytest.mark.parametrize("total", [-1, "edited"])
@pytest.mark.parametrize("name, load", [("sharded", load_adopted), ("native", LeviathanForCausalLM.from_pretrained)])
def test_an_index_whose_total_size_was_edited_names_the_index(saves, tmp_path, name, load, total):
    """Round 35, AI29: metadata.total_size -1 was taken without a word (nothing reads it); the save's record now
    holds the digest of the index's metadata, and a total_size that is no byte count is refused in any index."""
    folder = _copy(saves, name, tmp_path)
    index = json.loads((folder / INDEX).read_text())
    index["metadata"]["total_size"] = total
    (folder / INDEX).write_text(json.dumps(index))
    _one_line(load, folder, r"model\.safetensors\.index\.json': its metadata \(total_size .*\) is not the one saved")
    del index["metadata"]["leviathan_shards"]["metadata"]  # a record written before round 35: the kind still checked
    (folder / INDEX).write_text(json.dumps(index))
    _one_line(load, folder, r"its metadata's total_size .* is no byte count")


def test_a_renamed_weights_file_is_named_by_both_classes_loads(saves, tmp_path):
    """Round 35: model.safetensors renamed model.safetensors.bak (AI451, AI457; the native class's from a whole
    save), or .old loaded with variant='old' (AI458): transformers' raw "Error no file named model.safetensors" (the
    name's start was taken for weights by ``model_path.weights_failure``)."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf.export import from_native

    folder = _copy(saves, "whole", tmp_path)
    (folder / "model.safetensors").rename(folder / "model.safetensors.bak")
    said = r"holds config.json but no weights file transformers reads .* it holds model\.safetensors\.{}, .*rename it"
    _one_line(load_adopted, folder, r"load_adopted: '.*whole' " + said.format("bak"))
    (folder / "model.safetensors.bak").rename(folder / "model.safetensors.old")
    _one_line(load_adopted, folder, r"load_adopted: '.*whole' " + said.format("old"), variant="old")
    native = tmp_path / "native-whole"
    from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                     max_position_embeddings=64))).save_pretrained(native)
    (native / "model.safetensors").rename(native / "model.safetensors.bak")
    _one_line(LeviathanForCausalLM.from_pretrained, native, r"from_pretrained: '.*native-whole' " + said.format("bak"))
