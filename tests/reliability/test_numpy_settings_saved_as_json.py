"""Issue 30 round 29, W489 and W503: ``LeviathanConfig(generator_modes=np.int64(2))`` was taken (numpy's ints are
integers) but kept the numpy value, so ``to_json_string`` and ``save_pretrained`` ended in json's raw TypeError. The
config stores Python's numbers once they are validated."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.reliability


def test_numpy_numbers_are_stored_as_pythons(tmp_path):
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

    config = LeviathanConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                             num_attention_heads=2, num_key_value_heads=2, embedding="leviathan",
                             generator_modes=np.int64(2), generator_knots=np.int32(16))
    assert type(config.generator_modes) is int and type(config.generator_knots) is int and config.generator_modes == 2
    assert json.loads(config.to_json_string())["generator_modes"] == 2
    LeviathanForCausalLM(config).save_pretrained(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "config.json").read_text())["generator_modes"] == 2
