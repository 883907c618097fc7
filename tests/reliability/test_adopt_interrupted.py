"""``adopt(b, fit=...)`` interrupted (issue 30 round 21, P211): adopt changes the caller's model ``b`` in place before
its fit, which can take minutes; a SIGINT 3 s into the fit left ``b`` half-adopted, its class
``LeviathanLlamaForCausalLM``, its trained input table replaced by a partly fitted generator (the table lost), a bare
KeyboardInterrupt. adopt now puts ``b`` back as it was (class, table, tied head, config) and says so in a note."""

from __future__ import annotations

import os
import signal

import pytest
import torch

pytestmark = [pytest.mark.reliability]


def _llama(tie: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                        num_attention_heads=4, max_position_embeddings=64, tie_word_embeddings=tie))


@pytest.mark.parametrize("tie", [False, True])
def test_a_sigint_during_adopts_fit_leaves_the_model_as_it_was(monkeypatch, tie):
    from leviathan.hf import adopt, adoption
    from leviathan.hf.adoption_fit import Fit

    real_fit = adoption.fit_to_table

    def interrupted_fit(*args, **kwargs):  # a real SIGINT, sent once the model is swapped and the fit starts
        os.kill(os.getpid(), signal.SIGINT)
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(adoption, "fit_to_table", interrupted_fit)
    b = _llama(tie)
    table = b.get_input_embeddings().weight.detach().clone()
    with pytest.raises(KeyboardInterrupt) as caught:
        adopt(b, fit=Fit(steps=100_000, text=torch.randint(0, 300, (2, 16))), seed_dim=8, modes=2, knots=8, rank=4)
    assert "the model passed in is left as it was (LlamaForCausalLM" in " ".join(caught.value.__notes__)
    assert type(b).__name__ == "LlamaForCausalLM" and type(b.get_input_embeddings()) is torch.nn.Embedding
    assert torch.equal(b.get_input_embeddings().weight, table)
    assert not hasattr(b.config, "leviathan_generator") and not hasattr(b, "leviathan_fit")
    assert b.config.tie_word_embeddings == tie and (b.lm_head.weight is b.get_input_embeddings().weight) == tie
    monkeypatch.setattr(adoption, "fit_to_table", real_fit)
    adopted = adopt(b, fit=Fit(steps=2), seed_dim=8, modes=2, knots=8, rank=4)  # and it adopts as before
    assert type(adopted).__name__ == "LeviathanLlamaForCausalLM" and adopted.leviathan_fit.steps == 2
