"""Our LLaMA backbone against transformers' LlamaForCausalLM (the independent reference, docs/DESIGN.md §3).

Weights of a native ``CausalLM`` are copied key for key into ``transformers.LlamaForCausalLM`` built
from an equivalent ``LlamaConfig`` written out here by hand (not via leviathan.hf.export, so the
export's own config is checked separately); logits are compared in fp32 against HF's eager
attention (the most literal implementation) and its SDPA attention. Observed max |logit diff| on
logits of size ~1: ~2e-7 against eager, 0 (bit-identical) against SDPA; asserted below 2e-5.
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.model.config import ModelConfig  # noqa: E402
from leviathan.model.llama import CausalLM, KVCache  # noqa: E402

ATOL = 2e-5
V = 300

CASES = {
    # dense_tied, plain multi-head attention, defaults elsewhere
    "tied": dict(embedding="dense_tied", hidden_size=48, num_attention_heads=4),
    # dense_untied with grouped-query attention and non-default rope/eps/mlp width
    "untied_gqa": dict(embedding="dense_untied", hidden_size=64, num_attention_heads=8, num_key_value_heads=2,
                       rope_theta=500000.0, rms_norm_eps=1e-5, intermediate_size=96),
    # head_dim != hidden_size / heads (q/k/v projections wider than the residual stream), GQA, tied
    "tied_headdim": dict(embedding="dense_tied", hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=16, intermediate_size=80),
}


def _native(case: str, seed: int = 0) -> CausalLM:
    torch.manual_seed(seed)
    cfg = ModelConfig(vocab_size=V, num_hidden_layers=2, max_position_embeddings=64, **CASES[case])
    model = CausalLM(cfg).eval()
    with torch.no_grad():  # non-trivial norm weights, so a swapped or skipped norm shows up
        for name, p in model.named_parameters():
            if name.endswith("layernorm.weight") or name == "model.norm.weight":
                p.uniform_(0.5, 1.5)
    return model


def _hf_llama(model: CausalLM, attn: str = "eager"):
    c = model.config
    hf_cfg = transformers.LlamaConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=c.resolved_intermediate_size,
        num_hidden_layers=c.num_hidden_layers, num_attention_heads=c.num_attention_heads,
        num_key_value_heads=c.kv_heads, head_dim=c.resolved_head_dim, rms_norm_eps=c.rms_norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": c.rope_theta},
        max_position_embeddings=c.max_position_embeddings, tie_word_embeddings=c.tie_word_embeddings,
        hidden_act="silu", attention_bias=False, mlp_bias=False,
    )
    hf_cfg._attn_implementation = attn
    hf = transformers.LlamaForCausalLM(hf_cfg).eval()
    ours = model.state_dict()
    assert set(ours) == set(hf.state_dict()), "module names must be exactly Hugging Face's"
    hf.load_state_dict(ours, strict=True)
    if c.tie_word_embeddings:
        assert hf.lm_head.weight.data_ptr() == hf.model.embed_tokens.weight.data_ptr()
    return hf


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
@pytest.mark.parametrize("case", list(CASES))
def test_logits_match_transformers_llama(case, attn):
    model = _native(case)
    hf = _hf_llama(model, attn)
    x = torch.randint(0, V, (3, 17), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ours, _ = model(x)
        ref = hf(x).logits
    diff = (ours - ref).abs().max().item()
    assert diff < ATOL, f"{case}/{attn}: max |logit diff| {diff:.2e}"
    assert ref.abs().max() > 1e-1  # not comparing two near-zero tensors


def test_loss_matches_transformers_llama():
    model = _native("untied_gqa")
    hf = _hf_llama(model)
    x = torch.randint(0, V, (2, 12), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        _, ours = model(x[:, :-1], labels=x[:, 1:])  # native: targets already shifted
        ref = hf(x, labels=x).loss  # HF: labels == inputs, shifted inside
    assert abs(ours.item() - ref.item()) < 1e-5


def test_padded_batch_matches_transformers_llama():
    """Left padding: a (B, S) attention mask plus explicit positions; real tokens must agree."""
    model = _native("untied_gqa")
    hf = _hf_llama(model)
    x = torch.randint(0, V, (2, 9), generator=torch.Generator().manual_seed(3))
    mask = torch.ones(2, 9, dtype=torch.long)
    mask[1, :4] = 0
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        ours, _ = model(x, attention_mask=mask, position_ids=pos)
        ref = hf(x, attention_mask=mask, position_ids=pos).logits
        alone, _ = model(x[1:, 4:])  # the padded row on its own
    real = mask.bool()
    assert (ours[real] - ref[real]).abs().max().item() < ATOL
    assert (ours[1, 4:] - alone[0]).abs().max().item() < ATOL


@pytest.mark.parametrize("case", ["tied", "untied_gqa"])
def test_kv_cache_decoding_matches_full_forward(case):
    model = _native(case)
    x = torch.randint(0, V, (2, 14), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        full, _ = model(x)
        cache = KVCache()
        steps = [model(x[:, :5], cache=cache)[0]]  # prefill
        for t in range(5, 10):  # one token at a time
            steps.append(model(x[:, t:t + 1], cache=cache)[0])
        steps.append(model(x[:, 10:], cache=cache)[0])  # several tokens onto a non-empty cache
    assert cache.get_seq_length() == 14
    incremental = torch.cat(steps, dim=1)
    diff = (incremental - full).abs().max().item()
    assert diff < ATOL, f"{case}: cached vs full max |diff| {diff:.2e}"


def test_kv_cache_decoding_matches_transformers_cached_decoding():
    """Our backbone driven by transformers' DynamicCache equals HF Llama's own cached decoding."""
    from transformers import DynamicCache

    model = _native("tied_headdim")
    hf = _hf_llama(model)
    x = torch.randint(0, V, (2, 8), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        ours_cache, ref_cache = DynamicCache(), DynamicCache()
        ours = [model(x[:, :4], cache=ours_cache)[0]]
        ref = [hf(x[:, :4], cache=ref_cache, use_cache=True).logits]
        for t in range(4, 8):
            ours.append(model(x[:, t:t + 1], cache=ours_cache)[0])
            ref.append(hf(x[:, t:t + 1], cache=ref_cache, use_cache=True).logits)
    assert (torch.cat(ours, 1) - torch.cat(ref, 1)).abs().max().item() < ATOL
