"""A ``transformers.Trainer`` checkpoint of either HF class records every file's sha256 (leviathan_checkpoint.json),
and a resume holds the files to it (issue 30 round 33): another run's optimizer.pt of the same step (AE158), an
earlier step's scheduler.pt (AE159) and another run's trainer_state.json (AE165) were resumed without a word. Two
4-step runs of each class (module scope, seeds 0 and 1, a checkpoint every 2 steps, a log line every step so the two
runs' trainer_state.json differ); each case resumes an edited copy of run 0's checkpoint-4.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import (LeviathanConfig, LeviathanForCausalLM, RecordCheckpointFiles, adopt,  # noqa: E402
                          check_resume_checkpoint)
from leviathan.hf.checkpoint_record import RECORD  # noqa: E402
from adopted_trainer_support import QWEN, SMALL, V, D, Rows  # noqa: E402

pytestmark = [pytest.mark.reliability]

NATIVE = dict(vocab_size=V, hidden_size=D, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=64,
              generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)


def _trainer(kind, out, steps, seed=0, callbacks=None):
    torch.manual_seed(seed)
    model = (LeviathanForCausalLM(LeviathanConfig(**NATIVE)) if kind == "native"
             else adopt(transformers.Qwen2Config(**QWEN), **SMALL))
    args = transformers.TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=4,
                                          learning_rate=1e-2, save_steps=2, logging_steps=1, report_to="none",
                                          use_cpu=True, seed=seed, disable_tqdm=True)
    return transformers.Trainer(model=model, args=args, train_dataset=Rows(), callbacks=callbacks)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """kind -> (run 0's output folder, run 1's), each trained 4 steps."""
    out = {}
    for kind in ("native", "adopted"):
        base = tmp_path_factory.mktemp(f"record-{kind}")
        for seed in (0, 1):
            _trainer(kind, base / f"s{seed}", 4, seed).train()
        out[kind] = (base / "s0", base / "s1")
    return out


def _copy_from(name, run, step):
    def apply(folder, runs):
        shutil.copy(runs[run] / f"checkpoint-{step}" / name, folder / name)
    return apply


def _remove(name):
    return lambda folder, runs: (folder / name).unlink()


def _write(name, text):
    return lambda folder, runs: (folder / name).write_text(text)


CASES = {  # id -> (edit of run 0's checkpoint-4 copy, the line's start after the folder)
    "optimizer-other-run": (_copy_from("optimizer.pt", 1, 4),  # AE158
                            r"optimizer\.pt' is not the file the Trainer saved into this checkpoint"),
    "scheduler-earlier-step": (_copy_from("scheduler.pt", 0, 2),  # AE159
                               r"scheduler\.pt' is not the file the Trainer saved into this checkpoint"),
    "state-other-run": (_copy_from("trainer_state.json", 1, 4),  # AE165
                        r"trainer_state\.json' is not the file the Trainer saved into this checkpoint"),
    "rng-other-run": (_copy_from("rng_state.pth", 1, 4), r"rng_state\.pth' is not the file the Trainer saved"),
    "optimizer-gone": (_remove("optimizer.pt"),  # the Trainer would go on with a fresh optimizer, silently
                       r"optimizer\.pt' is missing, though the Trainer saved it into this checkpoint"),
    "scaler-added": (_write("scaler.pt", "x"), r"scaler\.pt' was not in this checkpoint when the Trainer saved it"),
    "record-empty": (_write(RECORD, ""), r"leviathan_checkpoint\.json' is not the record the checkpoint was saved "
                                         r"with \(Expecting value"),
    "record-format": (_write(RECORD, '{"format": "other", "files": {}}'),
                      r"leviathan_checkpoint\.json. is not the record the checkpoint was saved with "
                      r"\(not an object with format"),
    "record-escape": (_write(RECORD, json.dumps({"format": "leviathan-trainer-checkpoint/1",
                                                 "files": {"../x": "0" * 64}})),
                      r"leviathan_checkpoint\.json' is not the record.*its entry '\.\./x'.* is no file name"),
}


@pytest.mark.parametrize("kind", ["native", "adopted"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_checkpoint_file_not_the_saved_one_is_refused(runs, tmp_path, kind, case):
    edit, line = CASES[case]
    folder = tmp_path / "r" / "checkpoint-4"
    shutil.copytree(runs[kind][0] / "checkpoint-4", folder)
    edit(folder, runs[kind])
    with pytest.raises(UserError, match=r"checkpoint-4/" + line):
        check_resume_checkpoint(folder)
    trainer = _trainer(kind, tmp_path / "r", 6)
    with pytest.raises(UserError, match=r"checkpoint-4/" + line):
        trainer.train(resume_from_checkpoint=str(folder))
    assert trainer.state.global_step == 0  # nothing trained on the refused state


@pytest.mark.parametrize("kind", ["native", "adopted"])
def test_the_record_lists_every_file_and_an_untouched_copy_resumes(runs, tmp_path, kind):
    saved = runs[kind][0] / "checkpoint-4"
    files = json.loads((saved / RECORD).read_text())["files"]
    assert {"optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json", "config.json",
            "model.safetensors"} <= set(files)
    folder = tmp_path / "r" / "checkpoint-4"
    shutil.copytree(saved, folder)
    assert _trainer(kind, tmp_path / "r", 6).train(resume_from_checkpoint=str(folder)).global_step == 6
    resumed = json.loads((tmp_path / "r" / "checkpoint-6" / RECORD).read_text())["files"]
    assert set(resumed) == set(files)  # the resumed run's checkpoints are recorded too


def test_a_checkpoint_without_a_record_resumes_unchecked(runs, tmp_path):
    """A checkpoint saved before the record existed: resumed as before (the record is not a signature)."""
    folder = tmp_path / "r" / "checkpoint-4"
    shutil.copytree(runs["adopted"][0] / "checkpoint-4", folder)
    (folder / RECORD).unlink()
    shutil.copy(runs["adopted"][1] / "checkpoint-4" / "optimizer.pt", folder / "optimizer.pt")
    assert _trainer("adopted", tmp_path / "r", 6).train(resume_from_checkpoint=str(folder)).global_step == 6


def test_the_callback_given_by_the_user_is_added_once(tmp_path):
    trainer = _trainer("native", tmp_path / "r", 2, callbacks=[RecordCheckpointFiles()])
    trainer.train()
    assert sum(isinstance(c, RecordCheckpointFiles) for c in trainer.callback_handler.callbacks) == 1
    assert (tmp_path / "r" / "checkpoint-2" / RECORD).is_file()


def test_a_save_outside_the_trainer_writes_no_record(tmp_path):
    model = LeviathanForCausalLM(LeviathanConfig(**NATIVE))
    model.save_pretrained(tmp_path / "m")
    assert not (tmp_path / "m" / RECORD).exists()


def test_transformers_still_names_the_methods_the_record_hooks():
    """The record is attached from ``Trainer._save_checkpoint``'s frame and checked from ``_load_from_checkpoint``'s:
    a transformers that renames either would write or check nothing (checkpoint_record's footgun)."""
    assert callable(getattr(transformers.Trainer, "_save_checkpoint", None))
    assert callable(getattr(transformers.Trainer, "_load_from_checkpoint", None))


@pytest.mark.parametrize("kind,verb", [("native", "train"), ("adopted", "export"), ("adopted", "prepare")])
def test_a_refused_trainer_save_into_a_verbs_output_leaves_nothing(tmp_path, kind, verb):
    """AI375-AI377: the Trainer's output_dir a verb's output: the save is refused, and the empty checkpoint-2/ the
    Trainer made first is gone, so the verb's own --overwrite still takes its folder."""
    from leviathan.ownership import check_replaceable, mark

    out = tmp_path / "out"
    out.mkdir()
    (out / "model.safetensors").write_text("x")
    mark(out, verb, ["model.safetensors"])
    with pytest.raises(UserError, match=r"checkpoint-2' lies inside .* is the output of `leviathan " + verb):
        _trainer(kind, out, 2).train()
    assert sorted(p.name for p in out.iterdir()) == ["leviathan_output.json", "model.safetensors"]
    check_replaceable(out, verb, "--overwrite")


def _truncate(name):
    return lambda folder, runs: open(folder / name, "r+b").truncate(100)


def _state(**values):
    def apply(folder, runs):
        state = json.loads((folder / "trainer_state.json").read_text())
        (folder / "trainer_state.json").write_text(json.dumps({**state, **values}))
    return apply


def _rng_folder(folder, runs):
    (folder / "rng_state.pth").unlink()
    (folder / "rng_state.pth").mkdir()


ROUND_35 = {  # id -> (edit of a checkpoint-4 copy, the line with the record, the line without it or None)
    "AI47": (_state(global_step=10 ** 6), r"trainer_state\.json' has global_step 1000000, but",  # state first
             r"trainer_state\.json' has global_step 1000000, but the Trainer names each checkpoint after its step"),
    "AI48": (_state(log_history="x"), r"trainer_state\.json' has a log_history of 'x'",
             r"trainer_state\.json' has a log_history of 'x'"),
    "AI50": (_state(global_step=2), r"trainer_state\.json' has global_step 2, but",
             r"trainer_state\.json' has global_step 2, but"),
    "AI52": (_remove("model.safetensors"), r"model\.safetensors' is missing, though the Trainer saved it",
             r"' holds no weights file \(model\.safetensors\)"),
    "AI60": (_truncate("model.safetensors"), r"model\.safetensors' is not the file the Trainer saved",
             r"model\.safetensors' is not a whole safetensors file \(Error while deserializing header"),
    "AI66": (_truncate("optimizer.pt"), r"optimizer\.pt' is not the file the Trainer saved",
             r"optimizer\.pt' is not a file torch saved \(no readable zip archive"),
    "AI67": (_remove("scheduler.pt"), r"scheduler\.pt' is missing, though the Trainer saved it", None),
    "AI68": (_rng_folder, r"rng_state\.pth' is missing, though the Trainer saved it",
             r"rng_state\.pth' is not a file, where the Trainer saved one"),
}


@pytest.mark.parametrize("kind", ["native", "adopted"])
@pytest.mark.parametrize("recorded", [True, False], ids=["record", "no-record"])
@pytest.mark.parametrize("case", sorted(ROUND_35))
def test_round_35_edits_of_a_checkpoint_are_named_with_or_without_a_record(runs, tmp_path, kind, recorded, case):
    """Round 35 (AI47-AI68): a fresh checkpoint's record names each edit; one saved without a record (before the
    record existed) names a removed or truncated weights / optimizer file, an RNG file that is a folder, a
    log_history that is no list and a global_step other than the folder's name (checkpoint_files,
    trainer_resume.check_trainer_state). A scheduler.pt removed from an unrecorded checkpoint is transformers' own
    fresh schedule (AE158's kind, left by decision): nothing to name."""
    edit, with_record, without = ROUND_35[case]
    folder = tmp_path / "r" / "checkpoint-4"
    shutil.copytree(runs[kind][0] / "checkpoint-4", folder)
    if not recorded:
        (folder / RECORD).unlink()
    edit(folder, runs[kind])
    line = with_record if recorded else without
    if line is None:
        assert check_resume_checkpoint(folder) == folder
        return
    with pytest.raises(UserError, match=r"checkpoint-4" + ("" if line.startswith("'") else "/") + line):
        check_resume_checkpoint(folder)


@pytest.mark.parametrize("kind", ["native", "adopted"])
def test_an_unrecorded_truncated_optimizer_is_named_by_the_trainers_resume(runs, tmp_path, kind):
    """AI66 through trainer.train: the weights load (the hook runs), then torch's raw PytorchStreamReader error came
    from the optimizer's load; now the hook names it and nothing trains."""
    folder = tmp_path / "r" / "checkpoint-4"
    shutil.copytree(runs[kind][0] / "checkpoint-4", folder)
    (folder / RECORD).unlink()
    _truncate("optimizer.pt")(folder, runs)
    trainer = _trainer(kind, tmp_path / "r", 6)
    with pytest.raises(UserError, match=r"optimizer\.pt' is not a file torch saved"):
        trainer.train(resume_from_checkpoint=str(folder))
    assert trainer.state.global_step == 0


def test_the_output_dir_is_checked_beside_a_checkpoint_path_and_a_file_refused(runs, tmp_path):
    """AI426 (output_dir=5 taken beside a path), AI421 (a file as output_dir: None, "no checkpoint yet")."""
    with pytest.raises(UserError, match=r"output_dir: expected a path .* got 5"):
        check_resume_checkpoint(runs["native"][0] / "checkpoint-4", output_dir=5)
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(UserError, match=r"output_dir '.*a\.txt' is a file, not a folder"):
        check_resume_checkpoint(True, output_dir=tmp_path / "a.txt")


def test_the_native_class_resuming_an_adopted_checkpoint_names_the_other_class(runs, tmp_path):
    """AI54: the line blamed config.json's key 'layer_types' and said to remove it."""
    trainer = _trainer("native", tmp_path / "r", 6)
    with pytest.raises(UserError, match=r"config\.json' is the config of another model class \(model_type 'qwen2', "
                                        r"adopted\), not of the LeviathanForCausalLM being resumed"):
        trainer.train(resume_from_checkpoint=str(runs["adopted"][0] / "checkpoint-4"))


def test_the_native_class_names_another_models_weights_in_an_unrecorded_checkpoint(runs, tmp_path):
    """AI56: the adopted run's model.safetensors copied into the native checkpoint (no record): torch's raw "size
    mismatch" from load_state_dict; now the first tensor of another shape is named and nothing trains."""
    folder = tmp_path / "r" / "checkpoint-4"
    shutil.copytree(runs["native"][0] / "checkpoint-4", folder)
    (folder / RECORD).unlink()
    shutil.copy(runs["adopted"][0] / "checkpoint-4" / "model.safetensors", folder / "model.safetensors")
    trainer = _trainer("native", tmp_path / "r", 6)
    with pytest.raises(UserError, match=r"checkpoint-4': its weights file holds .* of shape \(\d+, \d+\), where the "
                                        r"LeviathanForCausalLM being resumed has"):
        trainer.train(resume_from_checkpoint=str(folder))
    assert trainer.state.global_step == 0
