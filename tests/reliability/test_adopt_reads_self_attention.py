"""``adopt`` judges a model's causality by its self-attention, not by the cross-attention a decoder layer carries
(issue 30 round 24, W181, W644): MarianForCausalLM and BartForCausalLM built with is_decoder=True have a causal
``self_attn`` and a non-causal ``encoder_attn`` in each decoder layer, and were refused as "encoder-only" models.
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt, to_original  # noqa: E402

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
IDS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2, forced_eos_token_id=2)
DECODER = dict(vocab_size=300, d_model=32, decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=64,
               max_position_embeddings=64, is_decoder=True, is_encoder_decoder=False)


def _decoders():
    yield transformers.MarianForCausalLM(transformers.MarianConfig(**DECODER, **IDS, decoder_start_token_id=0))
    yield transformers.BartForCausalLM(transformers.BartConfig(**DECODER, **IDS, decoder_start_token_id=2,
                                                               encoder_layers=1, encoder_attention_heads=4,
                                                               encoder_ffn_dim=64))


@pytest.mark.parametrize("model", list(_decoders()), ids=lambda m: type(m).__name__)
def test_a_decoder_with_cross_attention_is_adopted(model):
    """W181, W644: adopted (the cross-attention is not read), and its baked form gives the adopted model's logits."""
    adopted = adopt(model.eval(), **GEN)
    x = torch.randint(3, 300, (2, 7), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.allclose(adopted(x).logits, to_original(adopted).eval()(x).logits, atol=1e-5)


def test_a_bidirectional_self_attention_is_still_refused():
    """BERT with is_decoder=False: its self-attention sees both directions; with add_cross_attention=True and
    is_decoder=True only its cross-attention does, and it is adopted."""
    small = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64)
    with pytest.raises(UserError, match=r"encoder-only model: its attention \(BertSelfAttention\)"):
        adopt(transformers.BertLMHeadModel(transformers.BertConfig(**small)), **GEN)
    config = transformers.BertConfig(**small, is_decoder=True, add_cross_attention=True)
    assert type(adopt(transformers.BertLMHeadModel(config), **GEN)).__name__ == "LeviathanBertLMHeadModel"
