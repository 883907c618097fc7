"""A saved folder's generation_config.json held to what ``generate`` can use, read back by the loaders.

    check_generation_file(model, folder)   # UserError: the file damaged, or a length, beam count or sampling value
                                           # no generation can use (max_length -5)
    generation_value_problem(generation)   # why one of those values is nonsense, or None (the savers' rule too)

transformers reads generation_config.json for ``generate`` and trusts it: ``max_length: -5`` loaded without a word
(``model.generation_config.max_length`` -5), and a file damaged to ``{oops`` was skipped for a generation config made
from config.json, the file never named (issue 30 round 25, Y514, Y515), where an out-of-range eos id is refused
(``configuration.check_generation_ids``, Y513). Footgun: only the values below are checked, each by its own range;
combinations (``top_k`` without ``do_sample``) are transformers' own warnings.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ..errors import UserError

# setting -> the least whole number it may be (or null): a length, a count
# (issue 30 round 33: the counts of assisted and prompt-lookup decoding, ``prompt_lookup_num_tokens=-1`` transformers'
# raw "Invalid max_matching_ngram_size or num_output_tokens" (AE82), ``max_matching_ngram_size=0`` read as unset (2)
# and ``num_assistant_tokens=-1`` taken without a word, AE83, AE84)
_WHOLE = {"max_length": 1, "max_new_tokens": 1, "min_length": 0, "min_new_tokens": 0, "num_beams": 1,
          "num_beam_groups": 1, "num_return_sequences": 1, "top_k": 0, "no_repeat_ngram_size": 0,
          "prompt_lookup_num_tokens": 1, "max_matching_ngram_size": 1, "num_assistant_tokens": 1}
# numbers: name -> (least, most, whether each end is allowed, shown): a penalty above 0, a temperature of 0 or more (0
# with greedy decoding is harmless, and some published generation configs hold it), a probability mass in [0, 1].
# Issue 30 round 32: transformers' logits processors refused ``min_p`` 2 with their raw ValueError (AC25, AC60,
# AC410), ignored ``epsilon_cutoff`` 1.5 without a word (it keeps the cut only inside (0, 1), AC24, AC59), and took a
# NaN ``length_penalty`` (beams ranked by NaN, AC22, AC57, AC409), a NaN ``guidance_scale`` (AC92, AC119) and a
# negative ``max_time`` (one token made, AC27, AC62)
_INF = math.inf
_RANGES = {"repetition_penalty": (0, _INF, False, True, "above 0"), "temperature": (0, _INF, True, True, ">= 0"),
           "top_p": (0, 1, True, True, "in [0, 1]"), "typical_p": (0, 1, True, True, "in [0, 1]"),
           "min_p": (0, 1, True, True, "in [0, 1]"), "top_h": (0, 1, True, True, "in [0, 1]"),
           "epsilon_cutoff": (0, 1, True, False, "in [0, 1)"), "eta_cutoff": (0, 1, True, False, "in [0, 1)"),
           "encoder_repetition_penalty": (0, _INF, False, True, "above 0"),
           "length_penalty": (-_INF, _INF, True, True, ""), "diversity_penalty": (-_INF, _INF, True, True, ""),
           "guidance_scale": (-_INF, _INF, True, True, ""), "penalty_alpha": (-_INF, _INF, True, True, ""),
           "max_time": (0, _INF, False, True, "above 0 (seconds)")}

# token ids: an empty list (no id at all) loaded and ``generate`` then ended in transformers' raw IndexError (issue 30
# round 29, W104, W130); an id itself, or the ids of a list, are held to the model's vocabulary after the load
# (``configuration.check_generation_ids``), which names the range
_IDS = ("eos_token_id", "bos_token_id", "pad_token_id", "decoder_start_token_id")
# switches: ``do_sample: "yes"`` loaded as the text (W726); ``return_dict_in_generate='yes'``, ``output_scores=1`` and
# ``renormalize_logits='yes'`` were read by Python's truth (issue 30 round 32, AC86, AC87, AC93, AC113, AC114, AC120)
# (``token_healing`` too, issue 30 round 33, AE86's sibling)
# (``disable_compile='no'`` taken without a word, issue 30 round 34, AG152)
_SWITCHES = ("do_sample", "use_cache", "return_dict_in_generate", "output_scores", "output_logits",
             "output_attentions", "output_hidden_states", "renormalize_logits", "remove_invalid_values", "low_memory",
             "token_healing", "disable_compile")
# a switch that also takes one word: ``early_stopping=1`` was read as True (1 == True) without a word (issue 30 round
# 33, AE392); a text other than those is transformers' own check's ('maybe', round 32, AC413)
_SWITCH_OR = {"early_stopping": ("never",)}
# a pair (the index the penalty starts at, its growth factor): a NaN factor was taken (AC96) or torch's raw "Could
# not infer dtype of NoneType" (AC123)
_PAIRS = {"exponential_decay_length_penalty": "a pair (start index >= 0, finite decay factor)"}
# the watermark's settings, each by its use in transformers' WatermarkLogitsProcessor: ``{'bias': 'x'}`` loaded and
# ended in torch's raw "unsupported operand type(s) for +: 'Tensor' and 'str'" at the first token (issue 30 round 33,
# AE85, from generation_config.json AE201); its own validate reads only seeding_scheme, greenlist_ratio, context_width
_WATERMARK = "watermarking_config"
# the settings these rules read, for the callers that merge them (``generate_arguments``)
SETTINGS = (*_WHOLE, *_RANGES, *_SWITCHES, *_SWITCH_OR, *_PAIRS, _WATERMARK)


def _ids_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is no token id setting at all (an empty list), or None."""
    if isinstance(value, (list, tuple)) and not value:
        return f"{name} {value!r:.40} names no token: give a token id, a non-empty list of them, or null"
    return None


