"""An empty value of an option that takes a name is refused as what the option takes (issue 30 round 29, V67, V7).

V7: ``bench --config ''`` was called "an empty path" whose fix was '.', which bench then refused as an unknown
config: bench's --config is a list of configuration names (its own line lists them); train's --config and prepare's
--tokenizer take a name or a path, and their empty-value line now says so (``empty_paths.NAME_OR_PATH``).

V67: an empty preset name is a name the user gave, not 'no preset'.

``params --preset ''`` (an unset shell variable) printed the default model's table, exit 0, while ``demo --preset ''``
refused the same value; ``model.preset=''`` in train and params was read as no preset too. Every verb now refuses it
with the setting named and the presets listed (``presets.preset_dict_named``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402


@pytest.mark.parametrize("argv, setting", [
    (["params", "--preset", ""], "--preset"),
    (["params", "model.preset="], "model.preset"),
    (["train", "--config", "tiny", "model.preset=", "--print-config"], "model.preset"),
    (["demo", "--preset", "", "--steps", "1"], "--preset"),
])
def test_empty_preset_refused_naming_the_setting(argv, setting, tmp_path):
    err = cli_error(argv, cwd=tmp_path)
    assert err.startswith(f"error: {setting}: unknown preset ''"), err
    assert "cpu-tiny" in err and "give one of them" in err


@pytest.mark.parametrize("argv, takes", [
    (["bench", "--quick", "--only", "generator", "--config", ""], "configuration names (of cpu, paper, tiny"),
    (["train", "--config", ""], "a packaged configuration's name (tiny"),
    (["prepare", "corpus", "--out", "d", "--tokenizer", ""], "a built-in tokenizer's name (o200k_base"),
])
def test_empty_name_or_path_says_what_the_option_takes(argv, takes, tmp_path):
    err = cli_error(argv, cwd=tmp_path)
    assert err.startswith(f"error: {argv[-2]} is empty"), err
    assert takes in err and "'.'" not in err and "current folder" not in err, err
