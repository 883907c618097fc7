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
    when it takes them."""
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


def repeated_keys(pairs: list[str]) -> str | None:
    """The first KEY given twice among ``update_from_string``'s ``KEY=VALUE`` pairs (AC259: the last was kept without
    a word); None when each key is given once."""
    seen = set()
    for key in (pair.split("=", 1)[0] for pair in pairs):
        if key in seen:
            return key
        seen.add(key)
    return None