def generation_value_problem(generation: Any) -> str | None:
    """Why one of ``generation``'s (a ``GenerationConfig``, or the dict of its file) lengths, counts or sampling numbers is one no generation
    can use ("max_length -5 must be a whole number >= 1 (or null)"); None when all are fine or it is None."""
    if generation is None:
        return None
    get = generation.get if isinstance(generation, dict) else lambda name, default: getattr(generation, name, default)
    from .generation_features import feature_problem  # a feature leviathan's classes do not run (round 34, AG199)

    if (problem := feature_problem(lambda name: get(name, None))) is not None:
        return problem
    for name, least in _WHOLE.items():
        value = get(name, None)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            return f"{name} {value!r:.40} must be a whole number >= {least} (or null)"
    for name in _IDS:
        if (problem := _ids_problem(name, get(name, None))) is not None:
            return problem
    for name in _SWITCHES:
        value = get(name, None)
        if value is not None and not isinstance(value, bool):
            return f"{name} {value!r:.40} must be true or false (or null)"
    for name, words in _SWITCH_OR.items():
        value = get(name, None)
        if value is not None and not isinstance(value, (bool, str)):  # other texts: transformers' own check
            shown = " or ".join(repr(word) for word in words)
            return f"{name} {value!r:.40} must be true or false, or {shown} (or null)"
    for name, (low, high, low_in, high_in, shown) in _RANGES.items():
        value = get(name, None)
        if value is None:
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not number or not (low <= value if low_in else low < value) or not (value <= high if high_in else
                                                                                  value < high):
            return f"{name} {value!r:.40} must be a finite number{' ' + shown if shown else ''} (or null)"
    for name, shown in _PAIRS.items():
        if (value := get(name, None)) is not None and not _decay_pair(value):
            return f"{name} {value!r:.40} must be {shown} (or null)"
    if (problem := watermark_problem(get(_WATERMARK, None))) is not None:
        return problem
    return sampling_problem(get("do_sample", None), get)


def watermark_problem(value: Any) -> str | None:
    """Why ``value`` (``watermarking_config``: None, its dict, or transformers' ``WatermarkingConfig``) is no watermark
    a generation can use: bias a finite number, greenlist_ratio in [0, 1], context_width and hashing_key whole numbers
    (context_width >= 1), seeding_scheme 'lefthash' or 'selfhash'; None when fine (issue 30 round 33, AE85, AE201)."""
    if value is None:
        return None
    held = value.to_dict() if callable(getattr(value, "to_dict", None)) else value
    if not isinstance(held, dict):
        return f"{_WATERMARK} {value!r:.40} must be a map of watermark settings (or null)"
    rules = {"bias": (lambda v: _finite(v), "a finite number"),
             "greenlist_ratio": (lambda v: _finite(v) and 0 <= v <= 1, "a number in [0, 1]"),
             "context_width": (lambda v: _whole(v) and v >= 1, "a whole number >= 1"),
             "hashing_key": (_whole, "a whole number"),
             "seeding_scheme": (lambda v: v in ("lefthash", "selfhash"), "'lefthash' or 'selfhash'")}
    for key, (fits, shown) in rules.items():
        if key in held and held[key] is not None and not fits(held[key]):
            return f"{_WATERMARK}'s {key} {held[key]!r:.40} must be {shown}"
    return None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# with sampling, 0 leaves no token to sample from: transformers' logits processors' raw ValueError (round 31, AA622's
# sibling; ``typical_p`` 0, also from a saved generation_config.json, issue 30 round 32, AC23, AC58, AC406)
SAMPLING_ZEROS = ("temperature", "top_p", "typical_p")


def sampling_problem(do_sample: Any, get) -> str | None:
    """Why the sampling numbers read by ``get(name, None)`` leave nothing to sample when ``do_sample`` is True (one of
    ``SAMPLING_ZEROS`` is 0); greedy decoding ignores them, so a file may hold temperature 0."""
    if do_sample is not True:
        return None
    for name in SAMPLING_ZEROS:
        value = get(name, None)
        if value is not None and not isinstance(value, bool) and value == 0:
            return f"{name} 0 with do_sample true leaves no token to sample"
    return None


