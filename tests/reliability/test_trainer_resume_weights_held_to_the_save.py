"""A ``transformers.Trainer`` resume of an adopted model reads its checkpoint's own weights file (issue 30 round 30,
Y535): another run's checkpoint-2 model.safetensors (same shapes) copied over this run's was resumed without a word,
though config.json records the sha256 of the weights saved with it, which ``load_adopted`` checks. The adopted
class's ``load_state_dict`` (what the Trainer calls) now checks it too (``hf.trainer_resume``), before anything is
loaded; this run's own checkpoint still resumes.
"""

from __future__ import annotations

import inspect
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402
from leviathan.hf.trainer_resume import _LOADER  # noqa: E402
from adopted_trainer_support import QWEN, SMALL, Rows  # noqa: E402

pytestmark = [pytest.mark.reliability]



def _trainer(out, steps, seed):
    args = transformers.TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=4,
                                          learning_rate=1e-2, save_steps=2, report_to="none", use_cpu=True, seed=seed,
                                          disable_tqdm=True)
    torch.manual_seed(seed)
    return transformers.Trainer(model=adopt(transformers.Qwen2Config(**QWEN), **SMALL), args=args,
                                train_dataset=Rows())


def test_another_runs_weights_in_the_checkpoint_are_refused_on_resume(tmp_path):
    ours, theirs = tmp_path / "a", tmp_path / "b"
    for out, seed in ((ours, 0), (theirs, 1)):
        _trainer(out, 2, seed).train()
    weights = ours / "checkpoint-2" / "model.safetensors"
    shutil.copy(theirs / "checkpoint-2" / "model.safetensors", weights)
    trainer = _trainer(ours, 3, 0)
    with pytest.raises(UserError) as caught:
        trainer.train(resume_from_checkpoint=True)
    said = str(caught.value)
    assert said.startswith(f"{str(weights)!r} is not the weights file saved with "
                           f"{str(ours / 'checkpoint-2' / 'config.json')!r} (sha256 ")
    assert "\n" not in said and said.endswith("restore the folder from a copy, or save the model again "
                                              "(model.save_pretrained(DIR))")
    assert not (ours / "checkpoint-3").exists()


def test_a_runs_own_checkpoint_still_resumes(tmp_path):
    _trainer(tmp_path, 2, 0).train()
    trainer = _trainer(tmp_path, 3, 0)
    trainer.train(resume_from_checkpoint=True)
    assert trainer.state.global_step == 3


def test_the_trainer_method_the_check_reads_is_there():
    """The check finds the folder in ``Trainer._load_from_checkpoint``'s frame: a transformers that renamed it would
    resume unchecked (hf/trainer_resume.py's footgun)."""
    method = getattr(transformers.Trainer, _LOADER)
    assert "resume_from_checkpoint" in inspect.signature(method).parameters


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 2-step Trainer run of an adopted model (checkpoint-2), trained once; tests resume copies of it."""
    out = tmp_path_factory.mktemp("trainer-run") / "a"
    _trainer(out, 2, 0).train()
    return out


@pytest.mark.parametrize("config, said", [
    (None, r"config\.json' is missing, though an adopted model's save_pretrained writes it into every checkpoint"),
    ('{"a": 1, "a": 2}', r"config\.json' is not readable JSON \(.*'a'.*\)"),
    ('{"a": 1}', r"config\.json' is not an adopted model's config\.json \(it has no leviathan_generator\)"),
])
def test_a_checkpoint_config_json_missing_or_not_the_saves_is_refused_on_resume(trained, tmp_path, config, said):
    """Round 31, AA736 (no config.json), AA737 (a key twice): resumed without a word, the digest check skipped."""
    ours = tmp_path / "a"
    shutil.copytree(trained, ours)
    file = ours / "checkpoint-2" / "config.json"
    file.unlink()
    if config is not None:
        file.write_text(config)
    with pytest.raises(UserError, match=rf"^'.*checkpoint-2/{said}.*; restore the checkpoint folder from a copy, or "
                                        r"resume from another checkpoint \(trainer\.train\(resume_from_checkpoint="
                                        r"FOLDER\)\)$"):
        _trainer(ours, 3, 0).train(resume_from_checkpoint=True)
    assert not (ours / "checkpoint-3").exists()
