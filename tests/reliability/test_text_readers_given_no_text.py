"""The text readers name a value that is not text (issue 30 round 26, Q372, Q635)."""

from __future__ import annotations

import pytest

from leviathan.errors import ArgumentTypeError

pytestmark = pytest.mark.reliability


def test_the_text_readers_name_a_value_that_is_no_text():
    """Round 26: ``json_text.loads(5)`` was json's raw TypeError (Q372), ``strict_yaml.load_strict(5, 'src')``
    PyYAML's raw AttributeError (Q635); each is now one line of the product's own."""
    from leviathan import json_text
    from leviathan.config import ConfigError
    from leviathan.strict_yaml import load_strict

    with pytest.raises(ArgumentTypeError, match=r"json_text.loads: text must be a str or bytes of JSON, got int 5"):
        json_text.loads(5)
    with pytest.raises(ConfigError, match=r"src: expected the YAML text as a str, got int 5"):
        load_strict(5, "src")
    assert json_text.loads(b'{"a": 1}') == {"a": 1} and load_strict("a: 1\n", "src") == {"a": 1}
