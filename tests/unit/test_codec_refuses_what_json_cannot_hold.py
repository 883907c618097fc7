"""``codec.encode`` refuses a value no JSON file can hold, naming its key path (issue 30 round 28, U526):
``encode({'a': {1, 2}})`` returned the set unchanged, and the JSON writer it was given failed later in json's own
words ("Object of type set is not JSON serializable"), naming neither the key nor the fix. The refusal is an
``ArgumentTypeError`` (a TypeError, as json's is); numbers, texts, None, lists and dataclasses encode as before.
"""

from __future__ import annotations

import dataclasses

import pytest

from leviathan import codec
from leviathan.errors import ArgumentTypeError


@dataclasses.dataclass
class _Record:
    name: str = "r"
    values: object = None


@pytest.mark.parametrize(("value", "where", "kind"), [
    ({"a": {1, 2}}, "a", "set"),
    ({"a": [1, {"b": b"x"}]}, r"a\[1\]\.b", "bytes"),
    (_Record(values={"c": 1j}), r"values\.c", "complex"),
    ([frozenset()], r"\[0\]", "frozenset"),
])
def test_a_value_json_cannot_hold_is_refused_with_its_key_path(value, where, kind):
    with pytest.raises(ArgumentTypeError, match=rf"^encode: {where} is a {kind} \(.*\), which JSON cannot hold; "
                                                 rf"give a list, a text or a number there$"):
        codec.encode(value)


def test_json_values_and_records_encode_as_before():
    assert codec.encode({"a": [1, 2.5, None, "x", True], "b": (1, 2)}) == {"a": [1, 2.5, None, "x", True], "b": [1, 2]}
    assert codec.encode(_Record(values=[1])) == {"name": "r", "values": [1]}
