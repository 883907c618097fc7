"""Which keys a ``LeviathanConfig`` takes besides its fields: transformers' own, and no other.

    check_config_keys(extra)   # ConfigError naming the first key no one reads, and its near spelling

transformers keeps any keyword a config is given as an attribute and writes it into config.json
(``PretrainedConfig.__post_init__``: "additional attributes without default values"), so
``LeviathanConfig(..., embedding='factorized', factorized_rank=0)`` (the setting is ``embedding_rank``) and
``unknown_key=5`` were stored, saved and read by nothing, the model built with the defaults they meant to change
(issue 30 round 30, Y483, Y488), where round 24 (W259) refused only a near miss of a field name. A key is taken here
when transformers itself reads or writes it: ``PretrainedConfig``'s fields and attributes, the keywords its
``__init__``/``from_pretrained`` take (``torch_dtype``, ``attn_implementation``, ``num_labels``, ``name_or_path``),
``model_type`` and the bookkeeping it saves (``architectures``, ``transformers_version``, ``_name_or_path``), the keys
transformers 4 wrote into configs (its generation defaults, ``tokenizer_class``, ``auto_map``, ...), and a
quantization config. The Llama-family settings this model implements only one value of (``IMPLEMENTED_ONLY``) and
the retired keys of older exports are the config's own business (checked or dropped before this).
"""

from __future__ import annotations

import dataclasses
import difflib

from ..config import ConfigError

# keywords PretrainedConfig (transformers 5) pops or reads itself, and what transformers 4 wrote into config.json
# (PretrainedConfig's attributes then, and the generation defaults it kept on the config); read by transformers
TRANSFORMERS_KEYS = frozenset({
    "model_type", "name_or_path", "_name_or_path", "_commit_hash", "_configuration_file", "_from_auto",
    "_from_pipeline", "attn_implementation", "_attn_implementation", "_attn_implementation_internal",
    "_attn_implementation_autoset", "experts_implementation", "_experts_implementation",
    "_experts_implementation_internal", "output_attentions", "num_labels", "torch_dtype", "per_layer_config",
    "auto_map", "quantization_config", "tokenizer_class", "prefix", "task_specific_params", "finetuning_task",
    "is_decoder", "add_cross_attention", "cross_attention_hidden_size", "tie_encoder_decoder", "pruned_heads",
    "torchscript", "use_bfloat16", "tf_legacy_loss", "sep_token_id", "decoder_start_token_id", "rope_scaling",
    "rope_parameters", "base_model_tp_plan", "base_model_pp_plan",
    # transformers 4's generation defaults on the config (moved to generation_config.json since)
    "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups", "diversity_penalty",
    "temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty", "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences", "output_scores",
    "return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
    "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens",
})


# names that mean a field spelt otherwise: the factorized embedding's rank is embedding_rank (Y483)
MEANT = {"factorized_rank": "embedding_rank", "factorized_embedding_rank": "embedding_rank", "rank": "embedding_rank"}


def transformers_keys() -> frozenset[str]:
    """``TRANSFORMERS_KEYS`` and whatever this transformers' ``PretrainedConfig`` declares, sets by default or
    writes (its dataclass fields, a default instance's attributes and ``to_dict``), so a newer transformers' own key
    is never refused."""
    from transformers import PretrainedConfig

    base = PretrainedConfig()
    declared = {f.name for f in dataclasses.fields(PretrainedConfig)} if dataclasses.is_dataclass(PretrainedConfig) \
        else set()
    return TRANSFORMERS_KEYS | declared | set(vars(base)) | set(base.to_dict()) | set(PretrainedConfig.attribute_map)


def near_field(key: object, fields: list[str]) -> str:
    """`` (did you mean 'y'?)`` for a key spelt near one of ``fields`` (or one ``MEANT`` names), '' otherwise; the
    hint ``check_config_keys`` gives, for the other ways a key reaches a config (``update_from_string``,
    ``from_dict``'s keywords: issue 30 round 31, AA203, AA210)."""
    if not isinstance(key, str):
        return ""
    hint = [MEANT[key]] if key in MEANT else difflib.get_close_matches(key, fields, n=1, cutoff=0.6)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def check_config_keys(extra: dict, fields: list[str], own: set[str]) -> None:
    """ConfigError for the first key of ``extra`` (the keywords that are no field of the config) that transformers
    does not read and that is not in ``own`` (the config's own extra keys): "LeviathanConfig has no setting 'x' (did
    you mean 'y'?), so it would be saved and never read; ...", the near spelling taken from ``fields``."""
    known = None
    for key in extra:
        if isinstance(key, str) and key in own:
            continue
        known = transformers_keys() if known is None else known
        if isinstance(key, str) and key in known:
            continue
        hint = ([MEANT[key]] if key in MEANT else difflib.get_close_matches(key, fields, n=1, cutoff=0.6)) \
            if isinstance(key, str) else []
        shown = f" (did you mean {hint[0]!r}?)" if hint else ""
        raise ConfigError(f"LeviathanConfig has no setting {key!r:.60}{shown}, so it would be saved and never read; "
                          f"use one of ModelConfig's fields{'' if hint else ' (' + ', '.join(fields) + ')'}, or "
                          f"remove the key (from config.json too)")
