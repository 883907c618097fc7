"""A family's own settings of the config ``adopt(config, ...)`` builds from, one table row each, checked before
transformers builds anything (called by ``adoption_config.check_source_config``).

    check_family_settings(config, name)   # UserError / ArgumentValueError naming the field, the value and the range

Round 28 (issue 30, U135-U145, U177, U178) found the settings only some families have reaching the model unchecked:
Granite's ``logits_scaling=0`` (logits / 0), its ``embedding_multiplier``, ``residual_multiplier`` and Cohere's
``logit_scale`` of NaN or -inf, Gemma 2's ``final_logit_softcapping=0`` gave non-finite logits without a word;
Gemma 2's ``query_pre_attn_scalar=0`` was a ZeroDivisionError, Mixtral's ``num_local_experts=0`` or
``num_experts_per_tok=9`` of 8 experts torch's "selected index k out of range"; ``router_jitter_noise=-1`` and Olmo's
``clip_qkv=-1`` (every query, key and value clamped to -1) were taken; Qwen2's ``layer_types`` of 3 entries for 1
layer was taken, a ``sliding_attention`` layer with no ``sliding_window`` a TypeError in the cache.

One rule per KIND of setting, so a new family's scale is one row of ``SETTINGS``, not a new branch: a ``scale``
(a finite number > 0: a multiplier, a divisor, a softcap, a clip bound), an ``amplitude`` (a finite number >= 0: a
noise or a loss coefficient, 0 turning it off), a count chosen from a pool (``COUNTS``: the experts a token is
routed to, at most the expert count), and a per-layer list (as long as the layer count, each item one of
transformers' own ``ALLOWED_ATTN_LAYER_TYPES`` / ``ALLOWED_MLP_LAYER_TYPES``).
Round 29 (W51, W53, W54) found more of the kind: FalconH1's nine multipliers but ``embedding_multiplier`` unread
(``lm_head_multiplier=0``: every logit 0, a uniform model; ``key_multiplier=-inf``), PhiMoE's ``input_jitter_noise=-1``
taken where Mixtral's ``router_jitter_noise=-1`` is refused; rows added for them and for the other scales and loss
weights of the families adopt builds (MiniCPM 3's ``scale_emb``, the MoE routers' scaling factors, JetMoE's and
Bamba's loss coefficients, ...). A setting of per-part scales (FalconH1's ``mlp_multipliers``, ``ssm_multipliers``)
is a list, each item held to the rule, of the length the family unpacks (``SCALE_LISTS``).
Footguns: a setting left None is not read (the caps' None is "no cap", said in the fix; a scale of None is the
family's own business); the fields are read by the name the family spells them (``spellings``: ``attribute_map``).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..errors import UserError
from ..model.size_bounds import MAX_SIZE
from ..value_rules import check_whole, number_problem

# a family's own spelling of a common name, where its attribute_map does not map it (GPT-2, GPT-J and CodeGen's
# n_inner, OPT's ffn_dim, Falcon's ffn_hidden_size and activation, GPT-Neo's window_size, Gemma 3's hidden_activation)
ALIASES = {"intermediate_size": ("n_inner", "ffn_dim", "ffn_hidden_size"), "sliding_window": ("window_size",),
           "hidden_act": ("activation_function", "hidden_activation", "activation")}
# kind: (the range in words, the test a finite number passes)
KINDS = {"scale": ("a finite number > 0", lambda value: value > 0),
         "amplitude": ("a finite number >= 0", lambda value: value >= 0)}
# field as the family spells it: (kind, an example for the fix, what None means where it is a valid setting)
SETTINGS = {
    "logits_scaling": ("scale", "1.0", None),  # Granite family: logits / logits_scaling
    "embedding_multiplier": ("scale", "1.0", None),  # Granite family, FalconH1
    "residual_multiplier": ("scale", "1.0", None),  # Granite family
    "attention_multiplier": ("scale", "1.0", None),  # Granite family: the attention's softmax scale
    "logit_scale": ("scale", "0.0625", None),  # Cohere, Cohere 2
    "query_pre_attn_scalar": ("scale", "256", None),  # Gemma 2, Gemma 3: scale = query_pre_attn_scalar ** -0.5
    "routed_scaling_factor": ("scale", "1.0", None),  # DeepSeek V3 and the routers after it
    "final_logit_softcapping": ("scale", "30.0", "no cap"),  # Gemma 2, Gemma 3: tanh(logits / cap) * cap
    "attn_logit_softcapping": ("scale", "50.0", "no cap"),
    "clip_qkv": ("scale", "8.0", "no clipping"),  # OLMo, OLMo 2, OLMoE: q, k, v clamped to [-clip, clip]
    "router_jitter_noise": ("amplitude", "0.0", None),  # Mixtral family: a training forward's uniform(1-j, 1+j)
    "router_aux_loss_coef": ("amplitude", "0.001", None),  # the MoE families: the balancing loss's weight
    # round 29 (W51, W53): FalconH1's muP multipliers of the head, the attention's key, input, output, the SSM's
    "lm_head_multiplier": ("scale", "1.0", None), "key_multiplier": ("scale", "1.0", None),
    "attention_in_multiplier": ("scale", "1.0", None), "attention_out_multiplier": ("scale", "1.0", None),
    "ssm_in_multiplier": ("scale", "1.0", None), "ssm_out_multiplier": ("scale", "1.0", None),
    "mlp_multipliers": ("scale", "[1.0, 1.0]", None), "ssm_multipliers": ("scale", "[1.0, 1.0, 1.0, 1.0, 1.0]", None),
    "input_jitter_noise": ("amplitude", "0.0", None),  # PhiMoE: as router_jitter_noise, on the input (W54)
    # the same kinds in the other families adopt builds (round 29)
    "scale_emb": ("scale", "12", None), "scale_depth": ("scale", "1.4", None),  # MiniCPM 3: embedding, residual
    "embedding_scale": ("scale", "1.0", None), "logits_mup_width_multiplier": ("scale", "1.0", None),
    "moe_routed_scaling_factor": ("scale", "1.0", None), "router_scaling_factor": ("scale", "1.0", None),
    "route_scale": ("scale", "1.0", None), "swiglu_alpha": ("scale", "1.702", None),  # GPT-OSS: sigmoid(alpha x)
    "aux_loss_coef": ("amplitude", "0.01", None), "z_loss_coefficient": ("amplitude", "0.0", None),
    "mtp_loss_scaling_factor": ("amplitude", "0.0", None),
}
# a setting of one scale per part: its length, as the family unpacks it (FalconH1: the MLP's gate and down; the
# SSM's five parts); a list of another length was a raw "too many values to unpack" or IndexError, or parts unread
SCALE_LISTS = {"mlp_multipliers": 2, "ssm_multipliers": 5}
# a count chosen from a pool: (its spellings, the pool's spellings); each a whole number >= 1, the count at most the
# pool (torch's top-k raised "selected index k out of range" past it; DeepSeek's n_group=0 a ZeroDivisionError)
COUNTS = {"num_experts_per_tok": ("num_local_experts", "num_experts", "n_routed_experts"),  # Mixtral, OLMoE, DeepSeek
          "topk_group": ("n_group",)}  # DeepSeek V3: the expert groups a token may route to, of n_group
# a count of layers, or a layer period (round 30, Y316, Y334): the least value with a meaning, an example. Qwen2's
# max_window_layers=-1 (layers below it use full attention) was taken, a negative count read as 0; DeepSeek's
# first_k_dense_replace the same; Qwen2-MoE's decoder_sparse_step=0 (every step-th layer is sparse) a modulo by 0
LAYER_COUNTS = {"max_window_layers": (0, "28"), "first_k_dense_replace": (0, "1"), "decoder_sparse_step": (1, "1")}
# the per-layer lists: the transformers table their items come from
LAYER_LISTS = {"layer_types": "ALLOWED_ATTN_LAYER_TYPES", "mlp_layer_types": "ALLOWED_MLP_LAYER_TYPES"}


def check_family_settings(config: Any, name: str) -> None:
    """One line for the first of ``config``'s family settings out of its range (module docstring)."""
    for key, (kind, example, unset) in SETTINGS.items():
        for shown, value in spellings(config, key):
            words, test = KINDS[kind]
            if key in SCALE_LISTS:
                _check_list(value, SCALE_LISTS[key], f"{name}.{shown}", f"{shown}={example}")
                items = [(f"{shown}[{i}]", item) for i, item in enumerate(value)]
            else:
                items = [(shown, value)]
            for part, item in items:
                if number_problem(item, shown=words) is not None or not test(item):
                    none = f", or None for {unset}" if unset else ""
                    raise UserError(f"adopt: {name}.{part} must be {words}{' (or None)' if unset else ''}, got "
                                    f"{item!r:.40}; set it in the config (e.g. {shown}={example}{none})")
    _check_experts(config, name)
    _check_layer_counts(config, name)
    _check_layer_lists(config, name)


