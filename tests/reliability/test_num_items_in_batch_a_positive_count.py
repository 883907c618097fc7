"""The Hugging Face model's ``num_items_in_batch`` is a positive whole count, or it is refused in one line (issue 30
round 27, S463-S465).

``LeviathanForCausalLM(x, labels=x, num_items_in_batch=0 / -1 / 2.5)`` returned a loss of inf, a negative
cross-entropy and a fractional count's loss, without a word: round 26 pinned ``num_items_in_batch`` as the
Trainer's count (the summed loss is divided by it) but checked neither its sign nor that it is whole. The Trainer
passes a one-value tensor, a float one after its division by the parallel sizes: that stays taken.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from test_loss_and_generation_values_held_to_their_meaning import one_line  # noqa: E402

from leviathan.errors import ArgumentTypeError, ArgumentValueError  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _model_and_ids():
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

    torch.manual_seed(0)
    model = LeviathanForCausalLM(LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                 num_attention_heads=4, max_position_embeddings=64,
                                                 generator_seed_dim=8, generator_modes=2, generator_knots=8,
                                                 generator_rank=4))
    return model, torch.randint(0, 300, (2, 9))


@pytest.mark.parametrize("count, kind", [(0, ArgumentValueError), (-1, ArgumentValueError),
                                         (2.5, ArgumentTypeError), (True, ArgumentTypeError),
                                         (torch.tensor(0), ArgumentValueError),
                                         (torch.tensor(-3.0), ArgumentValueError),
                                         (torch.tensor(2.5), ArgumentValueError),
                                         (torch.tensor([4, 4]), ArgumentTypeError),
                                         (torch.tensor(True), ArgumentTypeError)])
def test_a_count_that_is_not_a_positive_whole_number_is_refused(count, kind):
    model, x = _model_and_ids()
    one_line(lambda: model(x, labels=x, num_items_in_batch=count), kind, "num_items_in_batch must be a whole number "
             ">= 1", "pass the number of target positions")


def test_the_trainers_counts_are_taken():
    """An int, and the Trainer's one-value tensor: ``labels.ne(-100).sum()``, then divided (a float tensor)."""
    model, x = _model_and_ids()
    summed = model(x, labels=x, num_items_in_batch=1).loss
    for count in (16, torch.tensor(16), torch.tensor(16) / 1, torch.tensor([16.0])):
        assert torch.allclose(model(x, labels=x, num_items_in_batch=count).loss.flatten(), summed.flatten() / 16)
