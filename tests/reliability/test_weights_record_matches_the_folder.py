"""An adopted whole-file save's weights record (config.json's ``leviathan_weights_sha256``) and the folder's weights
files match both ways (issue 30 round 28, U229).

A record that also named a file the folder lacks (``extra.safetensors``) was taken without a word: only the files
there were read against it. Now a recorded file that is not there, and a weights file the record does not name, are
each one line (``weights_digest._check_record_names``).
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt, load_adopted  # noqa: E402

from test_adopted_save_files_held_to_the_save import FIX, GEN, LLAMA  # noqa: E402

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saves") / "whole"
    torch.manual_seed(1)
    adopt(transformers.LlamaConfig(**LLAMA), **GEN).save_pretrained(folder)
    return folder


def _refused(folder, match):
    with pytest.raises(UserError, match=match) as e:
        load_adopted(folder)
    assert "\n" not in str(e.value)


def test_a_record_of_a_file_the_folder_lacks_is_refused(whole, tmp_path):
    folder = shutil.copytree(whole, tmp_path / "w")
    config = json.loads((folder / "config.json").read_text())
    config["leviathan_weights_sha256"]["extra.safetensors"] = "0" * 64
    (folder / "config.json").write_text(json.dumps(config))
    _refused(folder, rf"records the sha256 of 'extra.safetensors' \(leviathan_weights_sha256\), which '.*w' does not "
                     rf"hold.*{FIX}")


def test_a_weights_file_the_record_does_not_name_is_refused(whole, tmp_path):
    folder = shutil.copytree(whole, tmp_path / "w")
    shutil.copy(folder / "model.safetensors", folder / "pytorch_model.bin")
    _refused(folder, r"pytorch_model\.bin' is a weights file .* does not record .*move it out of the folder")


def test_the_save_as_written_loads(whole):
    assert load_adopted(whole) is not None