def _check_list(value: Any, length: int, shown: str, example: str) -> None:
    """UserError unless ``value`` is a list (or tuple) of ``length`` items (``SCALE_LISTS``)."""
    if not isinstance(value, (list, tuple)) or len(value) != length:
        got = f"{len(value)} items" if isinstance(value, (list, tuple)) else f"{type(value).__name__} {value!r:.40}"
        raise UserError(f"adopt: {shown} must be a list of {length} numbers (one scale per part), got {got}; set it "
                        f"in the config (e.g. {example})")


def spellings(config: Any, key: str) -> Iterator[tuple[str, Any]]:
    """(the name as the config's family spells it, the value) for each spelling of the common name ``key`` that the
    config holds with a value other than None: one table for every family, not one branch each."""
    mapped = getattr(type(config), "attribute_map", None) or {}
    for spelled in (key, *ALIASES.get(key, ())):
        value = getattr(config, spelled, None)
        if value is not None:
            yield mapped.get(spelled, spelled), value


def _check_experts(config: Any, name: str) -> None:
    """Each pool of ``COUNTS`` a whole number >= 1, and the count chosen from it in [1, the pool]."""
    for key, pools in COUNTS.items():
        pool, within = None, pools[0]
        for spelled in pools:
            for within, value in spellings(config, spelled):
                pool = check_whole("adopt", f"{name}.{within}", value, 1, MAX_SIZE,
                                   f"set it in the config (e.g. {within}=8)")
        for shown, value in spellings(config, key):
            check_whole("adopt", f"{name}.{shown}", value, 1, pool,
                        f"set it in the config to at most {within}{'' if pool is None else f' ({pool:,})'} (e.g. "
                        f"{shown}=2)")


