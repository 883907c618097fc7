"""Inputs of the adopted class named in one line (issue 30 round 36): a numpy attention_mask ended in transformers'
raw AttributeError in masking_utils under sdpa and flex alike (AK68); a 4-D mask under flex_attention on the CPU with
the generator offloaded to disk aborted the process, the CPU check having read the first weight only, which offloading
leaves on meta (AK140); and ``check_resume_checkpoint(True, output_dir=np.str_(...))`` ended in get_last_checkpoint's
raw TypeError (AK108)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt, check_resume_checkpoint, load_adopted  # noqa: E402
from adopted_trainer_support import QWEN, SMALL, V  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("adopted-inputs") / "AD"
    torch.manual_seed(0)
    adopt(transformers.Qwen2Config(**QWEN), **SMALL).save_pretrained(folder)
    return folder


def test_a_numpy_attention_mask_is_named(saved):
    model = load_adopted(saved).eval()
    ids = torch.randint(0, V, (2, 9))
    with pytest.raises(UserError, match=r"forward: attention_mask must be a torch\.Tensor .*got ndarray; pass "
                                        r"torch\.as_tensor\(mask\)"):
        model(ids, attention_mask=np.ones((2, 9)))
    assert model(ids, attention_mask=torch.ones(2, 9)).logits.shape == (2, 9, V)


def test_flex_on_the_cpu_with_the_generator_offloaded_refuses_a_4d_mask(saved, tmp_path):
    places = {"model.embed_tokens": "disk", "model.layers": "cpu", "model.norm": "cpu", "model.rotary_emb": "cpu",
              "lm_head": "cpu"}
    model = load_adopted(saved, attn_implementation="flex_attention", device_map=places,
                         offload_folder=str(tmp_path / "off")).eval()
    assert next(model.parameters()).device.type == "meta"  # what the check used to read alone
    with torch.no_grad(), pytest.raises(UserError, match=r"a 4-D attention_mask under attn_implementation "
                                                         r"'flex_attention' on the CPU aborts the process"):
        model(torch.randint(0, V, (2, 9)), attention_mask=torch.ones(2, 1, 9, 9, dtype=torch.bool))


def test_a_numpy_output_dir_finds_the_last_checkpoint(tmp_path):
    (tmp_path / "checkpoint-2").mkdir()
    (tmp_path / "checkpoint-4").mkdir()
    with pytest.raises(UserError, match=r"checkpoint-4"):  # found, then named as no Trainer checkpoint
        check_resume_checkpoint(True, output_dir=np.str_(str(tmp_path)))
