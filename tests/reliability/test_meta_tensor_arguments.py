"""A tensor argument on the meta device (a shape, no values) given to a model's public method is one line (issue 30
round 29).

W744: ``CausalLM.restrict_output_(torch.tensor([1, 2, 3], device='meta'))`` ended in torch's raw "Cannot copy out of
meta tensor; no data!"; ``meta_device.refuse_meta`` spoke for weights and ids on meta, not for these. The same gap in
the models' other tensor arguments: ``attention_mask`` / ``position_ids`` (``attention_inputs.check_attention_inputs``:
torch's "Tensor.item() cannot be called on meta tensors"), ``num_items_in_batch`` (``modeling.check_items_count``) and
an adopted model's ``labels`` and ``attention_mask`` (``adoption._refuse_meta_arguments``: transformers' loss and mask
code, "Cannot copy out of meta tensor").
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402
from leviathan.hf.export import from_native  # noqa: E402

from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402
from test_model_inputs_held_like_their_siblings import _model  # noqa: E402

pytestmark = pytest.mark.reliability

IDS = torch.tensor([[1, 2, 3]])
META = torch.tensor([[1, 1, 1]], device="meta")


def _refused(call, name):
    words = r" is on the meta device \(a shape and a dtype, no values.*; pass "
    with pytest.raises(UserError, match=name + words) as e:
        call()
    assert "\n" not in str(e.value)


def test_restrict_output_refuses_ids_on_meta():
    """W744; the same ids with values are taken."""
    _refused(lambda: _model().restrict_output_(torch.tensor([1, 2, 3], device="meta")), r"restrict_output_: ids")
    assert _model().restrict_output_(torch.tensor([1, 2, 3])).output_ids.tolist() == [1, 2, 3]


@pytest.mark.parametrize("name", ["attention_mask", "position_ids"])
def test_the_native_models_refuse_a_mask_or_positions_on_meta(name):
    _refused(lambda: _model()(IDS, **{name: META}), name)
    _refused(lambda: from_native(_model())(IDS, **{name: META}), name)


def test_a_count_on_meta_is_refused():
    count = torch.tensor(2, device="meta")
    _refused(lambda: from_native(_model())(IDS, labels=IDS, num_items_in_batch=count), r"num_items_in_batch")


@pytest.mark.parametrize("name", ["labels", "attention_mask", "num_items_in_batch"])
def test_an_adopted_model_refuses_its_tensor_arguments_on_meta(name):
    torch.manual_seed(0)
    model = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    given = {"labels": IDS, name: torch.tensor(2, device="meta") if name == "num_items_in_batch" else META}
    _refused(lambda: model(IDS, **given), rf"LeviathanLlamaForCausalLM\.forward: {name}")
    assert torch.isfinite(model(IDS, labels=IDS, attention_mask=torch.ones_like(IDS)).loss)
