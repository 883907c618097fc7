"""An adopted model's forward holds ``num_items_in_batch`` to LeviathanForCausalLM's rule (issue 30 round 28, U619).

``adopt(config)(x, labels=x, num_items_in_batch=0)`` returned an inf loss without a word: the Trainer's count, which
the summed loss is divided by. LeviathanForCausalLM refuses it since round 27 (S463-S465); the adopted class (what the
Trainer trains) calls the same function, ``modeling.check_items_count``, and keeps the original forward's signature
(the Trainer reads it to choose the dataset columns and whether the model takes loss kwargs).
"""

from __future__ import annotations

import inspect

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import ArgumentTypeError, ArgumentValueError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402
from test_adopt_config_settings_checked import GEN, LLAMA  # noqa: E402
from test_loss_and_generation_values_held_to_their_meaning import one_line  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _adopted():
    torch.manual_seed(0)
    return adopt(transformers.LlamaConfig(**LLAMA), **GEN), torch.randint(0, 300, (2, 9))


@pytest.mark.parametrize("count, kind", [(0, ArgumentValueError), (-1, ArgumentValueError), (2.5, ArgumentTypeError),
                                         (torch.tensor(0), ArgumentValueError),
                                         (torch.tensor([4, 4]), ArgumentTypeError)])
def test_an_adopted_forward_refuses_a_count_that_is_not_a_positive_whole_number(count, kind):
    model, x = _adopted()
    one_line(lambda: model(x, labels=x, num_items_in_batch=count), kind,
             "LeviathanLlamaForCausalLM.forward: num_items_in_batch must be a whole number >= 1",
             "pass the number of target positions")


def test_the_trainers_counts_are_taken_and_the_signature_kept():
    model, x = _adopted()
    summed = model(x, labels=x, num_items_in_batch=1).loss
    for count in (16, torch.tensor(16), torch.tensor(16) / 1):
        assert torch.allclose(model(x, labels=x, num_items_in_batch=count).loss, summed / 16)
    assert inspect.signature(model.forward) == inspect.signature(transformers.LlamaForCausalLM(model.config).forward)
