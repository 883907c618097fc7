"""An adopted save's companion files are held to what was saved when ``load_adopted`` reads them, a sharded save's as a
whole-file save's are (issue 30 round 25): a shard copied in from another save of the same settings (Y509), an index
that lost an entry (Y510: a head drawn at random, also from a model.safetensors without it), a shard deleted (Y511:
transformers' raw FileNotFoundError), an index naming a shard outside the folder (Y512: its raw ValueError), and a
generation_config.json edited to ``max_length: -5`` (Y514) or damaged (Y515), both loaded without a word. Each is one
line naming the file and the fix (``hf.shard_index``, ``hf.generation_file``, ``adoption._refuse_drawn_at_random``);
a ``LeviathanForCausalLM``'s sharded save is held the same way.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt, load_adopted  # noqa: E402

pytestmark = pytest.mark.reliability

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
LLAMA = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, bos_token_id=1, eos_token_id=2)
INDEX = "model.safetensors.index.json"
FIX = r"restore the folder from a copy, or save the model again"


@pytest.fixture(scope="module")
def saves(tmp_path_factory):
    """Two sharded saves of the same settings (seeds 1 and 2) and a whole-file save of the first."""
    root = tmp_path_factory.mktemp("saves")
    for seed in (1, 2):
        torch.manual_seed(seed)
        model = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
        model.save_pretrained(root / f"s{seed}", max_shard_size="20KB")
        if seed == 1:
            model.save_pretrained(root / "whole")
    assert len(json.loads((root / "s1" / INDEX).read_text())["weight_map"]) > 1
    return root


def _copy(saves, name, tmp_path):
    return shutil.copytree(saves / name, tmp_path / name)


def _shards(folder):
    return sorted(set(json.loads((folder / INDEX).read_text())["weight_map"].values()))


def _edit_index(folder, edit):
    content = json.loads((folder / INDEX).read_text())
    edit(content)
    (folder / INDEX).write_text(json.dumps(content))


def _refused(folder, match):
    with pytest.raises(UserError, match=match) as e:
        load_adopted(folder)
    assert "\n" not in str(e.value)


def test_the_saves_load(saves):
    assert load_adopted(saves / "s1") is not None and load_adopted(saves / "whole") is not None


def test_a_shard_from_another_save_is_refused(saves, tmp_path):
    """Y509: loaded a model that is neither save."""
    folder = _copy(saves, "s1", tmp_path)
    last = _shards(folder)[-1]
    shutil.copy(saves / "s2" / last, folder / last)
    _refused(folder, rf"{last}' is not the shard saved with {INDEX} .*{FIX}")


def test_an_index_that_lost_an_entry_is_refused(saves, tmp_path):
    """Y510: lm_head drawn at random, with only transformers' LOAD REPORT."""
    folder = _copy(saves, "s1", tmp_path)
    _edit_index(folder, lambda c: c["weight_map"].pop("lm_head.weight"))
    _refused(folder, rf"its weight_map is not the one saved .*{FIX}")


def test_a_whole_file_without_a_tensor_is_refused(saves, tmp_path):
    """Y510's kind in a whole-file save: a model.safetensors without lm_head.weight loaded a random head."""
    from safetensors.torch import load_file, save_file

    folder = _copy(saves, "whole", tmp_path)
    tensors = load_file(folder / "model.safetensors")
    del tensors["lm_head.weight"]
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    _refused(folder, r"lack 1 of the model's tensors \(lm_head\.weight\), which would be drawn at random")


def test_a_missing_shard_is_named(saves, tmp_path):
    """Y511: transformers' raw FileNotFoundError, no fix."""
    folder = _copy(saves, "s1", tmp_path)
    first = _shards(folder)[0]
    (folder / first).unlink()
    _refused(folder, rf"{first}', a shard of this save named by {INDEX}, does not exist; {FIX}")


def test_an_index_naming_a_shard_outside_is_refused(saves, tmp_path):
    """Y512: transformers' raw "points outside the model directory" ValueError."""
    folder = _copy(saves, "s1", tmp_path)
    outside = f"../s2/{_shards(folder)[0]}"
    _edit_index(folder, lambda c: c["weight_map"].update({"lm_head.weight": outside}))
    _refused(folder, rf"names the shard '\.\./s2/.*', outside its folder.*{FIX}")


def test_an_index_without_its_record_is_refused(saves, tmp_path):
    """The record's absence would switch the check off (the P305 kind)."""
    folder = _copy(saves, "s1", tmp_path)
    _edit_index(folder, lambda c: c["metadata"].pop("leviathan_shards"))
    _refused(folder, rf"records no digests of its shards .*{FIX}")


def test_a_shard_from_another_save_is_refused_by_the_native_loader_too(tmp_path):
    """Y509's kind in ``LeviathanForCausalLM.from_pretrained``: its name check reads the shards, not the index."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf import LeviathanForCausalLM
    from leviathan.hf.export import from_native

    for seed in (1, 2):
        torch.manual_seed(seed)
        model = from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                 num_attention_heads=4, max_position_embeddings=64)))
        model.save_pretrained(tmp_path / f"n{seed}", max_shard_size="20KB")
    assert LeviathanForCausalLM.from_pretrained(tmp_path / "n1") is not None
    last = _shards(tmp_path / "n1")[-1]
    shutil.copy(tmp_path / "n2" / last, tmp_path / "n1" / last)
    with pytest.raises(UserError, match=rf"{last}' is not the shard saved with {INDEX} .*{FIX}"):
        LeviathanForCausalLM.from_pretrained(tmp_path / "n1")


@pytest.mark.parametrize("text, match", [
    (None, r"generation_config\.json': max_length -5 must be a whole number >= 1"),  # Y514
    ("{oops", r"generation_config\.json' does not read as a generation config"),  # Y515
])
def test_a_damaged_or_edited_generation_config_is_refused(saves, tmp_path, text, match):
    folder = _copy(saves, "whole", tmp_path)
    file = folder / "generation_config.json"
    if text is None:
        text = json.dumps({**json.loads(file.read_text()), "max_length": -5})
    file.write_text(text)
    _refused(folder, match)


def test_a_generation_value_no_generation_can_use_is_not_saved(tmp_path):
    """The savers' side of Y514: saved, the folder would be refused by its loader."""
    model = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    model.generation_config.max_length = -5
    with pytest.raises(UserError, match=r"max_length -5 must be a whole number >= 1 .*nothing was written"):
        model.save_pretrained(tmp_path / "m")
    assert not (tmp_path / "m").exists()
