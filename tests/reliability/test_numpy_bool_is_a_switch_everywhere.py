"""A generator switch follows one rule on every path: True or False, numpy's bool too, never 1 or text (issue 30
round 28: U19, unclear).

``ModelConfig(generator_center=np.bool_(True))`` was refused, "model.generator_center must be true or false, got
np.True_" (a line saying a true value is not true), while ``LeviathanGenerator(center=np.True_)`` and ``adopt`` took
it. Each now asks ``value_rules.switch_problem`` (numpy's bool is a bool in all but type, as numpy's ints are
integers to ModelConfig), and ModelConfig and LeviathanConfig store a plain bool, so config.json holds true or false.
Found beside it: ``config.from_dict``, the reader of a run config's dict, said the same of a dict's np.True_ for any
switch field (``_coerce_bool``), where it takes numpy's ints and floats.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")

from leviathan import CausalLM, LeviathanGenerator, ModelConfig  # noqa: E402
from leviathan.config import ConfigError  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, adopt  # noqa: E402

from test_size_settings_bounded import GEN, SMALL, _llama  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_model_config_takes_numpys_bool_and_stores_a_bool():
    cfg = ModelConfig(**SMALL, generator_center=np.bool_(True), embedding_norm=np.bool_(False))
    assert cfg.generator_center is True and cfg.embedding_norm is False
    assert CausalLM(cfg).model.embed_tokens.center is not None  # built centred
    assert '"generator_center": true' in json.dumps(dataclasses.asdict(cfg))


def test_leviathan_config_writes_true_for_numpys_bool():
    config = LeviathanConfig(**SMALL, generator_center=np.bool_(True))
    assert config.generator_center is True
    assert json.loads(config.to_json_string())["generator_center"] is True


def test_the_generator_and_adopt_take_it_as_model_config_does():
    assert LeviathanGenerator(300, 16, center=np.bool_(True), **GEN).center is not None
    assert adopt(_llama(), center=np.bool_(True), **GEN).config.leviathan_generator["center"] is True


def test_a_run_configs_dict_reads_numpys_bool_as_its_ints():
    from leviathan.config import from_dict
    from leviathan.run_config import RunConfig

    raw = {"max_steps": 3, "data": {"path": "no-data-here", "seq_len": 32},
           "model": {**SMALL, "embedding_norm": np.bool_(True)}}
    assert from_dict(RunConfig, raw).model.embedding_norm is True
    with pytest.raises(ConfigError, match=r"model\.embedding_norm: expected true or false, got np\.int64\(1\)"):
        from_dict(RunConfig, {**raw, "model": {**SMALL, "embedding_norm": np.int64(1)}})


@pytest.mark.parametrize("value", [1, "yes"], ids=["int-1", "text"])
def test_a_number_or_text_is_no_switch_on_any_path(value):
    with pytest.raises(ConfigError, match=rf"model\.generator_center must be true or false, got {value!r}"):
        ModelConfig(**SMALL, generator_center=value)
    with pytest.raises(ValueError, match=rf"center must be true or false, got {value!r}"):
        LeviathanGenerator(300, 16, center=value, **GEN)
    with pytest.raises(UserError, match=rf"center must be true or false, got {value!r}"):
        adopt(_llama(), center=value, **GEN)
