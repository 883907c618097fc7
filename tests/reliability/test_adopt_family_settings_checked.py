"""``adopt(config)`` checks a family's own settings, not only the common ones round 27 (fix27a) read (issue 30 round 28:
U141, U142, U143, U155, U156, U168, U171, U177 tracebacks; U135-U139, U144, U145, U151, U167, U169, U178 silent).

One rule per kind of setting (``hf/family_settings`` and ``hf/rope_settings``), the line naming the config class, the
field as the family spells it, the value and the range:

- a scale, a finite number > 0: Granite's ``logits_scaling=0`` (U135), ``embedding_multiplier=nan`` (U136),
  ``residual_multiplier=-inf`` (U137), Cohere's ``logit_scale=nan`` (U138) and Gemma 2's
  ``final_logit_softcapping=0`` (U139) gave non-finite logits without a word, ``query_pre_attn_scalar=0`` (U141) a
  ZeroDivisionError; Olmo's ``clip_qkv=-1`` (U145, an optional cap: None is valid) clamped everything to -1;
- an amplitude, a finite number >= 0: Mixtral's ``router_jitter_noise=-1`` (U144) was taken;
- an expert count in [1, n]: ``num_local_experts=0`` (U142), ``num_experts_per_tok=9`` of 8 (U143) torch's "selected
  index k out of range";
- siblings the tryer did not try, of the same kinds: Granite's ``attention_multiplier``, ``router_aux_loss_coef``,
  Qwen2-MoE's ``num_experts_per_tok`` and ``moe_intermediate_size=0`` (a raw RuntimeError), DeepSeek V3's
  ``topk_group`` past ``n_group`` and ``n_group=0`` (torch's top-k error, a ZeroDivisionError), an unknown layer
  kind, yarn's betas out of order, Llama's ``rope_theta`` set after (ignored), longrope's factor lists;
- a per-layer list: Qwen2's ``layer_types`` of 3 entries for 1 layer (U178) was taken, a sliding layer with no
  window (U177) a TypeError in the cache;
- the rope: a dynamic factor 0.5 (U167) and a llama3 rope with low == high freq factor (U169) were taken, yarn's
  ``beta_fast=-1`` (U168) math's "domain error", ``rope_parameters=None`` (U171) a TypeError; StableLm's
  ``partial_rotary_factor = 0.0`` set after (U151) was ignored (the model read the rope dict's 0.25); GPT-J's
  ``rotary_dim`` 3 (U155, odd) or 64 (U156, past the head width 8) shape errors at the first forward.

``load_adopted`` holds a saved config.json to the same check (``adoption._check_saved_source``).
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt, load_adopted  # noqa: E402
from test_adopt_config_settings_checked import GEN, GPT2, LLAMA, _llama  # noqa: E402
from test_hf_keywords_at_the_boundary import adopted_folder  # noqa: E402,F401  (a fixture)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

GPTJ = dict(vocab_size=300, n_embd=32, n_layer=1, n_head=4, n_positions=64)


def _after(config, **after):
    """``config`` with ``after`` set on it afterwards (a config checks its values only when it is made)."""
    for key, value in after.items():
        setattr(config, key, value)
    return config


def _family(name, **after):
    return lambda: _after(getattr(transformers, name)(**LLAMA), **after)


def _deepseek():
    return transformers.DeepseekV3Config(**{**LLAMA, "num_key_value_heads": 4}, n_routed_experts=4,
                                         num_experts_per_tok=2, n_group=1, topk_group=1, moe_intermediate_size=16,
                                         first_k_dense_replace=0,
                                         q_lora_rank=None, kv_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=4,
                                         v_head_dim=8)


def _longrope():
    return transformers.Phi3Config(**{**LLAMA, "num_key_value_heads": 4}, pad_token_id=None, rope_parameters={
        "rope_type": "longrope", "rope_theta": 10000.0, "short_factor": [1.0] * 4, "long_factor": [2.0] * 4,
        "original_max_position_embeddings": 16})


def _rope(**rope):
    return lambda: _llama(rope_parameters={"rope_theta": 10000.0, **rope})


@pytest.mark.parametrize("make, named", [
    (lambda: transformers.GraniteConfig(**LLAMA, logits_scaling=0.0),
     r"GraniteConfig\.logits_scaling must be a finite number > 0, got 0\.0; set it in the config"),
    (_family("GraniteConfig", embedding_multiplier=float("nan")), r"GraniteConfig\.embedding_multiplier .*got nan"),
    (_family("GraniteConfig", residual_multiplier=float("-inf")), r"GraniteConfig\.residual_multiplier .*got -inf"),
    (_family("CohereConfig", logit_scale=float("nan")), r"CohereConfig\.logit_scale must be a finite number > 0"),
    (lambda: _after(transformers.Gemma2Config(**LLAMA, head_dim=8), final_logit_softcapping=0.0),
     r"Gemma2Config\.final_logit_softcapping must be a finite number > 0 \(or None\), got 0\.0; .*None for no cap"),
    (lambda: _after(transformers.Gemma2Config(**LLAMA, head_dim=8), query_pre_attn_scalar=0),
     r"Gemma2Config\.query_pre_attn_scalar must be a finite number > 0, got 0"),
    (_family("MixtralConfig", num_local_experts=0), r"MixtralConfig\.num_local_experts must be a whole number in "
                                                    r"\[1, .*\], got 0"),
    (_family("MixtralConfig", num_local_experts=8, num_experts_per_tok=9),
     r"MixtralConfig\.num_experts_per_tok must be a whole number in \[1, 8\], got 9; .*at most num_local_experts "
     r"\(8\)"),
    (_family("MixtralConfig", router_jitter_noise=-1.0), r"MixtralConfig\.router_jitter_noise must be a finite "
                                                         r"number >= 0, got -1\.0"),
    (_family("OlmoConfig", clip_qkv=-1.0), r"OlmoConfig\.clip_qkv must be a finite number > 0 \(or None\), got -1\.0"),
    (_family("StableLmConfig", partial_rotary_factor=0.0),
     r"StableLmConfig\.partial_rotary_factor is 0\.0, but its rope_parameters hold partial_rotary_factor=0\.25, the "
     r"value the model reads"),
    (lambda: transformers.GPTJConfig(**GPTJ, rotary_dim=3),
     r"GPTJConfig\.rotary_dim must be an even number in \[2, 8\] \(the head width.*got 3"),
    (lambda: transformers.GPTJConfig(**GPTJ, rotary_dim=64), r"GPTJConfig\.rotary_dim .*\[2, 8\].*got 64"),
    (_rope(rope_type="dynamic", factor=0.5),
     r"LlamaConfig's rope_parameters factor \(rope_type 'dynamic'\) must be >= 1 .*got 0\.5"),
    (_rope(rope_type="yarn", factor=4.0, beta_fast=-1.0, original_max_position_embeddings=16),
     r"LlamaConfig's rope_parameters beta_fast \(rope_type 'yarn'\) must be a finite number > 0, got -1\.0"),
    (_rope(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=1.0,
           original_max_position_embeddings=16),
     r"LlamaConfig's rope_parameters high_freq_factor \(1\.0\) must be greater than low_freq_factor \(1\.0\)"),
    (lambda: _llama(rope_parameters=None), r"LlamaConfig\.rope_parameters is None, but LlamaConfig's model reads"),
    (_family("Qwen2Config", layer_types=["sliding_attention"], sliding_window=None),
     r"Qwen2Config\.layer_types has a sliding_attention layer but sliding_window is None"),
    (_family("Qwen2Config", layer_types=["full_attention"] * 3),
     r"Qwen2Config\.layer_types must be a list of one entry per layer \(num_hidden_layers = 1\), got 3 entries"),
    # siblings of the same kinds the tryer did not try
    (_family("GraniteConfig", attention_multiplier=0.0), r"GraniteConfig\.attention_multiplier .*got 0\.0"),
    (_family("MixtralConfig", router_aux_loss_coef=float("nan")), r"MixtralConfig\.router_aux_loss_coef .*>= 0"),
    (_family("Qwen2MoeConfig", num_experts=4, num_experts_per_tok=5),
     r"Qwen2MoeConfig\.num_experts_per_tok .*\[1, 4\]"),
    (_family("Qwen2Config", layer_types=["nope"]), r"Qwen2Config\.layer_types holds 'nope', not a layer kind"),
    (_family("Qwen2Config", layer_types=["sliding_attention"], sliding_window=0),
     r"Qwen2Config\.sliding_window .*got 0"),
    (_rope(rope_type="yarn", factor=4.0, beta_fast=1.0, beta_slow=2.0, original_max_position_embeddings=16),
     r"LlamaConfig's rope_parameters beta_fast \(1\.0\) must be greater than beta_slow \(2\.0\)"),
    (_family("LlamaConfig", rope_theta=5.0), r"LlamaConfig\.rope_theta is 5\.0, but its rope_parameters hold "
                                             r"rope_theta=10000\.0"),
    (lambda: transformers.Qwen2MoeConfig(**LLAMA, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=0),
     r"Qwen2MoeConfig\.moe_intermediate_size must be a whole number in \[1, .*\], got 0"),
    (lambda: _after(_deepseek(), n_group=2, topk_group=3),
     r"DeepseekV3Config\.topk_group must be a whole number in \[1, 2\], got 3; .*at most n_group \(2\)"),
    (lambda: _after(_deepseek(), n_group=0), r"DeepseekV3Config\.n_group .*got 0"),
    (lambda: _after(_longrope(), rope_parameters={**_longrope().rope_parameters, "short_factor": [-1.0] * 4}),
     r"Phi3Config's rope_parameters short_factor must be 4 finite numbers > 0"),
], ids=["U135", "U136", "U137", "U138", "U139", "U141", "U142", "U143", "U144", "U145", "U151", "U155", "U156", "U167",
        "U168", "U169", "U171", "U177", "U178", "granite-attention", "aux-loss-nan", "qwen2moe-top-k", "layer-kind",
        "sliding-window-0", "yarn-betas-order", "llama-theta-after", "moe-width-0", "topk-group", "n-group-0",
        "longrope-factors"])
def test_adopt_refuses_a_family_setting_out_of_its_range_in_one_line(make, named):
    """Each was a raw error at build or at the first forward, or a model with NaN logits (or ignoring the value)."""
    with pytest.raises(UserError, match=rf"^adopt: {named}") as e:
        adopt(make(), **GEN)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("make", [
    lambda: transformers.GraniteConfig(**LLAMA, logits_scaling=8.0, embedding_multiplier=12.0),
    lambda: _after(transformers.Gemma2Config(**LLAMA, head_dim=8), final_logit_softcapping=None),
    lambda: transformers.MixtralConfig(**LLAMA, num_local_experts=4, num_experts_per_tok=2, router_jitter_noise=0.1),
    lambda: transformers.OlmoConfig(**LLAMA),  # clip_qkv None: no clipping
    lambda: transformers.StableLmConfig(**LLAMA),
    lambda: transformers.GPTJConfig(**GPTJ, rotary_dim=4),
    lambda: transformers.Qwen2Config(**LLAMA, use_sliding_window=True, sliding_window=4, max_window_layers=0),
    lambda: transformers.Qwen2MoeConfig(**LLAMA, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                        shared_expert_intermediate_size=16),  # its sliding_window=0 is switched off
    _rope(rope_type="yarn", factor=4.0, original_max_position_embeddings=16),
    _rope(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
          original_max_position_embeddings=16),
    _rope(rope_type="dynamic", factor=2.0),
    _deepseek,
    _longrope,
], ids=["granite", "gemma2-no-cap", "mixtral", "olmo-no-clip", "stablelm", "gptj", "qwen2-sliding", "qwen2moe-default",
        "yarn", "llama3", "dynamic", "deepseek-v3", "phi3-longrope"])
def test_valid_family_settings_still_adopt_and_run(make):
    model = adopt(make(), **GEN)
    model.train()
    logits = model(torch.tensor([[1, 2, 3, 4, 5]])).logits
    assert logits.shape == (1, 5, 300) and bool(torch.isfinite(logits).all())


@pytest.mark.parametrize("edit, said", [
    ({"rope_parameters": {"rope_type": "dynamic", "factor": 0.5, "rope_theta": 10000.0}},
     "LlamaConfig's rope_parameters factor"),
    ({"rope_parameters": {"rope_type": "llama3", "factor": 8.0, "rope_theta": 10000.0, "low_freq_factor": 1.0,
                          "high_freq_factor": 1.0, "original_max_position_embeddings": 16}},
     "LlamaConfig's rope_parameters high_freq_factor"),
], ids=["dynamic-factor", "llama3-freq-factors"])
def test_load_adopted_holds_a_saved_config_to_the_same_rules(adopted_folder, tmp_path, edit, said):
    copy = tmp_path / "copy"
    shutil.copytree(adopted_folder, copy)
    raw = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**raw, **edit}))
    with pytest.raises(UserError) as caught:
        load_adopted(copy)
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"{str(copy / 'config.json')!r}: {said}"), line


def _neox(**after):
    return lambda: _after(transformers.GPTNeoXConfig(vocab_size=300, hidden_size=32, intermediate_size=64,
                                                     num_hidden_layers=1, num_attention_heads=4,
                                                     max_position_embeddings=64), **after)


@pytest.mark.parametrize("make, named", [
    (_family("Qwen2Config", use_sliding_window=True, sliding_window=8, max_window_layers=-1),
     r"Qwen2Config\.max_window_layers must be a whole number in \[0, .*\], got -1; set it in the config"),
    (lambda: transformers.Qwen2Config(**LLAMA, use_sliding_window=True, sliding_window=8, max_window_layers=-1),
     r"Qwen2Config\.max_window_layers must be a whole number in \[0, .*\], got -1"),
    (_neox(rotary_pct=-0.5), r"GPTNeoXConfig\.rotary_pct is -0\.5, but its rope_parameters hold "
                             r"partial_rotary_factor=0\.25, the value the model reads"),
    (lambda: transformers.LlamaConfig(**LLAMA, eos_token_id=[1, 400]),
     r"LlamaConfig\.eos_token_id 400 is not a token id of this model \(whole numbers 0 to 299, its vocabulary of "
     r"300\) \(in eos_token_id=\[1, 400\]\); set eos_token_id to the tokenizer's id"),
    # siblings of the same kinds
    (_neox(rotary_emb_base=500.0), r"GPTNeoXConfig\.rotary_emb_base is 500\.0, but its rope_parameters hold "
                                   r"rope_theta=10000\.0"),
    (lambda: transformers.LlamaConfig(**LLAMA, bos_token_id=-1), r"LlamaConfig\.bos_token_id -1 is not a token id"),
    (lambda: transformers.GPT2Config(**GPT2, eos_token_id=300), r"GPT2Config\.eos_token_id 300 is not a token id"),
    (lambda: _after(_deepseek(), first_k_dense_replace=-1), r"DeepseekV3Config\.first_k_dense_replace must be a "
                                                            r"whole number in \[0, "),
    (lambda: transformers.Qwen2MoeConfig(**LLAMA, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                         shared_expert_intermediate_size=16, decoder_sparse_step=0),
     r"Qwen2MoeConfig\.decoder_sparse_step must be a whole number in \[1, "),
], ids=["Y316-set-after", "Y334-when-made", "Y328-rotary-pct-after", "Y343-eos-list", "neox-rotary-base-after",
        "bos-negative", "gpt2-eos-given", "first-k-dense-negative", "decoder-sparse-step-0"])
def test_adopt_refuses_layer_counts_ignored_rotary_spellings_and_given_ids_past_the_vocab(make, named):
    """Issue 30 round 30: each was adopted without a word (a negative count of layers read as 0, a rotary_pct set after
    the config was made and never read, an eos id the model has no row for)."""
    with pytest.raises(UserError, match=rf"^adopt: {named}") as e:
        adopt(make(), **GEN)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("make", [
    lambda: transformers.GPT2Config(**GPT2),  # GPT-2's own default eos 50,256 left as it is: the save names it
    lambda: transformers.LlamaConfig(**LLAMA, eos_token_id=[1, 2], bos_token_id=0),
    _neox(),
    lambda: transformers.GPTNeoXConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=4, max_position_embeddings=64, rotary_pct=0.5),
    lambda: transformers.Qwen2Config(**LLAMA, use_sliding_window=True, sliding_window=4, max_window_layers=28),
], ids=["gpt2-default-eos", "llama-ids", "neox", "neox-rotary-pct-when-made", "qwen2-window-layers-past-layers"])
def test_valid_counts_spellings_and_ids_still_adopt(make):
    model = adopt(make(), **GEN)
    assert model(torch.tensor([[1, 2, 3]])).logits.shape == (1, 3, 300)
