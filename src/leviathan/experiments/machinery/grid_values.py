"""A grid's run-config value as the override text each run gets: read by the rule a config file's value is read by.

    override_text("max_steps", 2.0)            # "max_steps=2": an integer setting given a whole number
    override_text("optim.lr", QuotedText("0.5", 7))   # ConfigError: in quotes (line 7), text, not a number
    override_text("data.path", QuotedText("2024"))    # 'data.path="2024"': text stays text for the run

A grid's ``base``, ``sizes.*.run`` and ``variant_run`` are flattened to ``key=value`` overrides (grid.json records
them; every run is built from them). Two footguns of that flattening (issue 30 round 16):
- C135: ``optim: {lr: "0.5"}`` lost its quotes (``optim.lr=0.5``) and trained at lr 0.5, where ``train --config``
  now refuses it; a quoted value of a number or switch setting is refused here, naming the key and line, and a
  quoted value of any other setting keeps its quotes, so the run reads it as the file's text.
- C156: ``max_steps: 2.0`` was recorded as ``max_steps=2.0`` and ``report`` of it beside a sweep of ``max_steps: 2``
  refused the pair as "started with different settings" although both trained 2 steps. A whole number given to an
  integer setting is written as the integer, as a config file reads it (``config._coerce_int``); a fraction is left
  for the run config to refuse.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ...config import parse_override, refuse_quoted
from ...strict_yaml import QuotedText
from .grid_file import _setting_type

_KINDS = {int: "an integer", float: "a number", bool: "true or false"}


def scalar_text(value: Any) -> str:
    """``value`` as YAML an override reads back as the same value (a quoted text keeps its quotes)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, QuotedText):
        return json.dumps(str(value))
    return str(value)


def override_text(key: str, value: Any) -> str:
    """``key=value`` for one setting of a grid section (``value`` a scalar or a list of scalars), checked against the
    run config's kind of ``key`` (``grid_file._setting_type``; a key it does not know is left to the run config)."""
    kind = _setting_type(key)
    if kind in _KINDS:
        refuse_quoted(value, key, _KINDS[kind])
    if kind is int:
        value = _whole(value)
    if isinstance(value, list):
        return f"{key}=[{', '.join(scalar_text(x) for x in value)}]"
    return f"{key}={scalar_text(value)}"


def _whole(value: Any) -> Any:
    """``value`` as an int when it is a whole number written otherwise (``2.0``, ``2e3``), else unchanged."""
    if isinstance(value, bool) or not isinstance(value, (float, str)):
        return value
    try:
        number = float(value.replace("_", "") if isinstance(value, str) else value)
    except ValueError:
        return value
    return int(number) if math.isfinite(number) and number.is_integer() else value


def command_line_text(text: str) -> str:
    """A sweep's command-line override read by the same rule as the grid's own values (``max_steps=2.0`` is
    ``max_steps=2``); a section given whole (``optim={lr: 1}``) is kept as written."""
    path, value = parse_override(text)
    return text if isinstance(value, dict) else override_text(".".join(path), value)
