"""The switches of a Hugging Face ``forward`` (``use_cache``, ``return_dict``, ``output_attentions``,
``output_hidden_states``), checked once for both of leviathan's HF classes.

    check_forward_switches("LeviathanForCausalLM.forward", use_cache=use_cache, return_dict=return_dict, ...)

Both forwards read them with Python's truth: ``use_cache='no'`` made and returned a cache, ``return_dict='no'``
returned an output object, not a tuple, and an adopted model's ``output_hidden_states=1`` returned the hidden states,
all without a word, while ``LeviathanConfig`` refuses the same values (issue 30 round 31, AA634-AA637, AA639;
the config's rule: AA181); LeviathanForCausalLM called ``output_hidden_states=1`` "output_hidden_states=True is not
supported" (AA638). Each is None (the config's default) or True or False (numpy's bool too:
``value_rules.check_switches``).
"""

from __future__ import annotations

from typing import Any

FORWARD_SWITCHES = ("use_cache", "return_dict", "output_attentions", "output_hidden_states")


def check_forward_switches(api: str, given: dict[str, Any]) -> None:
    """``errors.ArgumentTypeError`` (a UserError) naming ``api`` and the first of ``FORWARD_SWITCHES`` in ``given``
    (a forward's arguments by name) that is neither None nor a switch. O(1): no tensor is read."""
    from ..value_rules import check_switches

    check_switches(api, **{name: given[name] for name in FORWARD_SWITCHES if given.get(name) is not None})
