"""A Trainer batch whose labels are all -100 trains as transformers' own models do (issue 30 round 29, W681).

W681: a ``transformers.Trainer`` batch with no target (a fully masked prompt batch in fine-tuning) makes the Trainer
pass ``num_items_in_batch=tensor(0)``, and the adopted forward (and ``LeviathanForCausalLM``'s) stopped training with
"num_items_in_batch must be a whole number >= 1", a count the Trainer user does not pass. transformers' own Llama
divides its summed loss by that 0: a NaN loss the Trainer leaves out of its log, with zero gradients, so the step
changes no weight. leviathan's models now take a count of 0 beside labels with no target after the shift
(``modeling.check_items_count``) and divide by 1 (``modeling.loss_count``): a loss of 0, the same zero gradients and
the same unchanged weights. A count of 0 beside labels that hold targets is still refused (round 27, S463; U619).
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import ArgumentValueError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402
from leviathan.hf.export import from_native  # noqa: E402

from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402
from test_model_inputs_held_like_their_siblings import _model  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

MODELS = {"llama": lambda: transformers.LlamaForCausalLM(transformers.LlamaConfig(**LLAMA)),
          "adopted": lambda: adopt(transformers.LlamaConfig(**LLAMA), **GEN),
          "native": lambda: from_native(_model())}


class _Masked(torch.utils.data.Dataset):
    """Rows whose every label is -100: nothing to score."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"input_ids": torch.arange(16) + i, "labels": torch.full((16,), -100)}


@pytest.mark.parametrize("name", MODELS)
def test_a_trainer_step_on_a_batch_with_no_target_changes_no_weight(tmp_path, name):
    """W681, against transformers' own Llama (``llama``) in the same step."""
    torch.manual_seed(0)
    model = MODELS[name]()
    before = {key: value.clone() for key, value in model.state_dict().items()}
    args = transformers.TrainingArguments(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4,
                                          report_to="none", use_cpu=True, disable_tqdm=True, save_strategy="no")
    transformers.Trainer(model=model, args=args, train_dataset=_Masked()).train()
    assert all(torch.equal(before[key], value) for key, value in model.state_dict().items())


@pytest.mark.parametrize("name", ["adopted", "native"])
def test_the_loss_of_no_target_is_zero_and_a_zero_count_beside_targets_is_refused(name):
    torch.manual_seed(0)
    model, ids = MODELS[name](), torch.randint(0, 300, (2, 9))
    loss = model(ids, labels=torch.full_like(ids, -100), num_items_in_batch=torch.tensor(0)).loss
    loss.backward()
    assert float(loss.detach()) == 0.0 and all(p.grad is None or not p.grad.any() for p in model.parameters())
    for count in (0, torch.tensor(0)):
        with pytest.raises(ArgumentValueError, match=r"num_items_in_batch must be a whole number >= 1, got "
                                                     r".*\(0 only where it has none\)"):
            model(ids, labels=ids, num_items_in_batch=count)
