"""A Trainer checkpoint without its record (``leviathan_checkpoint.json`` removed, or saved before it existed) has
each torch file loaded as the Trainer loads it and held to what its name says, and trainer_state.json's batch size
and callbacks read as the Trainer reads them (issue 30 round 36): optimizer.pt replaced by the checkpoint's own
scheduler.pt (AK27), rng_state.pth by optimizer.pt (AK28), a zip archive of text as optimizer.pt (AK29),
scheduler.pt by optimizer.pt (AK33), an empty zip archive as rng_state.pth (AK55), train_batch_size 'x' (AK37) and
stateful_callbacks 'x' (AK39) each passed ``check_resume_checkpoint`` and ended the resume in a raw KeyError,
RuntimeError, UnpicklingError or TypeError of torch or transformers after the weights were loaded. One 4-step run of
the adopted class (module scope); each case edits a copy of its checkpoint-4.
"""

from __future__ import annotations

import json
import shutil
import zipfile

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt, check_resume_checkpoint  # noqa: E402
from leviathan.hf.checkpoint_record import RECORD  # noqa: E402
from adopted_trainer_support import QWEN, SMALL, Rows  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _trainer(out, steps):
    torch.manual_seed(0)
    args = transformers.TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=4,
                                          save_steps=2, report_to="none", use_cpu=True, disable_tqdm=True)
    return transformers.Trainer(model=adopt(transformers.Qwen2Config(**QWEN), **SMALL), args=args,
                                train_dataset=Rows())


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("contents") / "run"
    _trainer(out, 4).train()
    return out / "checkpoint-4"


def _copy(name, source):
    return lambda d: shutil.copy(d / source, d / name)


def _zip(name, entries):
    def apply(d):
        with zipfile.ZipFile(d / name, "w") as z:
            for entry, text in entries:
                z.writestr(entry, text)
    return apply


def _state(key, value):
    def apply(d):
        state = json.loads((d / "trainer_state.json").read_text())
        (d / "trainer_state.json").write_text(json.dumps({**state, key: value}))
    return apply


CASES = {
    "AK27-optimizer-is-scheduler": (_copy("optimizer.pt", "scheduler.pt"),
                                    r"optimizer\.pt' holds keys .*not the optimizer state .*lacks state, param_groups"),
    "AK28-rng-is-optimizer": (_copy("rng_state.pth", "optimizer.pt"),
                              r"rng_state\.pth' holds keys .*not the RNG state .*lacks python, numpy, cpu"),
    "AK29-optimizer-a-text-zip": (_zip("optimizer.pt", [("x.txt", "x")]),
                                  r"optimizer\.pt' does not load as the Trainer loads it \(RuntimeError"),
    "AK33-scheduler-is-optimizer": (_copy("scheduler.pt", "optimizer.pt"),
                                    r"scheduler\.pt' holds keys .*not the scheduler state .*lacks base_lrs, last_epoch"),
    "AK55-rng-an-empty-zip": (_zip("rng_state.pth", []),
                              r"rng_state\.pth' does not load as the Trainer loads it \(UnpicklingError"),
    "AK37-batch-size-text": (_state("train_batch_size", "x"),
                             r"has train_batch_size 'x', where the Trainer writes the batch size"),
    "AK39-callbacks-text": (_state("stateful_callbacks", "x"), r"has stateful_callbacks 'x', where the Trainer writes"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_checkpoint_file_that_is_not_what_its_name_says_is_one_line(checkpoint, tmp_path, case):
    edit, said = CASES[case]
    folder = shutil.copytree(checkpoint, tmp_path / "checkpoint-4")
    (folder / RECORD).unlink()
    edit(folder)
    with pytest.raises(UserError, match=said + r".*restore (the checkpoint folder|it) from a copy, or resume from "
                                               r"another checkpoint"):
        check_resume_checkpoint(folder)


@pytest.mark.parametrize("case", ["AK27-optimizer-is-scheduler", "AK37-batch-size-text"])
def test_the_resume_itself_says_the_same(checkpoint, tmp_path, case):
    """Through ``trainer.train`` alone (the model's resume hook), before the Trainer reads the file."""
    edit, said = CASES[case]
    folder = shutil.copytree(checkpoint, tmp_path / "checkpoint-4")
    (folder / RECORD).unlink()
    edit(folder)
    with pytest.raises(UserError, match=said):
        _trainer(tmp_path / "again", 6).train(resume_from_checkpoint=str(folder))


def test_an_unedited_checkpoint_without_its_record_still_resumes(checkpoint, tmp_path):
    folder = shutil.copytree(checkpoint, tmp_path / "checkpoint-4")
    (folder / RECORD).unlink()
    assert check_resume_checkpoint(folder) == folder
    trainer = _trainer(tmp_path / "again", 6)
    trainer.train(resume_from_checkpoint=str(folder))
    assert trainer.state.global_step == 6
