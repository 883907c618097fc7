"""A JSON writer refuses an object whose keys collide as text (issue 30 round 29, W209, silent).

``atomic_write_json(path, {1: 'x', '1': 'y'})`` wrote ``{"1": "x", "1": "y"}``: json.dumps writes the int key 1 as
the text "1", so the file gave the key twice, a file the project's strict readers refuse since round 28
(``json_text.no_repeats``: config.json, state.json, JSON lines) and ``json`` reads last-wins. The writers now ask
``json_text.repeated_key`` (the writers' side of ``no_repeats``) and write nothing: ``io.atomic_write_json`` and the
results rows' ``results.dumps``.
"""

from __future__ import annotations

import pytest

from leviathan import io as lio
from leviathan import json_text
from leviathan.errors import ArgumentValueError, UserError

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize(("obj", "where", "keys", "text"), [
    ({1: "x", "1": "y"}, "obj", "1 and '1'", "1"),
    ({"a": [{True: 1, "true": 2}]}, r"obj\['a'\]\[0\]", "True and 'true'", "true"),
    ({"a": {None: 1, "null": 2}}, r"obj\['a'\]", "None and 'null'", "null"),
    ({"a": {1.5: 1, "1.5": 2}}, r"obj\['a'\]", "1.5 and '1.5'", "1.5"),
])
def test_keys_that_collide_as_text_are_refused_and_nothing_is_written(tmp_path, obj, where, keys, text):
    path = tmp_path / "out.json"
    with pytest.raises(ArgumentValueError, match=rf"^atomic_write_json: {where} has keys {keys}, both written as the "
                                                 rf"key \"{text}\", .*nothing was written to .*; give each key once"):
        lio.atomic_write_json(path, obj)
    assert not path.exists()


def test_keys_that_do_not_collide_are_written_and_read_back(tmp_path):
    path = tmp_path / "out.json"
    lio.atomic_write_json(path, {1: "x", "2": "y", "a": {None: 1, True: 2}})
    assert json_text.read_file(path) == {"1": "x", "2": "y", "a": {"null": 1, "true": 2}}


def test_a_results_row_with_colliding_keys_is_refused():
    from leviathan.experiments.machinery.results import dumps

    assert dumps({"a": {1: 2}}) == '{"a": {"1": 2}}'
    with pytest.raises(UserError, match=r"the record\['a'\] has keys 1 and '1', both written as the key \"1\""):
        dumps({"a": {1: 2, "1": 3}})