def _decay_pair(value: Any) -> bool:
    """Whether ``value`` is exponential_decay_length_penalty's (start index, decay factor): a whole number >= 0 and a
    finite number (transformers raises eos's score by factor ** (length - start) - 1)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return False
    start, factor = value
    whole = isinstance(start, int) and not isinstance(start, bool) and start >= 0
    return whole and isinstance(factor, (int, float)) and not isinstance(factor, bool) and math.isfinite(factor)


def check_generation_file(model: Any, folder: str | os.PathLike) -> None:
    """UserError when ``folder``'s generation_config.json is damaged (no JSON object: transformers skipped it without a
    word) or the ``model`` loaded from it has a generation value ``generation_value_problem`` refuses."""
    from .generate_needs import fixed_cache_problem

    where = Path(folder) / "generation_config.json"
    _read_file(where)
    generation = getattr(model, "generation_config", None)
    if (problem := generation_value_problem(generation) or fixed_cache_problem(model, generation)) is not None:
        source = where if os.path.lexists(where) else Path(folder) / "config.json"  # made from config.json
        raise UserError(f"{str(source)!r}: {problem}, {_EDITED}")


def check_generation_json(folder: str | os.PathLike) -> None:
    """Before a loader hands ``folder`` to transformers: UserError when its generation_config.json is damaged, holds a
    value ``generation_value_problem`` refuses, or one transformers' ``GenerationConfig`` refuses as it loads:
    ``max_new_tokens: -5`` was its raw ValueError ("`max_new_tokens` must be greater than 0") out of
    ``from_pretrained``, where ``max_length: -5`` loads and ``check_generation_file`` names it after the load (issue
    30 round 28, U298). No file: nothing to check (a generation config is made from config.json)."""
    where = Path(folder) / "generation_config.json"
    value = _read_file(where)
    if value is None:
        return
    if (problem := generation_value_problem(value) or _refused_by_transformers(value)) is not None:
        raise UserError(f"{str(where)!r}: {problem}, {_EDITED}")
    if (problem := key_problem(value)) is not None:
        raise UserError(f"{str(where)!r}: {problem}")


# keys a model's config.json holds and no generation config does: the file holds another file's object
_MODEL_CONFIG_KEYS = ("model_type", "architectures")


def key_problem(value: dict) -> str | None:
    """Why a key of the generation_config.json object ``value`` is a mistake, with its fix; None when fine.

    transformers keeps a key it does not know as an attribute of the generation config (custom generation code may
    read it), so an unknown key is taken. Refused are only what is clearly a mistake (issue 30 round 33): a key one
    letter or so from a setting's name (``max_new_token`` for ``max_new_tokens``: the setting silently unset and 20
    new ids made, AE204; difflib's ratio >= 0.9, which no two of transformers' own names reach but bos/eos), and the
    marks of a model's config.json (``model_type``, ``architectures``: config.json's text copied over the file and
    its keys taken as settings, AE212)."""
    import difflib

    from transformers import GenerationConfig

    known = set(vars(GenerationConfig()))
    unknown = [key for key in value if key not in known]
    if marks := [key for key in unknown if key in _MODEL_CONFIG_KEYS]:
        return (f"holds {marks[0]!r}, a key of a model's config.json, not of a generation config: the file holds "
                f"another file's object; restore it from a copy, remove it (a generation config is then made from "
                f"config.json), or save the model again")
    for key in unknown:
        if close := difflib.get_close_matches(key, known, n=1, cutoff=0.9):
            return (f"holds {key!r}, which is no generation setting; it reads as a misspelt {close[0]!r}: rename it "
                    f"(or remove the line)")
    return None


_EDITED = "a value no generation can use: the file was edited; set it to a usable value (or remove the line), or " \
          "save the model again"


def _read_file(where: Path) -> dict | None:
    """The JSON object of the generation_config.json ``where``, None when there is none; UserError for a file that
    does not read as one (transformers skipped it without a word, round 25, Y515)."""
    from .. import json_text

    fix = ("restore it from a copy, remove it (a generation config is then made from config.json), or save the model "
           "again")
    if not os.path.lexists(where):
        return None
    try:
        value = json_text.read_file(where, object_pairs_hook=json_text.no_repeats)
    except (OSError, ValueError) as e:
        raise UserError(f"{str(where)!r} does not read as a generation config ({e}); {fix}") from None
    if not isinstance(value, dict):
        raise UserError(f"{str(where)!r} holds {type(value).__name__} {value!r:.40}, not the JSON object of a "
                        f"generation config; {fix}")
    return value


def _refused_by_transformers(value: dict) -> str | None:
    """transformers' own refusal of the file's ``value`` (``GenerationConfig.from_dict``, as its loader builds it), its
    first line; None when it is taken. Footgun: its warnings about combinations (``top_k`` without ``do_sample``) are
    printed here first; transformers says each once."""
    from transformers import GenerationConfig

    try:
        GenerationConfig.from_dict(value)
    except (ValueError, TypeError, AttributeError, KeyError) as e:
        said = str(e).strip().splitlines()
        return f"transformers refuses it ({said[0][:200] if said else type(e).__name__})"
    return None
