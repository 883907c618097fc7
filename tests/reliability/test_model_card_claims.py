"""A model card claims only the training the model had (issue 30 round 24, W671): ``to_hf(fresh model, out,
training=checkpoint_training(run1 step 4))`` wrote a card saying "4 optimizer steps" and quoting run1's validation loss
for weights that never saw a step. The exporters check the model's weights are the checkpoint's.
"""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from leviathan import CausalLM  # noqa: E402
from leviathan.checkpoint import find_checkpoint, load_model  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf.export import to_hf, to_plain_llama  # noqa: E402
from leviathan.hf.model_card import checkpoint_training  # noqa: E402


def test_a_card_of_another_models_training_is_refused(finished_run, tmp_path):
    step = find_checkpoint(finished_run)
    model, _ = load_model(step)
    training = checkpoint_training(finished_run)
    for write in (to_hf, to_plain_llama):
        with pytest.raises(UserError, match="the model's weights are not that checkpoint's .*training=None"):
            write(CausalLM(model.config), tmp_path / f"fresh-{write.__name__}", training=training)
        assert not (tmp_path / f"fresh-{write.__name__}").exists()
    to_hf(model, tmp_path / "own", training=training)  # the checkpoint's own model: its card quotes the run
    assert f"{training.step:,} optimizer steps" in (tmp_path / "own" / "README.md").read_text()
