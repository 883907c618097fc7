"""The generation features leviathan's Hugging Face classes support, in one place: every ``GenerationConfig`` field
is classified here as supported or refused, and a refused one that is set (not at transformers' default, None, or its
"off" value) is refused before anything runs or changes, whether it comes from a keyword of ``generate``, the
``generation_config`` given, ``model.generation_config`` or generation_config.json (the loaders and savers read the
same rule through ``generation_file.generation_value_problem``).

    feature_problem({"assistant_early_exit": -1}.get)
    # "assistant_early_exit=-1 asks for early-exit assisted decoding, which leviathan's classes do not support"
    check_generate_features(model, "LeviathanForCausalLM.generate", generation_config, kwargs)
    # ArgumentValueError: LeviathanForCausalLM.generate: assistant_early_exit=-1 asks for ...; leave it out ...

Issue 30 round 34: transformers' rarer generate features each failed in their own way after round 33's guard
(continuous batching on the native class logged a traceback and returned the prompt, AG2; custom_generate and
trust_remote_code, AG8-AG11; prefill_chunk_size, AG106-AG111, AG165, AG200, AG217; assisted decoding's settings,
AG112-AG118, AG124, AG145-AG149, AG158, AG160, AG214, AG218; use_mtp / is_assistant / low_memory / speculation_type /
continuous_batching_config / encoder_no_repeat_ngram_size / cache_config / max_cache_len, AG16, AG17, AG138, AG140,
AG152-AG156, AG185, AG209, AG215, AG216, AG219), and early-exit assisted decoding rewrote
``model.config.num_hidden_layers`` in memory before failing (damage: AG115, AG199, AG221). Chasing each by hand does
not end, so the surface is an allow-list: what is not known to work is refused. ``tests/unit/
test_generation_features.py`` fails when a transformers release adds a field this file does not classify.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ArgumentTypeError, ArgumentValueError

# fields leviathan's classes run (each has its own rule elsewhere: generation_file, generate_ids, generate_needs)
SUPPORTED = frozenset({
    "max_length", "max_new_tokens", "min_length", "min_new_tokens", "early_stopping", "max_time", "stop_strings",
    "do_sample", "num_beams", "use_cache", "cache_implementation", "temperature", "top_k", "top_p", "min_p", "top_h",
    "typical_p", "epsilon_cutoff", "eta_cutoff", "repetition_penalty", "encoder_repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "bad_words_ids", "renormalize_logits", "forced_bos_token_id",
    "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty", "suppress_tokens",
    "begin_suppress_tokens", "sequence_bias", "token_healing", "guidance_scale", "watermarking_config",
    "num_return_sequences", "output_attentions", "output_hidden_states", "output_scores", "output_logits",
    "return_dict_in_generate", "pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id",
    "compile_config", "disable_compile"})

# refused field -> the feature it asks for
_ASSISTED = "assisted decoding"
REFUSED = {
    "is_assistant": _ASSISTED, "num_assistant_tokens": _ASSISTED, "num_assistant_tokens_schedule": _ASSISTED,
    "assistant_confidence_threshold": _ASSISTED, "prompt_lookup_num_tokens": "prompt-lookup decoding",
    "max_matching_ngram_size": "prompt-lookup decoding", "assistant_early_exit": "early-exit assisted decoding",
    "assistant_lookbehind": _ASSISTED, "target_lookbehind": _ASSISTED, "assistant_ensemble_weight": _ASSISTED,
    "speculation_type": "speculative decoding", "use_mtp": "multi-token-prediction drafts",
    "cache_config": "a cache's own settings", "max_cache_len": "a cache's own length",
    "continuous_batching_config": "continuous batching", "low_memory": "low-memory beam search",
    "penalty_alpha": "contrastive search", "dola_layers": "DoLa decoding", "diversity_penalty": "group beam search",
    "num_beam_groups": "group beam search", "constraints": "constrained beam search",
    "force_words_ids": "constrained beam search", "prefill_chunk_size": "chunked prefill",
    "encoder_no_repeat_ngram_size": "an encoder's n-gram rule (encoder-decoder models only)"}
# a refused field's values that ask for nothing (besides None): a switch off, one beam group, no penalty
_OFF = {"is_assistant": (False,), "use_mtp": (False,), "low_memory": (False,), "num_beam_groups": (1,),
        "penalty_alpha": (0,), "diversity_penalty": (0,), "encoder_no_repeat_ngram_size": (0,)}
# supported fields with a refused value
_REFUSED_VALUES = {"cache_implementation": {"paged": "continuous batching"}}
# keywords of generate that are no GenerationConfig field -> the feature they ask for
KEYWORDS = {"assistant_model": _ASSISTED, "assistant_tokenizer": _ASSISTED,
            "custom_generate": "custom generation code", "trust_remote_code": "generation code from the Hub",
            "labels": "training targets (generate does not read labels)"}
# fields that are no setting (bookkeeping)
BOOKKEEPING = frozenset({"transformers_version"})

_FIX = ("leave it out (also of model.generation_config and generation_config.json), or generate with the plain "
        "transformers model")


# what each refused field with an "off" value holds in transformers' GenerationConfig: a switch, a whole number or a
# number; a value of another kind is named as that (round 35, AI280-AI304: low_memory=0 or 'False' and
# num_beam_groups=1.0 were "asks for low-memory beam search" / "group beam search", the cause the wrong one)
_KINDS = {"is_assistant": "switch", "use_mtp": "switch", "low_memory": "switch", "num_beam_groups": "whole",
          "encoder_no_repeat_ngram_size": "whole", "penalty_alpha": "number", "diversity_penalty": "number"}
_EXPECTED = {"switch": "True or False (a text such as 'False' or a number is not a switch)",
             "whole": "a whole number", "number": "a number"}


def _kind_problem(name: str, value: Any) -> str | None:
    """Why ``value`` of refused field ``name`` is not of the kind the field holds (None: it is, or None)."""
    import numbers

    from ..value_rules import _bools

    kind = _KINDS.get(name)
    if value is None or kind is None:
        return None
    if kind == "switch":
        fine = isinstance(value, _bools())
    else:
        fine = isinstance(value, numbers.Integral if kind == "whole" else numbers.Real) and not isinstance(value, _bools())
    if fine:
        return None
    off = " or ".join(repr(v) for v in _OFF[name])
    return (f"{name}={value!r:.40} is not {_EXPECTED[kind]}; {REFUSED[name]}, which leviathan's classes do not "
            f"support, is off when {name} is {off} or left out")


def _off(name: str, value: Any) -> bool:
    """Whether ``value`` asks for nothing: None, or the field's off value. A number counts by value: a penalty of 0.0
    is no penalty (transformers 4 wrote ``diversity_penalty: 0.0`` and ``penalty_alpha`` is a float field), so 0.0
    was "asks for group beam search" (round 35, AI280, AI285, AI302, AI303)."""
    if value is None:
        return True
    if _KINDS.get(name) == "number":
        return _kind_problem(name, value) is None and value == 0
    return any(type(value) is type(off) and value == off for off in _OFF.get(name, ()))


def feature_problem(get: Callable[[str], Any]) -> str | None:
    """Why the settings ``get`` reads (``get(name)`` -> value or None) ask for a feature leviathan's classes do not
    support ("prefill_chunk_size=-1 asks for chunked prefill, which leviathan's classes do not support"), or hold a
    value of another kind in such a field ("low_memory=0 is not True or False ..."), or None."""
    for name, feature in REFUSED.items():
        value = get(name)
        if (problem := _kind_problem(name, value)) is not None:
            return problem
        if not _off(name, value):
            return f"{name}={value!r:.40} asks for {feature}, which leviathan's classes do not support"
    for name, refused in _REFUSED_VALUES.items():
        value = get(name)
        if isinstance(value, str) and value in refused:
            return f"{name}={value!r} asks for {refused[value]}, which leviathan's classes do not support"
    return None


def check_generate_features(model: Any, api: str, generation_config: Any, kwargs: dict) -> None:
    """``ArgumentValueError`` (``ArgumentTypeError`` for a keyword of the wrong kind) before ``generate`` runs
    anything, when a keyword, the ``generation_config`` given or ``model.generation_config`` asks for a feature
    outside the supported set (the module docstring). Each field is read where transformers would take it from:
    the keyword, else the config given, else the model's. A dict lookup per field, no tensor read."""
    for name, feature in KEYWORDS.items():
        value = kwargs.get(name)
        if value is None or (name == "trust_remote_code" and value is False):
            continue
        error = ArgumentValueError if name != "trust_remote_code" or isinstance(value, bool) else ArgumentTypeError
        shown = type(value).__name__ if name in ("assistant_model", "assistant_tokenizer", "labels") else \
            f"{value!r:.40}"
        raise error(f"{api}: {name}={shown} asks for {feature}, which leviathan's classes do not support; leave "
                    f"{name} out of generate, or generate with the plain transformers model")
    sources = [kwargs, generation_config, getattr(model, "generation_config", None)]

    def get(name: str) -> Any:
        for source in sources:
            value = source.get(name) if isinstance(source, dict) else getattr(source, name, None)
            if value is not None:
                return value
        return None

    for name in _KINDS:  # a value of another kind is the caller's type mistake (round 35, AI282, AI283, AI304)
        if (problem := _kind_problem(name, get(name))) is not None:
            raise ArgumentTypeError(f"{api}: {problem}; {_FIX}")
    if (problem := feature_problem(get)) is not None:
        raise ArgumentValueError(f"{api}: {problem}; {_FIX}")