def _check_layer_counts(config: Any, name: str) -> None:
    """Each of ``LAYER_COUNTS`` a whole number of at least its floor (``check_whole``): ``max_window_layers=-1``
    passed adopt without a word (issue 30 round 30, Y316 set after the config was made, Y334 given when made).
    Footgun: a count past ``num_hidden_layers`` is taken (Qwen2's default 28 with fewer layers: no sliding layer), and
    one set after the config was made is not compared with the ``layer_types`` it built (each family builds them its
    own way; the model reads ``layer_types``, which ``_check_layer_lists`` holds)."""
    from ..model.size_bounds import MAX_LAYERS

    for key, (low, example) in LAYER_COUNTS.items():
        for shown, value in spellings(config, key):
            check_whole("adopt", f"{name}.{shown}", value, low, MAX_LAYERS, f"set it in the config (e.g. "
                                                                            f"{shown}={example})")


def _check_layer_lists(config: Any, name: str) -> None:
    """``layer_types`` (and ``mlp_layer_types``) one item per layer, each a kind transformers has, and a
    ``sliding_attention`` layer only with a ``sliding_window``: a config checks this when made, not when set after
    (3 entries for 1 layer were taken; a sliding layer without a window was a TypeError in the cache)."""
    import transformers.configuration_utils as hf_config

    layers = getattr(config, "num_hidden_layers", None)
    for key, table in LAYER_LISTS.items():
        kinds, items = getattr(hf_config, table, None), getattr(config, key, None)
        if items is None or kinds is None:
            continue
        if not isinstance(items, (list, tuple)) or (layers is not None and len(items) != layers):
            got = f"{len(items)} entries" if isinstance(items, (list, tuple)) else f"{type(items).__name__}"
            raise UserError(f"adopt: {name}.{key} must be a list of one entry per layer (num_hidden_layers = "
                            f"{layers}), got {got}; set it in the config to {layers} entries (or None: the "
                            f"family's default)")
        if unknown := sorted({repr(item)[:40] for item in items if not isinstance(item, str) or item not in kinds}):
            raise UserError(f"adopt: {name}.{key} holds {', '.join(unknown)}, not a layer kind transformers has; "
                            f"use {', '.join(kinds[:6])}, ...")
    if "sliding_attention" in (getattr(config, "layer_types", None) or ()):
        window = getattr(config, "sliding_window", None)
        if window is None:
            raise UserError(f"adopt: {name}.layer_types has a sliding_attention layer but sliding_window is None; "
                            f"set sliding_window (e.g. 4096), or make those layers full_attention")
        check_whole("adopt", f"{name}.sliding_window", window, 1, MAX_SIZE,
                    "set it in the config (e.g. sliding_window=4096), or make the sliding_attention layers "
                    "full_attention")
