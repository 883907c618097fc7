"""``codec.encode`` refuses a value no JSON file can hold, naming its key path (issue 30 round 28, U526):
``encode({'a': {1, 2}})`` returned the set unchanged, and the JSON writer it was given failed later in json's own
words ("Object of type set is not JSON serializable"), naming neither the key nor the fix. The refusal is an
``ArgumentTypeError`` (a TypeError, as json's is); numbers, texts, None, lists and dataclasses encode as before.

Round 28 listed what to refuse (set, frozenset, bytes, bytearray, memoryview, complex), so a numpy array, a range, a
tuple key and an object() were still returned as they were (round 29: W248, W250, W251, W253, silent). ``encode``
now takes exactly what JSON holds (numpy's scalars kept, as before) and refuses the rest, keys too; a numpy int or
float key is written as Python's (json.dumps refuses numpy keys).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
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


@pytest.mark.parametrize(("value", "where", "kind"), [
    ({"a": np.array([1, 2])}, "a", "ndarray"),
    ({"a": range(3)}, "a", "range"),
    ({"a": object()}, "a", "object"),
    ([{"b": [1, Ellipsis]}], r"\[0\]\.b\[1\]", "ellipsis"),
])
def test_any_value_json_does_not_hold_is_refused(value, where, kind):
    with pytest.raises(ArgumentTypeError, match=rf"^encode: {where} is a {kind} \(.*\), which JSON cannot hold; "):
        codec.encode(value)


@pytest.mark.parametrize(("value", "where", "key"), [
    ({(1, 2): 3}, "the object", r"\(1, 2\), a tuple"),
    ({"a": {None: 1}}, "the object at a", "None, a NoneType"),
    ({"a": [{True: 1}]}, r"the object at a\[0\]", "True, a bool"),
])
def test_a_key_no_json_object_holds_is_refused(value, where, key):
    with pytest.raises(ArgumentTypeError, match=rf"^encode: {where} has the key {key}, which no JSON object holds as "
                                                 rf"a key .*; give a text key there$"):
        codec.encode(value)


def test_numpys_scalars_and_number_keys_encode_as_json_writes_them():
    encoded = codec.encode({"n": np.int64(3), "x": np.float32(0.5), "b": np.bool_(True), 2: "two", np.int64(7): 1,
                            np.float32(0.25): 2})
    assert json.dumps(encoded, default=lambda o: o.item()) == \
        '{"n": 3, "x": 0.5, "b": true, "2": "two", "7": 1, "0.25": 2}'
