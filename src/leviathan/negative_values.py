"""Option values that begin with a minus sign and a number are read as values, not as options.

    negative_values(parser)   # after the last add_argument: `--sizes -1e6,2e6` is --sizes' value

argparse takes an argument that starts with '-' for a value only when it looks like a plain negative number
('-5', '-.5'); '-1e6,2e6,4e6' (an exponent, a comma list) was read as an unknown option, so `leviathan analyze fit
--sizes -1e6,2e6,...` said "argument --sizes: expected one argument" where one was given, naming neither the cause
nor the `--sizes=-1e6,...` form (issue 30 round 35, AH162). The parser's matcher is widened to a negative number in
any float spelling, alone or first in a comma list or a LOSS:PARAMS pair, so the value reaches the option's own rule ("sizes and losses
must be positive"). No leviathan option is spelled like a number, which is what argparse's narrow rule guards.
Footgun: argparse keeps the matcher on each parser (a private attribute); a parser made after the call is not
covered.
"""

from __future__ import annotations

import argparse
import re

_NEGATIVE = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?([,:].*)?$")


def negative_values(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Widen ``parser``'s (and its sub-commands' parsers') negative-number rule (the module docstring); returns it."""
    parser._negative_number_matcher = _NEGATIVE  # argparse keeps no public setting
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                negative_values(sub)
    return parser
