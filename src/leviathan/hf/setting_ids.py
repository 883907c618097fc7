"""The token ids that generation settings name inside their lists and maps (``suppress_tokens``, ``bad_words_ids``,
``sequence_bias``, ...), held to the model's vocabulary: one rule for ``generate``'s keywords, the generation_config
given, the model's (its generation_config.json, read by the loaders) and the savers.

    setting_ids_problem("suppress_tokens", [400], 300)
    # "suppress_tokens holds 400, which is not a token id of this model (whole numbers 0 to 299, its vocabulary of 300)"

Issue 30 round 32: ids past the vocabulary or negative were transformers' raw ValueError ("The model vocabulary size
is 300, but the following tokens were being biased", ``bad_words_ids`` AC28, AC63, ``sequence_bias`` AC35, AC70), its
IndexError (``forced_eos_token_id`` AC30, AC65), or taken without a word (``suppress_tokens`` AC29, AC64, also from
generation_config.json AC408; ``begin_suppress_tokens=[-1]`` read by torch as id 299, AC95, AC122;
``forced_bos_token_id`` 999, AC411), where ``eos_token_id`` and its siblings are refused
(``configuration.token_id_problem``, round 31). Issue 30 round 33: the layouts as transformers takes them
(``bad_words_ids`` a list of non-empty lists, AE47, AE390, AE395; ``sequence_bias`` keys non-empty, AE48) and the
biases finite numbers (AE49, AE50).
"""

from __future__ import annotations

from typing import Any

from ..integers import is_integer

# name -> how its ids are laid out: one id (or a list of them), a list of ids, a list of lists, a map of id tuples
LISTED_IDS = {"forced_bos_token_id": "id", "forced_eos_token_id": "id or ids", "suppress_tokens": "ids",
              "begin_suppress_tokens": "ids", "bad_words_ids": "lists of ids", "sequence_bias": "bias map"}
_SHOWN = {"ids": "a list of token ids", "lists of ids": "a list of non-empty lists of token ids ([[id, ...], ...])",
          "bias map": "a map of non-empty id tuples to finite biases ({(id, ...): bias})"}


def _ids(layout: str, value: Any) -> list | None:
    """The ids ``value`` names in ``layout``; None when it is not laid out so."""
    listed = isinstance(value, (list, tuple))
    if layout == "id":
        return [value]
    if layout == "id or ids":
        return list(value) if listed else [value]
    if layout == "ids":
        return list(value) if listed else None
    if layout == "lists of ids":  # lists, as transformers takes them (tuples: its raw ValueError, AE390, AE395)
        if not isinstance(value, list) or not value or not all(isinstance(row, list) and row for row in value):
            return None  # an empty word (``[[]]``) was taken without a word (AE47, AE200)
        return [i for row in value for i in row]
    # sequence_bias: {(ids...): bias} or [[[ids...], bias], ...]
    if isinstance(value, dict):
        keys = list(value)
    elif listed and all(isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in value):
        keys = [pair[0] for pair in value]
    else:
        return None
    if not all(isinstance(key, (list, tuple)) and key for key in keys):  # ``{(): 1.0}``: AE48
        return None
    return [i for key in keys for i in key]


def _biases(value: Any) -> list:
    """The biases of a ``sequence_bias`` laid out as ``_ids`` reads it."""
    return list(value.values()) if isinstance(value, dict) else [pair[1] for pair in value]


def setting_ids_problem(name: str, value: Any, vocab_size: int) -> str | None:
    """Why ``value`` of the setting ``name`` (one of ``LISTED_IDS``) names something other than token ids in [0,
    ``vocab_size``), or is not laid out as that setting's ids; None when fine or None."""
    if value is None or name not in LISTED_IDS:
        return None
    layout = LISTED_IDS[name]
    ids = _ids(layout, value)
    if ids is None:
        return f"{name} {value!r:.60} is not {_SHOWN[layout]}"
    bad = next((i for i in ids if not is_integer(i) or not 0 <= i < vocab_size), "ok")
    if bad == "ok":
        return (_bias_problem(name, value) or _twice_problem(name, value)) if layout == "bias map" else None
    return (f"{name} holds {bad!r}, which is not a token id of this model (whole numbers 0 to {vocab_size - 1}, its "
            f"vocabulary of {vocab_size:,})")


def _bias_problem(name: str, value: Any) -> str | None:
    """Why a bias of ``sequence_bias`` is no finite number: NaN was taken without a word (issue 30 round 33, AE49), a
    text transformers' raw ValueError (AE50)."""
    import math

    for bias in _biases(value):
        if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not math.isfinite(bias):
            return f"{name} {value!r:.60} is not {_SHOWN['bias map']}: the bias {bias!r:.20} is no finite number"
    return None


def _twice_problem(name: str, value: Any) -> str | None:
    """Why a ``sequence_bias`` list of pairs is no map: the same sequence given twice kept one of its biases and
    dropped the other without a word (issue 30 round 34, AG330; from generation_config.json AG453, where the file's
    duplicate JSON keys are refused, AG202)."""
    if isinstance(value, dict):
        return None
    seen = set()
    for key, _ in value:
        key = tuple(key)
        if key in seen:
            return (f"{name} names the sequence {list(key)!r:.40} twice, and only one of its biases would be kept: "
                    f"give each sequence once")
        seen.add(key)
    return None
