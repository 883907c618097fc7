"""Resuming a ``transformers.Trainer`` checkpoint of an adopted model into a model adopted with other generator
settings names the cause and the fix (issue 30 round 24, W636): it was torch's raw 3-line "size mismatch for
model.embed_tokens.spline_coeff" from inside the Trainer. (W637, a plain model resumed from an adopted checkpoint,
runs no leviathan code: see docs/RELIABILITY.md, "Round 24 findings fixed (branch fix24d)".)
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402
from adopted_trainer_support import QWEN, Rows  # noqa: E402
from adopted_trainer_support import SMALL as RANK4  # noqa: E402



def _args(out, steps):
    return transformers.TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=8,
                                          save_steps=1, report_to="none", use_cpu=True, seed=0, disable_tqdm=True)


def test_a_checkpoint_of_other_generator_settings_is_named(tmp_path):
    config = transformers.Qwen2Config(**QWEN)
    transformers.Trainer(model=adopt(config, **RANK4), args=_args(tmp_path, 1), train_dataset=Rows()).train()
    other = adopt(config, **{**RANK4, "rank": 8})
    trainer = transformers.Trainer(model=other, args=_args(tmp_path, 2), train_dataset=Rows())
    with pytest.raises(UserError, match=r"saved from a model adopted with other generator settings \(this one: "
                                        r"seed_dim=8, modes=2, knots=8, rank=8.*load_adopted\(checkpoint\)"):
        trainer.train(resume_from_checkpoint=str(tmp_path / "checkpoint-1"))


def test_the_same_settings_still_load():
    config = transformers.Qwen2Config(**QWEN)
    source, target = adopt(config, **RANK4), adopt(config, **RANK4)
    target.load_state_dict(source.state_dict())
    assert torch.equal(target.get_input_embeddings().spline_coeff, source.get_input_embeddings().spline_coeff)
