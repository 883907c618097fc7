"""A path given to ``from_pretrained`` that is no model folder is named for what it is, with the fix (issue 30 round
23), where transformers' own OSError blamed something else:

- U43: a local folder that does not exist (offline): "We couldn't connect to 'https://huggingface.co'".
- U60: the export's model.safetensors instead of its folder: "the config file ... is not a valid JSON file".
- U61, U62: a prepared data folder, a training run's: "Error no file named model.safetensors ... found", no fix.
- U412: ``LeviathanConfig.from_pretrained`` of an empty folder, or of one whose config.json is a named pipe, returned
  the default config (200,019 ids) without a word.
The checks live in ``leviathan.hf.model_path``; the same OSError for a folder holding config.json without its weights
is named too, and ``load_adopted`` names a data or run folder, and a folder that does not exist ("nope has no
config.json" before).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import leviathan.hf  # noqa: F401 (registers the Auto classes)
from leviathan.errors import UserError
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

pytestmark = pytest.mark.reliability

REPO = Path(__file__).resolve().parents[2]
PASS = r"pass the folder of an export \(leviathan export RUN OUT\) or of save_pretrained"


def test_a_missing_local_folder_is_not_blamed_on_the_network(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    script = "from leviathan.hf import LeviathanForCausalLM as L; L.from_pretrained('b3/a')"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and last.startswith("leviathan.errors.UserError: from_pretrained: 'b3/a' is no "
                                                    "folder here (it does not exist) and could not be loaded as a "
                                                    "hub model id either (transformers: "), done.stderr
    assert "check the path" in last and "pass the folder of an export" in last
    with pytest.raises(UserError, match=r"from_pretrained: '\./b3/a' does not exist; check the path, or " + PASS):
        LeviathanForCausalLM.from_pretrained("./b3/a")  # no hub id has that form: refused before transformers


def test_a_file_of_the_folder_is_refused_naming_the_folder(exported):
    for name in ("model.safetensors", "config.json"):
        with pytest.raises(UserError, match=rf"from_pretrained: '.*{name}' is a file, not a model folder; pass the "
                                            rf"folder that holds it \('{exported}'\), not one of its files"):
            LeviathanForCausalLM.from_pretrained(str(exported / name))


def test_a_data_folder_is_named_as_one(data):
    with pytest.raises(UserError, match=r"from_pretrained: '.*' is a prepared data folder \(written by `leviathan "
                                        r"prepare`\), not a model folder \(it holds no config.json\); " + PASS):
        LeviathanForCausalLM.from_pretrained(data)


def test_a_run_folder_and_its_step_folder_are_sent_to_export(finished_run):
    step = finished_run / "checkpoints" / "step-00000004"
    for folder, kind in ((finished_run, "a train run folder"), (step, "a checkpoint's step folder")):
        with pytest.raises(UserError, match=rf"is {kind} \(written by `leviathan train`\), not a model folder \(it "
                                            rf"holds no config.json\); export it first \(leviathan export "
                                            rf"{folder} OUT\) and load OUT"):
            LeviathanForCausalLM.from_pretrained(str(folder))


def test_a_folder_without_its_weights_is_named_incomplete(exported, tmp_path):
    copy = tmp_path / "ex"
    shutil.copytree(exported, copy)
    (copy / "model.safetensors").unlink()
    with pytest.raises(UserError, match=r"holds config.json but no weights \(model.safetensors, or its shards\): the "
                                        r"folder is incomplete"):
        LeviathanForCausalLM.from_pretrained(copy)


def test_leviathan_config_refuses_what_the_model_loader_refuses(exported, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"'.*empty' holds no config.json, so it is no model folder; " + PASS):
        LeviathanConfig.from_pretrained(tmp_path / "empty")
    copy = tmp_path / "ex"
    shutil.copytree(exported, copy)
    (copy / "config.json").unlink()
    os.mkfifo(copy / "config.json")
    with pytest.raises(UserError, match=r"config.json' is not readable JSON \(it is a named pipe"):
        LeviathanConfig.from_pretrained(copy)
    with pytest.raises(UserError, match="is a file, not a model folder"):
        LeviathanConfig.from_pretrained(exported / "model.safetensors")
    assert LeviathanConfig.from_pretrained(exported).vocab_size == LeviathanConfig.from_pretrained(
        exported / "config.json").vocab_size < 200_019  # the folder's, and its config.json named itself


def test_load_adopted_names_a_data_folder_and_a_missing_one(data, finished_run, tmp_path):
    from leviathan.hf import load_adopted

    with pytest.raises(UserError, match=r"has no config.json \(it is a prepared data folder \(written by `leviathan "
                                        r"prepare`\)\); pass a directory written by save_pretrained"):
        load_adopted(data)
    with pytest.raises(UserError, match=r"has no config.json \(it is a train run folder"):
        load_adopted(finished_run)
    with pytest.raises(UserError, match=r"'.*nope' does not exist; check the path, or pass a directory written by "
                                        r"save_pretrained"):
        load_adopted(tmp_path / "nope")
