"""``save_pretrained`` arguments a whole save cannot honour, and ``adopt``'s fit inputs that are no counts (issue 30
round 20). ``save_pretrained(push_to_hub=True)`` pushed the hidden temporary folder, its name the repo id (M10);
``save_pretrained(state_dict={})`` wrote a folder that looked like a save and loaded nowhere (M8); a
``Fit.frequency`` on the meta device was torch's NotImplementedError (M323); ``Fit(buckets=400)`` of 300 ids gave 91
buckets without a word (M324b). Each is one UserError, nothing written."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                        num_attention_heads=4, max_position_embeddings=64))


def _native():
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf.export import from_native

    return from_native(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                            max_position_embeddings=64)))


def test_save_pretrained_refuses_push_to_hub_and_a_partial_state_dict(tmp_path):
    from leviathan.hf import adopt, bake_adopted, load_adopted

    adopted = adopt(_llama(), seed_dim=8, modes=2, knots=8, rank=4)
    for model in (adopted, _native()):
        with pytest.raises(UserError, match=r"push_to_hub=True\) is not supported .*upload_folder"):
            model.save_pretrained(tmp_path / "hub", push_to_hub=True)
        with pytest.raises(UserError, match=r"state_dict lacks \d+ of the model's tensors .*full state_dict"):
            model.save_pretrained(tmp_path / "partial", state_dict={})
    with pytest.raises(UserError, match=r"push_to_hub=True\) is not supported"):  # bake_adopted passes it on
        bake_adopted(adopted, tmp_path / "baked", push_to_hub=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    adopted.save_pretrained(tmp_path / "full", state_dict=adopted.state_dict())  # the model's own: saved
    assert load_adopted(tmp_path / "full") is not None


@pytest.mark.parametrize("frequency, buckets, said", [
    (torch.ones(300, device="meta"), 5, r"Fit\.frequency is a tensor on the meta device"),
    (np.arange(300), 400, r"Fit\.buckets=400 is more than the 300 ids of the table")])
def test_adopt_refuses_a_frequency_it_cannot_use(frequency, buckets, said):
    from leviathan.hf import adopt
    from leviathan.hf.adoption_fit import Fit

    with pytest.raises(UserError, match=said):
        adopt(_llama(), fit=Fit(steps=2, frequency=frequency, buckets=buckets), seed_dim=8, modes=2, knots=8, rank=4)
