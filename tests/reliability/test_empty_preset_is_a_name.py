"""An empty preset name is a name the user gave, not 'no preset' (issue 30 round 29, V67).

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
