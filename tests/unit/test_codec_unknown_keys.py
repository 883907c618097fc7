"""``codec.decode`` refuses a key that a record without an ``extra`` field does not know (issue 30 round 27, S532).

``decode(ModelConfig, {'vocab_size': 300, 'hidden_size': 32, 'extra': 1})`` returned a ModelConfig and dropped the
key without a word, while every config file and override refuses an unknown key. Now one ``ArgumentValueError``
line names the key and the record (with the nearest field where one is close); the readers that mean to drop a key
another version wrote say so (``unknown=DROP``) and still read such files: a results row's config as a RunConfig,
grid.json, metrics.jsonl and the analysis records. A record with ``extra`` keeps the key as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from leviathan import ModelConfig
from leviathan.codec import DROP, decode, extra_keys
from leviathan.errors import ArgumentValueError, UserError


def test_an_unknown_key_of_a_config_is_refused_in_one_line():
    with pytest.raises(ArgumentValueError) as info:
        decode(ModelConfig, {"vocab_size": 300, "hidden_size": 32, "extra": 1})
    said = str(info.value)
    assert said.startswith("decode: unknown key 'extra' in ModelConfig; remove it, or pass unknown='drop'"), said
    assert "\n" not in said and isinstance(info.value, (UserError, ValueError))


def test_a_misspelt_key_is_named_with_the_field_it_is_near_at_any_depth():
    from leviathan.run_config import RunConfig

    with pytest.raises(ArgumentValueError, match=r"'hiden_size' in ModelConfig \(did you mean 'hidden_size'\?\)"):
        decode(RunConfig, {"model": {"vocab_size": 300, "hiden_size": 32}})
    assert decode(ModelConfig, {"vocab_size": 300, "extra": 1}, DROP).vocab_size == 300


def test_a_record_with_extra_keeps_the_key_and_unknown_takes_two_words():
    @dataclass
    class Part:
        loss: float | None = None
        extra: dict = extra_keys()

    assert decode(Part, {"new": 1, "loss": 2}).extra == {"new": 1}
    with pytest.raises(ArgumentValueError, match="unknown must be 'refuse' or 'drop'"):
        decode(Part, {}, "keep")


def test_the_readers_of_files_another_version_wrote_still_drop_their_keys(tmp_path):
    from leviathan.experiments.machinery.sweep_grid import SweepGrid
    from leviathan.train.metrics import read_metric_rows

    assert SweepGrid.from_dict({"name": "g", "runs": [], "retired": 1}).name == "g"
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": 1, "tokens": 8, "train_loss": 2.0, "new": 3}) + "\n")
    assert [r.step for r in read_metric_rows(tmp_path / "metrics.jsonl")] == [1]
