"""An override value that opens a YAML list or mapping and does not close it is refused in one line (issue 30 round
28, U504): ``parse_override('a=[1, 2')`` read the unclosed list as the text '[1, 2' without a word, so a typo in an
override of a list setting was taken as text (and a str setting kept it). Values YAML has no reading of that do not
open a collection (``@x``) are still the text typed, and a quoted value is text as before.
"""

from __future__ import annotations

import pytest

from leviathan.config import parse_override
from leviathan.errors import ConfigError


@pytest.mark.parametrize("text", ["a=[1, 2", "optim.betas={x: 1", "a= [1", "a=[1, 2] x"])
def test_an_unclosed_list_or_mapping_is_one_config_error(text):
    key = text.split("=", 1)[0].strip()
    with pytest.raises(ConfigError, match=rf"^override .*: its value .* opens a YAML (list|mapping) that does not "
                                          rf"parse \(.*\); close it \(e\.g\. {key}=.*\), or quote the value if it is "
                                          rf"text \({key}=\".*\"\)$"):
        parse_override(text)


def test_closed_quoted_and_plain_values_read_as_before():
    assert parse_override("a=[1, 2]") == (["a"], [1, 2])
    assert parse_override("a={x: 1}") == (["a"], {"x": 1})
    assert parse_override('a="[1, 2"') == (["a"], "[1, 2")
    assert parse_override("a=@x") == (["a"], "@x")
