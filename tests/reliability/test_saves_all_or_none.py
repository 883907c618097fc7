"""A save into a folder that holds an earlier save replaces the whole set of files, all or none (issue 30 round 22).

S21, S368, S371: ``save_pretrained`` (an adopted model's, ``from_native``'s) over an earlier save where config.json was
immutable (or generation_config.json a folder) said the save failed but had already replaced model.safetensors: the
earlier save lost, the folder a mix its loader blamed on an edit. S22: ``Tokenizer.save`` likewise. S485: a rerun
removed a user's ``model-mine.safetensors`` as a stale weight file. S547: a built-in tokenizer's save over a BPE's left
the BPE's tokenizer.json beside the built-in's record. ``replace_together`` is the one rule (with ``staged._swap``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.reliability]


def _adopted(rank: int, seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import adopt

    torch.manual_seed(seed)
    return adopt(LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                              num_attention_heads=2, num_key_value_heads=2)),
                 seed_dim=8, modes=2, knots=8, rank=rank)


def _native(seed: int):
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf.export import from_native

    torch.manual_seed(seed)
    return from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                            max_position_embeddings=64)))


def _files(folder: Path) -> dict:
    """name -> sha256 of every file in ``folder`` (a folder's name -> 'folder')."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder" for p in folder.iterdir()}


def _in_the_way(folder: Path, name: str, immutable) -> None:
    """Make ``folder/name`` impossible to replace: immutable (``immutable`` given) or a folder in the file's place."""
    if immutable is not None:
        immutable(folder / name)
    else:
        (folder / name).unlink()
        (folder / name).mkdir()


@pytest.mark.parametrize("kind", ["adopted", "from_native"])
@pytest.mark.parametrize("blocker", ["immutable", "folder"])
def test_a_save_pretrained_that_cannot_replace_one_file_leaves_the_earlier_save_whole(tmp_path, request, kind,
                                                                                      blocker):
    """S21 (adopted, config.json immutable), S368 (adopted, a folder in generation_config.json's place), S371
    (from_native, config.json immutable): one StorageError, and every file of the earlier save as it was."""
    from leviathan.errors import StorageError

    first, second = (_adopted(4, 0), _adopted(8, 1)) if kind == "adopted" else (_native(0), _native(1))
    folder = tmp_path / "D"
    first.save_pretrained(folder)
    name = "config.json" if blocker == "immutable" else "generation_config.json"
    _in_the_way(folder, name, request.getfixturevalue("immutable") if blocker == "immutable" else None)
    before = _files(folder)
    with pytest.raises(StorageError, match=f"{name}'"):
        second.save_pretrained(folder)
    assert _files(folder) == before  # model.safetensors too: the earlier save's, not the second's
    assert not any(p.name.startswith(".") for p in folder.iterdir())


def test_a_tokenizer_save_that_cannot_replace_its_record_leaves_the_earlier_save_whole(tmp_path, immutable):
    """S22: ``t2.save(D)`` over ``t1``'s with leviathan_tokenizer.json immutable replaced tokenizer.json first; D then
    held t2's tokenizer.json with t1's record, which load_tokenizer called hand-edited."""
    from leviathan.data.tokenizer import load_tokenizer, train_bpe
    from leviathan.errors import StorageError

    text = " ".join(f"word{i % 97} other{i % 13} thing{i % 31}" for i in range(3000))
    folder = tmp_path / "D"
    train_bpe([text], 300).save(folder)
    immutable(folder / "leviathan_tokenizer.json")
    before = _files(folder)
    with pytest.raises(StorageError, match="leviathan_tokenizer.json': operation not permitted"):
        train_bpe([text[:5000]], 280).save(folder)
    assert _files(folder) == before and load_tokenizer(folder).vocab_size == 300


def test_files_written_together_are_replaced_all_or_none(tmp_path):
    """S22's rule, where the test cannot make a file immutable: ``io.atomic_write_together`` (what ``Tokenizer.save``
    and collect_results.py write with) over a set whose second file has a folder in its place is refused before
    anything moves, the first file as it was and no temporary or aside file left; a set that can be written is. The
    refusal is the verbs' one line, an ``errors.StorageError`` that is still the EISDIR OSError (round 25, Y316)."""
    import errno

    from leviathan.errors import StorageError
    from leviathan.io import atomic_write_together

    (tmp_path / "a.json").write_text("old a")
    (tmp_path / "b.json").mkdir()
    with pytest.raises(StorageError, match="a folder is in the way") as caught:
        atomic_write_together({tmp_path / "a.json": "new a", tmp_path / "b.json": "new b"})
    assert caught.value.filename == str(tmp_path / "b.json") and caught.value.errno == errno.EISDIR
    assert (tmp_path / "a.json").read_text() == "old a" and sorted(os.listdir(tmp_path)) == ["a.json", "b.json"]
    (tmp_path / "b.json").rmdir()
    (tmp_path / "c.json").write_text("old c")
    atomic_write_together({tmp_path / "a.json": "new a", tmp_path / "b.json": "new b"}, remove=[tmp_path / "c.json"])
    assert sorted(os.listdir(tmp_path)) == ["a.json", "b.json"] and (tmp_path / "a.json").read_text() == "new a"


def test_a_save_pretrained_rerun_keeps_a_users_own_weight_files(tmp_path):
    """S485: a rerun deleted ``model-mine.safetensors`` and ``pytorch_model_backup.bin`` (they match the weight
    globs); only the files the earlier save recorded go: the shards its index names, when the new save is whole."""
    model = _adopted(4, 0)
    folder = tmp_path / "v1"
    model.save_pretrained(folder, max_shard_size="20KB")
    shards = sorted(p.name for p in folder.glob("model-0*.safetensors"))
    assert len(shards) > 1
    (folder / "model-mine.safetensors").write_text("mine")
    (folder / "pytorch_model_backup.bin").write_text("mine too")
    model.save_pretrained(folder)
    assert sorted(os.listdir(folder)) == ["config.json", "generation_config.json", "model-mine.safetensors",
                                          "model.safetensors", "pytorch_model_backup.bin"]
    model.save_pretrained(folder)  # a rerun of the same whole save keeps them too
    assert (folder / "model-mine.safetensors").read_text() == "mine"


def test_a_builtin_tokenizer_saved_over_a_bpes_folder_replaces_its_whole_set(tmp_path):
    """S547: ``load_tokenizer('o200k_base').save(D)`` over a BPE's save left the BPE's tokenizer.json beside the
    built-in's record, and the folder did not load. The earlier save's tokenizer.json (its record holds the file's
    sha256) goes with it; a user's own tokenizer.json in a folder saved by no one is still refused, not removed."""
    from leviathan.data.tokenizer import load_tokenizer, train_bpe
    from leviathan.errors import UserError

    folder = tmp_path / "tb1"
    train_bpe([" ".join(f"word{i % 97}" for i in range(2000))], 300).save(folder)
    load_tokenizer("o200k_base").save(folder)
    assert sorted(os.listdir(folder)) == ["leviathan_tokenizer.json"]
    assert load_tokenizer(folder).name == "o200k_base"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "tokenizer.json").write_text('{"mine": 1}')
    with pytest.raises(UserError, match="would write over tokenizer.json"):
        load_tokenizer("o200k_base").save(mine)
    assert (mine / "tokenizer.json").read_text() == '{"mine": 1}'
