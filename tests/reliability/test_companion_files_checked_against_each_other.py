"""A saved model's files are checked against each other before they load together (issue 30 round 27): an adopted
whole-file save recorded no digest of its model.safetensors, so another save's weights (same settings, seed 9) loaded
under this config.json without a word (S475: now ``weights_digest``); an export whose leviathan_output.json was a
named pipe was read as a folder with no marker, its files check skipped without a word (S576: now
``ownership.read_marker`` names what stands there); and a Trainer checkpoint of a center=False adoption resumed
into a model adopted with center=True, keeping the model's own initial ``center`` buffer (S478: now
``adoption._refuse_other_tensors``).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, adopt, load_adopted  # noqa: E402
from leviathan.hf.export import to_hf  # noqa: E402
from test_hf_keywords_at_the_boundary import GEN, LLAMA, _native, _one_line  # noqa: E402
from test_trainer_resume_across_adoptions import QWEN, RANK4, Rows, _args  # noqa: E402

pytestmark = pytest.mark.reliability


def _saved(folder, seed):
    torch.manual_seed(seed)
    adopt(transformers.LlamaConfig(**LLAMA), **GEN).save_pretrained(folder)
    return folder


def test_an_adopted_save_refuses_another_saves_weights_file(tmp_path):
    """S475: seed 9's model.safetensors under seed 1's config.json loaded seed 9's logits."""
    one, nine = _saved(tmp_path / "x1", 1), _saved(tmp_path / "x9", 9)
    shutil.copy(nine / "model.safetensors", one / "model.safetensors")
    with pytest.raises(UserError, match=r"model\.safetensors' is not the weights file saved with .*config\.json' "
                                        r"\(sha256 .*: it comes from another save .*; restore the folder") as e:
        load_adopted(one)
    _one_line(e)


def test_an_adopted_save_without_its_weights_record_is_refused(tmp_path):
    """S475's footgun: a record taken out would switch the check off."""
    folder = _saved(tmp_path / "x1", 1)
    config = json.loads((folder / "config.json").read_text())
    del config["leviathan_weights_sha256"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(UserError, match=r"config\.json' records no sha256 of its weights \(leviathan_weights_sha256\)"):
        load_adopted(folder)


def test_an_adopted_save_still_loads_and_saves_again(tmp_path):
    model = load_adopted(_saved(tmp_path / "x1", 1))
    assert not hasattr(model.config, "leviathan_weights_sha256")  # never carried stale into a later save
    model.save_pretrained(tmp_path / "x2")
    load_adopted(tmp_path / "x2")


def test_an_exports_marker_that_is_a_pipe_is_named(tmp_path):
    """S576: the marker unreadable, the export's sha256 check was skipped as for a folder without one."""
    folder = to_hf(_native(), tmp_path / "ex")
    os.remove(folder / "leviathan_output.json")
    os.mkfifo(folder / "leviathan_output.json")
    with pytest.raises(UserError, match=r"leviathan_output\.json' is a named pipe \(FIFO\), not a regular file .*, "
                                        r"where leviathan keeps its output marker; ") as e:
        LeviathanForCausalLM.from_pretrained(folder)
    _one_line(e)


@pytest.mark.parametrize("saved, resumed", [(False, True), (True, False)])
def test_a_trainer_checkpoint_of_another_center_setting_is_named(tmp_path, saved, resumed):
    """S478: the Trainer loads with strict=False; a buffer the checkpoint lacks (or holds) was taken without a word."""
    config = transformers.Qwen2Config(**QWEN)
    model = adopt(config, **RANK4, center=saved)
    transformers.Trainer(model=model, args=_args(tmp_path, 1), train_dataset=Rows()).train()
    other = adopt(config, **RANK4, center=resumed)
    trainer = transformers.Trainer(model=other, args=_args(tmp_path, 2), train_dataset=Rows())
    said = "lack its model.embed_tokens.center" if resumed else "hold model.embed_tokens.center, which it has not"
    with pytest.raises(UserError, match=f"{said}: they were saved from a generator adopted with other settings \\(this "
                                        f"one: center={resumed}, .*load_adopted\\(checkpoint\\)\\), then resume"):
        trainer.train(resume_from_checkpoint=str(tmp_path / "checkpoint-1"))
