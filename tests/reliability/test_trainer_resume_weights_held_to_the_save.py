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



def _flipped(digest):
    return ("0" if digest[0] != "0" else "1") + digest[1:]


def _restamped(raw):
    from leviathan.hf.settings_digest import stamp

    raw["leviathan_generator"]["ln_eps"] = 1e-3
    stamp(raw["leviathan_generator"])


@pytest.mark.parametrize("edit, said", [
    (lambda r: r.update(leviathan_generator=None), r"leviathan_generator is None, not the mapping of generator "
                                                   r"settings"),
    (lambda r: r["leviathan_generator"].update(rank=5), r"the generator settings \(leviathan_generator\) are not the "
                                                        r"ones save_pretrained wrote"),
    (lambda r: r["leviathan_generator"].update(settings_sha256=_flipped(r["leviathan_generator"]["settings_sha256"])),
     r"are not the ones save_pretrained wrote"),
    (_restamped, r"records generator settings \(leviathan_generator\) other than those of the "
                 r"LeviathanQwen2ForCausalLM being resumed \(ln_eps=0\.001 there, 1e-05 here\)"),
], ids=["generator-null", "rank-4-to-5", "digest-edited", "ln-eps-edited-and-restamped"])
def test_a_checkpoint_config_json_whose_settings_were_edited_is_refused_on_resume(trained, tmp_path, edit, said):
    """Round 32, AC345 (leviathan_generator null), AC347 (rank 4 -> 5), AC352 (settings_sha256 edited): resumed
    without a word, checkpoint-6 written. The settings are held to their digest as ``load_adopted`` holds them, and
    to the model being resumed (settings edited with a digest made anew)."""
    import json

    ours = tmp_path / "a"
    shutil.copytree(trained, ours)
    file = ours / "checkpoint-2" / "config.json"
    raw = json.loads(file.read_text())
    edit(raw)
    file.write_text(json.dumps(raw))
    with pytest.raises(UserError, match=rf"^'.*checkpoint-2/config\.json'.*{said}"):
        _trainer(ours, 3, 0).train(resume_from_checkpoint=True)
    assert not (ours / "checkpoint-3").exists()


def test_an_adopted_save_without_trainer_state_is_named_before_anything_is_loaded(trained, tmp_path):
    """Round 32, AC350: resume_from_checkpoint naming an adopted save (save_pretrained's folder, no trainer_state.json)
    ended in transformers' raw "FileNotFoundError: ... trainer_state.json", after the weights were loaded."""
    ours = tmp_path / "a"
    shutil.copytree(trained, ours)
    (ours / "checkpoint-2" / "trainer_state.json").unlink()
    with pytest.raises(UserError, match=r"^'.*checkpoint-2' is not a Trainer checkpoint \(it has no trainer_state\.json"
                                        r"\).*; pass a checkpoint-N folder the Trainer wrote"):
        _trainer(ours, 3, 0).train(resume_from_checkpoint=str(ours / "checkpoint-2"))
    assert not (ours / "checkpoint-3").exists()
