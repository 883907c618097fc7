"""A ``transformers.Trainer`` resume holds the checkpoint's trainer_state.json, and ``LeviathanForCausalLM``'s
checkpoint config.json, before anything is loaded (issue 30 round 33): the native class's resume from a folder
without trainer_state.json ended in transformers' raw FileNotFoundError (AE153), an empty trainer_state.json in
json's raw JSONDecodeError (AE155), one that is a folder was called missing (AE156), a global_step of -3 resumed to
step 6 without a word (AE157), and a native checkpoint whose config.json says generator_rank 5 for rank-4 weights
resumed without a word (AE164). One 2-step run of each class (module scope); each case resumes an edited copy.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt  # noqa: E402
from adopted_trainer_support import QWEN, SMALL, V, D, Rows  # noqa: E402

pytestmark = [pytest.mark.reliability]

NATIVE = dict(vocab_size=V, hidden_size=D, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=64,
              generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)


def _model(kind):
    torch.manual_seed(0)
    if kind == "native":
        return LeviathanForCausalLM(LeviathanConfig(**NATIVE))
    return adopt(transformers.Qwen2Config(**QWEN), **SMALL)


def _trainer(kind, out, steps):
    args = transformers.TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=4,
                                          learning_rate=1e-2, save_steps=2, report_to="none", use_cpu=True, seed=0,
                                          disable_tqdm=True)
    return transformers.Trainer(model=_model(kind), args=args, train_dataset=Rows())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A 2-step run of each class (checkpoint-2), trained once."""
    out = {}
    for kind in ("native", "adopted"):
        out[kind] = tmp_path_factory.mktemp(f"run-{kind}") / "r"
        _trainer(kind, out[kind], 2).train()
    return out


def _state(edit):
    def apply(folder):
        path = folder / "trainer_state.json"
        if edit == "gone":
            path.unlink()
        elif edit == "empty":
            path.write_text("")
        elif edit == "folder":
            path.unlink()
            path.mkdir()
        else:
            state = json.loads(path.read_text())
            state["global_step"] = edit
            path.write_text(json.dumps(state))
    return apply


def _rank5(folder):
    config = json.loads((folder / "config.json").read_text())
    config["generator_rank"] = 5
    (folder / "config.json").write_text(json.dumps(config))


CASES = {  # id -> (edit of the checkpoint copy, the line's start after the folder)
    "gone": (_state("gone"), r"checkpoint-2' is not a Trainer checkpoint \(it has no trainer_state\.json\)"),
    "empty": (_state("empty"), r"trainer_state\.json' is not readable JSON \(Expecting value.*; the checkpoint is "
                               r"damaged: restore it from a copy"),
    "folder": (_state("folder"), r"trainer_state\.json' is a folder, not a file, where a Trainer checkpoint holds"),
    "negative-step": (_state(-3), r"trainer_state\.json' has global_step -3, where the Trainer writes the whole "
                                  r"number of steps done"),
}


@pytest.mark.parametrize("kind", ["native", "adopted"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_checkpoint_whose_trainer_state_is_not_one_is_named_before_anything_is_loaded(runs, tmp_path, kind, case):
    """AE153 (the native class, no trainer_state.json; the adopted one since round 32, AC350), AE155, AE156, AE157."""
    edit, said = CASES[case]
    copy = tmp_path / "checkpoint-2"
    shutil.copytree(runs[kind] / "checkpoint-2", copy)
    edit(copy)
    trainer = _trainer(kind, tmp_path / "out", 3)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    with pytest.raises(UserError, match=said) as caught:
        trainer.train(resume_from_checkpoint=str(copy))
    assert "\n" not in str(caught.value)
    assert all(torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())  # nothing loaded
    assert not (tmp_path / "out" / "checkpoint-3").exists()


def test_a_native_checkpoint_whose_config_records_other_settings_is_refused(runs, tmp_path):
    """AE164: generator_rank edited 4 -> 5 in a native checkpoint's config.json resumed without a word."""
    copy = tmp_path / "checkpoint-2"
    shutil.copytree(runs["native"] / "checkpoint-2", copy)
    _rank5(copy)
    trainer = _trainer("native", tmp_path / "out", 3)
    with pytest.raises(UserError, match=r"config\.json' records settings other than those of the LeviathanForCausalLM "
                                        r"being resumed \(generator_rank=5 there, 4 here\)"):
        trainer.train(resume_from_checkpoint=str(copy))


def test_a_native_runs_own_checkpoint_still_resumes(runs, tmp_path):
    copy = tmp_path / "r"
    shutil.copytree(runs["native"], copy)
    trainer = _trainer("native", copy, 3)
    trainer.train(resume_from_checkpoint=True)
    assert trainer.state.global_step == 3


@pytest.mark.parametrize("given, said", [
    (5, r"^check_resume_checkpoint: resume_from_checkpoint=5 \(of type int\) is no checkpoint folder; pass the path of a "
        r"checkpoint-N folder"),
    ("nul", r"^check_resume_checkpoint: resume_from_checkpoint: '.*' holds a NUL byte"),
    ("empty-config", r"config\.json' is not readable JSON \(Expecting value.*; restore the checkpoint folder from a "
                     r"copy"),
])
def test_the_check_function_names_what_transformers_reads_first(runs, tmp_path, given, said):
    """AE163 (a number: transformers' raw TypeError before any code of ours runs), and round 32's AC349 (a NUL) and
    AC343 (an empty config.json), which end inside the Trainer too: ``check_resume_checkpoint`` (USING.md section 5)
    names them before the resume; a run's own checkpoint, and True over its output_dir, pass."""
    from leviathan.hf import check_resume_checkpoint

    copy = tmp_path / "checkpoint-2"
    shutil.copytree(runs["adopted"] / "checkpoint-2", copy)
    if given == "nul":
        given = f"{copy}\x00"
    elif given == "empty-config":
        (copy / "config.json").write_text("")
        given = copy
    with pytest.raises(UserError, match=said) as caught:
        check_resume_checkpoint(given)
    assert "\n" not in str(caught.value)
    assert check_resume_checkpoint(runs["native"] / "checkpoint-2") == runs["native"] / "checkpoint-2"
    assert check_resume_checkpoint(True, output_dir=runs["native"]) == runs["native"] / "checkpoint-2"
    assert check_resume_checkpoint(True, output_dir=tmp_path / "none-yet") is None
