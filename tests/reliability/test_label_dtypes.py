"""Target ids of a dtype other than torch.long are refused in one line with the fix (issue 30 round 26).

``CausalLM(ids, labels=<uint16>)`` (the token files' dtype) and ``LeviathanForCausalLM`` ended in torch's raw
NotImplementedError "lt_cpu not implemented for 'UInt16'" (Q113, Q185); ``linear_cross_entropy`` with uint8 labels
in "gather(): Expected dtype int32/int64 for index" (Q82); int32 labels in "expected target dtype to be Long or
Byte". Now each is ``errors.ArgumentTypeError`` (a UserError, still a TypeError) naming the dtype and ``.long()``.
"""

from __future__ import annotations

import pytest
import torch

from leviathan import CausalLM, ModelConfig
from leviathan.errors import ArgumentTypeError
from leviathan.model.loss import linear_cross_entropy

pytestmark = pytest.mark.reliability

SMALL = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, generator_seed_dim=8,
             generator_modes=2, generator_knots=8, generator_rank=4)
IDS = torch.tensor([[1, 2, 3, 4]])


@pytest.mark.parametrize("dtype", [torch.uint16, torch.uint8, torch.int32, torch.int16])
def test_labels_of_another_integer_dtype_are_one_line_with_the_fix(dtype):
    model = CausalLM(ModelConfig(**SMALL))
    with pytest.raises(ArgumentTypeError, match=rf"labels are {dtype}; target ids are torch.long .*labels.long\(\)"):
        model(IDS, labels=IDS.to(dtype))
    hidden, weight = torch.randn(4, 8), torch.randn(300, 8)
    with pytest.raises(ArgumentTypeError, match=rf"linear_cross_entropy: labels are {dtype}"):
        linear_cross_entropy(hidden, weight, IDS.reshape(-1).to(dtype))


def test_long_labels_still_train():
    model = CausalLM(ModelConfig(**SMALL))
    _, loss = model(IDS, labels=IDS)[:2]
    assert torch.isfinite(loss)

