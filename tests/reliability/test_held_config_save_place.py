"""An adopted model's config (transformers' class, held by ``config_save.held_config``) saves by the rules
``LeviathanConfig.save_pretrained`` keeps (issue 30 round 36): into a verb's output it wrote config.json among that
output, whose own --overwrite then refused its folder (AK23); None, bytes, a NUL, a file's path and a 300-byte name
were raw TypeError, ValueError, AssertionError and OSError tracebacks (AK7, AK19, AK20, AK25, AK26). And a config-only
folder whose config.json is a link to a model folder's: both config classes wrote through the link, so that folder's
weights loaded as another model or not at all (AK8, AK10).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt, load_adopted  # noqa: E402
from leviathan.ownership import mark  # noqa: E402
from adopted_trainer_support import QWEN, SMALL  # noqa: E402

pytestmark = [pytest.mark.reliability]

NATIVE = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
              num_key_value_heads=2, generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """(an adopted model's save, a native model's save)."""
    base = tmp_path_factory.mktemp("held-config")
    torch.manual_seed(0)
    adopt(transformers.Qwen2Config(**QWEN), **SMALL).save_pretrained(base / "adopted")
    LeviathanForCausalLM(LeviathanConfig(**NATIVE)).save_pretrained(base / "native")
    return base / "adopted", base / "native"


@pytest.fixture
def held(folders):
    return load_adopted(folders[0]).config


@pytest.mark.parametrize("where, said", [
    (None, "save_pretrained: expected a path (a str or a pathlib.Path), got None; pass the path of the folder"),
    (b"hb", "save_pretrained: expected a path (a str or a pathlib.Path), got b'hb'"),
    ("a\x00b", "holds a NUL byte"),
], ids=["AK19-None", "AK20-bytes", "AK25-NUL"])
def test_a_path_that_is_no_path_is_one_line(held, where, said):
    with pytest.raises(UserError) as raised:
        held.save_pretrained(where)
    assert said in str(raised.value), raised.value


def test_a_files_path_and_a_name_too_long_are_one_line(held, tmp_path, monkeypatch):
    """AK7, AK26: the storage line the native config's save gives (nothing left behind)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile.txt").write_text("x")
    with pytest.raises(UserError, match=r"'afile\.txt': something is in the way"):
        held.save_pretrained("afile.txt")
    assert (tmp_path / "afile.txt").read_text() == "x"
    with pytest.raises(UserError, match=r"the file name is too long for the file system; choose a shorter name"):
        held.save_pretrained("n" * 300)
    assert sorted(os.listdir(tmp_path)) == ["afile.txt"]


def test_a_verbs_output_is_refused_and_left_as_it_was(held, tmp_path):
    """AK23: a folder a verb marked as its output (here `prepare`'s, its marker written as the verb writes it)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.bin").write_bytes(b"\0" * 8)
    mark(data, "prepare", ["train.bin"])
    before = sorted(os.listdir(data))
    with pytest.raises(UserError, match=r"is the output of `leviathan prepare` .*save into a folder of its own"):
        held.save_pretrained(data)
    assert sorted(os.listdir(data)) == before


@pytest.mark.parametrize("kind", ["adopted", "native"])
def test_a_config_json_linked_to_a_model_folders_is_not_written_through(folders, tmp_path, kind):
    """AK8 (LeviathanConfig of other sizes), AK10 (the held config with another rms_norm_eps)."""
    model = shutil.copytree(folders[0] if kind == "adopted" else folders[1], tmp_path / "model")
    before = (model / "config.json").read_bytes()
    config = load_adopted(folders[0]).config if kind == "adopted" else LeviathanConfig(**{**NATIVE, "hidden_size": 64})
    if kind == "adopted":
        config.rms_norm_eps = 0.5
    linked = tmp_path / "cfg"
    linked.mkdir()
    os.symlink(model / "config.json", linked / "config.json")
    with pytest.raises(UserError, match=r"config\.save_pretrained: .*holds .*model\.safetensors, saved with its own "
                                        r"config\.json, and its config\.json differs in .*(rms_norm_eps|hidden_size)"):
        config.save_pretrained(linked)
    assert (model / "config.json").read_bytes() == before
    assert (load_adopted(model) if kind == "adopted" else LeviathanForCausalLM.from_pretrained(model)) is not None


def test_a_fresh_folder_still_takes_the_held_config(held, tmp_path):
    held.save_pretrained(tmp_path / "fresh")
    assert json.loads((tmp_path / "fresh" / "config.json").read_text())["model_type"] == "qwen2"


def test_a_numpy_number_set_on_a_config_saves_as_the_number(tmp_path):
    """AK123, AK129: rms_norm_eps set to np.float32 after construction ended the save in json's raw TypeError."""
    import numpy as np

    config = LeviathanConfig(**NATIVE)
    config.rms_norm_eps = np.float32(1e-6)
    assert type(config.rms_norm_eps) is float
    config.save_pretrained(tmp_path / "saved")
    assert json.loads((tmp_path / "saved" / "config.json").read_text())["rms_norm_eps"] == float(np.float32(1e-6))


@pytest.mark.parametrize("kind", ["native", "adopted"])
def test_a_config_save_that_fails_while_writing_leaves_the_folders_file_whole(held, tmp_path, monkeypatch, kind):
    """AK127: the failure came after transformers opened config.json for writing, so a user's own config.json was
    left empty. Now the save writes into a temporary folder first; the failure here is injected where json failed."""
    folder = tmp_path / "mine"
    folder.mkdir()
    config = LeviathanConfig(**NATIVE) if kind == "native" else held
    (folder / "config.json").write_text(config.to_json_string())
    before = (folder / "config.json").read_bytes()

    def fails(self, *args, **kwargs):
        raise TypeError("Object of type float32 is not JSON serializable")

    monkeypatch.setattr(transformers.PretrainedConfig, "to_json_string", fails)
    with pytest.raises(TypeError):
        config.save_pretrained(folder)
    assert (folder / "config.json").read_bytes() == before
    assert sorted(os.listdir(folder)) == ["config.json"]


@pytest.mark.parametrize("case", ["AK189-config-json-a-folder", "AK190-a-users-own-config"])
def test_a_folder_holding_what_the_save_did_not_write_is_refused(held, tmp_path, case):
    """The held save wrote over a user's own config.json ({"mine": 1}) without a word, and met a folder named
    config.json with transformers' raw IsADirectoryError; both are the ownership line LeviathanConfig's save gives."""
    folder = tmp_path / "f"
    if case.startswith("AK189"):
        (folder / "config.json").mkdir(parents=True)
    else:
        folder.mkdir()
        (folder / "config.json").write_text('{"mine": 1}')
    with pytest.raises(UserError, match=r"save_pretrained would write over config\.json in .*which it did not create"):
        held.save_pretrained(folder)
    assert case.startswith("AK189") or (folder / "config.json").read_text() == '{"mine": 1}'
