"""One check of a ``LeviathanConfig``'s values, whichever way they changed after the constructor ran.

    check_config_values(config, "update")   # ConfigError: "update: model.hidden_size must be a positive integer ..."

The constructor validates every value (``ModelConfig``'s sizes, the switches, the token ids of the vocabulary), and
``check_saveable`` refuses a changed config before a save; but ``config.update({'hidden_size': 'x'})``,
``update({'generator_rank': -1})``, a NaN vocab_size, 5 heads for width 32, ``use_cache='no'``, eos_token_id 400 past
300 ids and ``embedding='bogus'`` were stored without a word (issue 30 round 32, AC251-AC256, AC258), as were
``update_from_string('hidden_size=-8')`` and ``'rms_norm_eps=nan'`` (AC264, AC265), and ``from_pretrained(DIR,
hidden_size=-1)`` / ``from_dict(d, hidden_size=-1)`` (AC277: transformers sets a keyword as an attribute after the
constructor). Each of those ways now asks this one rule, on a copy where the change may not be kept (all or nothing,
AC268): the config built again from its own ``to_dict`` by ``from_dict``, that is, by the constructor's checks.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import ConfigError


def config_values_problem(config: Any) -> ConfigError | None:
    """The ConfigError the constructor raises for ``config``'s current values (rebuilt from its ``to_dict``); None
    when it takes them. ``model_type`` first: ``to_dict`` writes the class's, so ``update({'model_type': 'llama'})``
    passed the rebuild, and the config said 'llama' while its config.json said 'leviathan' (issue 30 round 33, AE94,
    AE128)."""
    own = type(config).model_type
    if (given := vars(config).get("model_type", own)) != own:
        return ConfigError(f"model_type {given!r:.60} is not this config's: a {type(config).__name__} is model_type "
                           f"{own!r} whatever it is told (config.json is written with {own!r}); leave model_type out")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            type(config).from_dict(config.to_dict())
    except ConfigError as e:
        return e
    return None


def check_config_values(config: Any, api: str, fix: str) -> None:
    """ConfigError ``API: <the constructor's line>; FIX`` when ``config``'s values are ones its constructor refuses."""
    if (problem := config_values_problem(config)) is not None:
        raise ConfigError(f"{api}: {problem}; {fix}") from None


def hf_fields_problem(values: dict) -> str | None:
    """Why one of transformers' own fields among ``values`` is no value transformers reads: ``architectures`` is None
    or a list of class names (``update({'architectures': 5})`` was saved into config.json and read back as 5, issue 30
    round 33, AE97, AE129); ``id2label`` and ``label2id`` are None or dicts (``update({'id2label': 5})`` ended in
    transformers' raw "AttributeError: 'int' object has no attribute 'items'", AE252). None when they are fine."""
    arch = values.get("architectures")
    if arch is not None and (not isinstance(arch, (list, tuple)) or not all(isinstance(a, str) for a in arch)):
        return f"architectures must be a list of model class names (e.g. ['LeviathanForCausalLM']) or None, got {arch!r:.60}"
    for name in ("id2label", "label2id"):
        if (value := values.get(name)) is not None and not isinstance(value, dict):
            return f"{name} must be a dict (label id -> name, or name -> id) or None, got {value!r:.60}"
    return _labels_problem(values.get("id2label") or {}, values.get("label2id") or {})


def _labels_problem(id2label: dict, label2id: dict) -> str | None:
    """Why ``id2label`` (label id -> name) or ``label2id`` (name -> id) holds an entry of the wrong kind: transformers'
    labels are names, so ``update({'id2label': {0: 5}})`` stored and saved a number as a label's name without a word
    (issue 30 round 35, AI387). An id is a whole number (or its text, as config.json's keys are); a name is text."""
    def is_id(value):
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and
                                                                            value.lstrip("-").isdigit())

    for key, label in id2label.items():
        if not is_id(key) or not isinstance(label, str):
            return (f"id2label must map label ids (whole numbers) to label names (text), got {key!r:.20}: "
                    f"{label!r:.30}; write it as {{0: 'LABEL_0', 1: 'LABEL_1'}}")
    for label, key in label2id.items():
        if not isinstance(label, str) or not is_id(key):
            return (f"label2id must map label names (text) to label ids (whole numbers), got {label!r:.30}: "
                    f"{key!r:.20}; write it as {{'LABEL_0': 0, 'LABEL_1': 1}}")
    return None


def tie_problem(given: dict, embedding: Any) -> str | None:
    """Why ``tie_word_embeddings`` among the settings ``given`` contradicts the one the config derives from
    ``embedding`` (True exactly for 'dense_tied'): ``update({'embedding': 'dense_tied', 'tie_word_embeddings':
    False})`` dropped the False without a word (issue 30 round 33, AE343). None when it is not given or agrees."""
    if "tie_word_embeddings" not in given or given["tie_word_embeddings"] == (embedding == "dense_tied"):
        return None
    return (f"tie_word_embeddings={given['tie_word_embeddings']!r:.30} contradicts embedding={embedding!r:.40} (tying is "
            f"derived from the embedding: True exactly for 'dense_tied'); set embedding, and leave tie_word_embeddings "
            f"out")


def repeated_keys(pairs: list[str]) -> str | None:
    """The first KEY given twice among ``update_from_string``'s ``KEY=VALUE`` pairs (AC259: the last was kept without
    a word); None when each key is given once."""
    seen = set()
    for key in (pair.split("=", 1)[0] for pair in pairs):
        if key in seen:
            return key
        seen.add(key)
    return None
