"""A ``LeviathanForCausalLM.save_pretrained`` folder records its config.json and weights files' sha256
(leviathan_save.json), and ``from_pretrained`` holds them to it (issue 30 round 35): another native model's
model.safetensors of the same shapes loaded under the folder's config.json (AI64; as a variant, AI567), and so did a
config.json edited to another rope_theta or rms_norm_eps (AI497, AI500) or one in a Trainer checkpoint (AI501), each
with other logits and no word. Two tiny models of one config, seeds 0 and 1, saved once per module.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM  # noqa: E402
from leviathan.hf.save_record import RECORD  # noqa: E402

pytestmark = [pytest.mark.reliability]

SIZES = dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
             num_key_value_heads=2, generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)


def _model(seed):
    torch.manual_seed(seed)
    return LeviathanForCausalLM(LeviathanConfig(**SIZES)).eval()


@pytest.fixture(scope="module")
def saves(tmp_path_factory):
    """(a folder saved from seed 0, one from seed 1)."""
    base = tmp_path_factory.mktemp("native-saves")
    for seed in (0, 1):
        _model(seed).save_pretrained(base / f"s{seed}")
    return base / "s0", base / "s1"


def _edit_config(folder, **values):
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **values}, indent=2))


def test_a_save_records_its_config_and_weights_and_loads(saves):
    record = json.loads((saves[0] / RECORD).read_text())
    assert record["format"] == "leviathan-save/1"
    assert sorted(record["files"]) == ["config.json", "model.safetensors"]
    ids = torch.tensor([[1, 2, 3]])
    loaded = LeviathanForCausalLM.from_pretrained(saves[0]).eval()
    assert torch.equal(loaded(ids).logits, _model(0)(ids).logits)


def test_another_models_weights_of_the_same_shapes_are_refused(saves, tmp_path):
    """AI64: the seed-1 model's weights copied over the seed-0 save's."""
    folder = shutil.copytree(saves[0], tmp_path / "swap")
    shutil.copy(saves[1] / "model.safetensors", folder / "model.safetensors")
    with pytest.raises(UserError, match=r"model\.safetensors' is not the file this folder's save wrote .*another "
                                        r"model's or another save's weights.*save the model again"):
        LeviathanForCausalLM.from_pretrained(folder)


@pytest.mark.parametrize("values", [{"rope_theta": 10.0}, {"rms_norm_eps": 0.05}], ids=["rope_theta", "rms_norm_eps"])
def test_an_edited_config_json_is_refused_and_the_setting_can_be_passed_instead(saves, tmp_path, values):
    """AI497, AI500: an in-range setting edited by hand; the fix the line names (pass it to from_pretrained) works."""
    folder = shutil.copytree(saves[0], tmp_path / "edited")
    _edit_config(folder, **values)
    with pytest.raises(UserError, match=r"config\.json' is not the file this folder's save wrote .*restore config\.json "
                                        r"from a copy; to change a setting on purpose, pass it to from_pretrained"):
        LeviathanForCausalLM.from_pretrained(folder)
    changed = LeviathanForCausalLM.from_pretrained(saves[0], **values)
    assert all(getattr(changed.config, k) == v for k, v in values.items())


def test_a_variant_swapped_for_another_models_weights_is_refused(saves, tmp_path):
    """AI567: a variant save, its file then replaced by the seed-1 model's."""
    folder = shutil.copytree(saves[0], tmp_path / "variant")
    _model(0).save_pretrained(folder, variant="v2")
    assert sorted(json.loads((folder / RECORD).read_text())["files"]) == [
        "config.json", "model.safetensors", "model.v2.safetensors"]  # the earlier default weights kept in the record
    assert LeviathanForCausalLM.from_pretrained(folder, variant="v2") is not None
    assert LeviathanForCausalLM.from_pretrained(folder) is not None
    shutil.copy(saves[1] / "model.safetensors", folder / "model.v2.safetensors")
    with pytest.raises(UserError, match=r"model\.v2\.safetensors' is not the file this folder's save wrote"):
        LeviathanForCausalLM.from_pretrained(folder, variant="v2")


def test_weights_copied_in_after_the_save_are_refused(saves, tmp_path):
    folder = shutil.copytree(saves[0], tmp_path / "added")
    shutil.copy(saves[1] / "model.safetensors", folder / "model.v3.safetensors")
    with pytest.raises(UserError, match=r"model\.v3\.safetensors' was not written by the save this folder holds .*"
                                        r"copied in afterwards.*remove it"):
        LeviathanForCausalLM.from_pretrained(folder)


@pytest.mark.parametrize("text", ["[]", '{"format": "leviathan-save/1", "files": {"../config.json": "' + "0" * 64 + '"}}',
                                  '{"format": "leviathan-save/1", "files": {"config.json": "abc"}}', "{not json"],
                         ids=["list", "path-out", "short-digest", "not-json"])
def test_a_damaged_record_is_one_line(saves, tmp_path, text):
    folder = shutil.copytree(saves[0], tmp_path / "damaged")
    (folder / RECORD).write_text(text)
    with pytest.raises(UserError, match=r"leviathan_save\.json' is not the record the model was saved with .*; "
                                        r"restore the folder from a copy, or save the model again"):
        LeviathanForCausalLM.from_pretrained(folder)


def test_a_generation_config_saved_into_the_folder_still_loads(saves, tmp_path):
    """GenerationConfig.save_pretrained into a model's folder is how its defaults are changed: not recorded."""
    folder = shutil.copytree(saves[0], tmp_path / "generation")
    transformers.GenerationConfig(max_new_tokens=7, bos_token_id=None).save_pretrained(folder)
    assert LeviathanForCausalLM.from_pretrained(folder).generation_config.max_new_tokens == 7


def test_a_folder_without_a_record_loads_as_before(saves, tmp_path):
    """The footgun the module names: the record proves the files belong together; without one, nothing is held."""
    folder = shutil.copytree(saves[0], tmp_path / "bare")
    (folder / RECORD).unlink()
    assert LeviathanForCausalLM.from_pretrained(folder) is not None


def test_a_trainer_checkpoints_edited_config_is_refused_by_a_plain_load(tmp_path):
    """AI501: a native Trainer checkpoint's config.json edited, loaded with from_pretrained (not resumed)."""

    class Rows(torch.utils.data.Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, i):
            ids = torch.arange(8) + i
            return {"input_ids": ids, "labels": ids}

    args = transformers.TrainingArguments(output_dir=str(tmp_path / "run"), max_steps=2, per_device_train_batch_size=4,
                                          save_steps=2, report_to="none", use_cpu=True, disable_tqdm=True)
    transformers.Trainer(model=_model(0).train(), args=args, train_dataset=Rows()).train()
    checkpoint = tmp_path / "run" / "checkpoint-2"
    assert LeviathanForCausalLM.from_pretrained(checkpoint) is not None
    _edit_config(checkpoint, rope_theta=10.0)
    with pytest.raises(UserError, match=r"config\.json' is not the file this folder's save wrote"):
        LeviathanForCausalLM.from_pretrained(checkpoint)
