"""An option given twice on the command line is refused, never silently taken as the last one.

    parser = argparse.ArgumentParser(...)
    parser.add_argument("--out")
    once_options(parser)            # after the last add_argument: `--out ra --out rb` -> "argument --out: given twice"

argparse keeps the last value of a repeated option without a word: ``leviathan report s1 --out ra --out rb`` wrote
only rb, ``eval --max-tokens 100 --max-tokens 200`` scored 200 tokens, ``collect_results.py --rewrite cA --rewrite
cm`` rewrote only cm, exit 0 (issue 30 round 24, V130), while a key given twice in the overrides or a YAML file is
refused (issue 30, deliver 4). One rule for the whole command line: an option that holds one value (``store``,
``store_const``, ``store_true``/``store_false``, ``BooleanOptionalAction``) may be given once; a second time, under any
of its spellings (``-o`` and ``--out``, or ``--x`` and ``--no-x`` of one ``dest``), is argparse's usage error naming it,
exit 2. Options made to repeat (``append``, ``extend``, ``count``) and --help/--version are left as they are.

The verbs get it from ``leviathan.cli._start_verb``; each script under scripts/ calls it on its own parser (and on a
parser with sub-commands it covers theirs too). Footguns: an option added after the call is not covered; the seen
options are kept per namespace being filled (``parse_intermixed_args`` fills one in two passes), so a parser parsed
again starts afresh.
"""

from __future__ import annotations

import argparse

_SINGLE = (argparse._StoreAction, argparse._StoreConstAction, argparse.BooleanOptionalAction)  # store_true: const
_ONCE_CLASSES: dict[type, type] = {}


def once_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make every single-valued option of ``parser`` (and of its sub-commands' parsers) refuse a second use; returns
    ``parser``."""
    for action in parser._actions:  # argparse keeps no public list
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                once_options(sub)
        elif action.option_strings and isinstance(action, _SINGLE):
            action.__class__ = _once_class(type(action))
    return parser


def _once_class(kind: type) -> type:
    """``kind`` with a ``__call__`` that refuses a second value for its ``dest`` in the same namespace (one class per
    action kind: argparse calls ``type(action).__call__``, so an instance attribute would not be used)."""
    if issubclass(kind, _Once):
        return kind
    if kind not in _ONCE_CLASSES:
        _ONCE_CLASSES[kind] = type(f"Once{kind.__name__}", (_Once, kind), {})
    return _ONCE_CLASSES[kind]


class _Once(argparse.Action):
    """Mixed in before an argparse action class (see ``_once_class``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = _given(parser, namespace)
        if self.dest in given:
            first, first_value = given[self.dest]
            raise argparse.ArgumentError(self, f"given twice ({_shown(first, first_value)}, then "
                                               f"{_shown(option_string, values)}): only the last would count; give "
                                               f"{option_string} once")
        given[self.dest] = (option_string, values)
        super().__call__(parser, namespace, values, option_string)


def _given(parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> dict:
    """The options already given (dest -> (option string, value)) while ``parser`` fills ``namespace``: kept on the
    parser beside the namespace they belong to, so a new parse (a new namespace) starts with none."""
    held = parser.__dict__.get("_once_given")
    if held is None or held[0] is not namespace:
        held = (namespace, {})
        parser._once_given = held
    return held[1]


def _shown(option_string: str | None, values) -> str:
    if values is None or values == []:  # a flag (store_true, store_const) takes no value
        return str(option_string)
    shown = " ".join(map(str, values)) if isinstance(values, (list, tuple)) else values  # nargs=2 of type=int too
    return f"{option_string} {shown!r}"
