"""Typed records and the JSON they are written as; the tolerant readers of files the package wrote."""

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from leviathan.codec import DROP, decode, encode, extra_keys
from leviathan.errors import UserError
from leviathan.experiments.method.records import Record, inline, optional
from leviathan.experiments.machinery.results import dumps, json_safe
from leviathan.experiments.machinery.sweep_grid import SweepGrid, read_sweep_grid
from leviathan.train.metrics import MetricsRow, read_metric_rows


@dataclass
class Inner(Record):
    a: float
    b: list = field(default_factory=list)


@dataclass
class Outer(Record):
    name: str
    items: list[Inner]
    by_key: dict[str, Inner]
    error: str | None = optional()
    detail: Inner | None = inline()
    last: float | None = None


def test_as_dict_is_the_fields_in_order_with_nested_records():
    o = Outer("x", [Inner(1.0, [1])], {"k": Inner(2.0)})
    assert o.as_dict() == {"name": "x", "items": [{"a": 1.0, "b": [1]}], "by_key": {"k": {"a": 2.0, "b": []}},
                           "last": None}
    assert list(o.as_dict()) == ["name", "items", "by_key", "last"]  # error and detail: None, so no key


def test_optional_and_inline_fields_write_their_keys_only_when_set():
    o = Outer("x", [], {}, error="no curve", detail=Inner(3.0))
    assert list(o.as_dict()) == ["name", "items", "by_key", "error", "a", "b", "last"]  # inline keys in place
    assert o.as_dict()["error"] == "no curve" and o.as_dict()["a"] == 3.0


def test_json_safe_writes_records_as_strict_json():
    o = Outer("x", [Inner(np.float64(math.inf), [np.int64(2), (1, 2)])], {})
    assert json_safe(o) == {"name": "x", "items": [{"a": None, "b": [2, [1, 2]]}], "by_key": {}, "last": None}
    assert json.loads(dumps(o)) == json_safe(o)


def test_decode_keeps_the_fields_and_leaves_the_defaults_to_the_class():
    @dataclass
    class C:
        x: int = 1
        y: str | None = None

    assert decode(C, {"y": "a", "z": 3}, DROP) == C(1, "a")  # the key of another version left out, as asked


def test_null_where_a_record_belongs_is_refused_not_read_as_its_defaults():
    from leviathan.run_config import RunConfig

    @dataclass
    class C:
        inner: Inner = field(default_factory=lambda: Inner(1.0))
        maybe: Inner | None = None

    assert decode(C, {"maybe": None}) == C()  # an optional record may be null
    with pytest.raises(TypeError, match="expected a JSON object for Inner, got null"):
        decode(C, {"inner": None})
    # a results row's config with `model: null` was a RunConfig with the default model (issue 30, round 4)
    with pytest.raises(TypeError, match="expected a JSON object for ModelConfig, got null"):
        decode(RunConfig, {"model": None, "max_steps": 3})


def test_a_record_reads_back_from_its_json_typed():
    o = Outer("x", [Inner(1.0, [1])], {"k": Inner(2.0)}, error="no curve", detail=Inner(3.0, [4]))
    back = Outer.from_dict(json.loads(json.dumps(o.as_dict())))
    assert back == o and isinstance(back.items[0], Inner) and isinstance(back.by_key["k"], Inner)
    assert Outer.from_dict({"name": "y", "items": [], "by_key": {}}).error is None  # an older file: no optional keys


def test_unknown_keys_are_kept_and_written_back_last():
    @dataclass
    class Part:
        loss: float | None = None
        extra: dict = extra_keys()

    part = decode(Part, {"new": 1, "loss": 2})
    assert part == Part(2) and part.extra == {"new": 1} and list(encode(part)) == ["loss", "new"]


def test_a_sweep_grid_reads_old_small_and_missing_files(tmp_path):
    assert read_sweep_grid(tmp_path) == SweepGrid()  # no grid.json: empty
    (tmp_path / "grid.json").write_text(json.dumps({"name": "g", "data_dir": None, "base_overrides": None,
                                                    "runs": [{"name": "a-s0", "model": None, "params": {}}],
                                                    "vocab_size": 7}))
    grid = read_sweep_grid(tmp_path / "results.jsonl")  # a results.jsonl's folder works too
    assert grid.name == "g" and grid.base_overrides == [] and grid.unigram_entropy is None
    assert [(r.name, r.model) for r in grid.runs] == [("a-s0", {})]
    for broken in ("{not json", "[1, 2]", json.dumps({"runs": [{"model": {}}]})):  # the last: a run without a name
        (tmp_path / "grid.json").write_text(broken)
        with pytest.raises(UserError, match="is not a sweep's grid.json"):
            read_sweep_grid(tmp_path)


def test_metric_rows_read_typed(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(
        json.dumps({"step": 1, "tokens": 10, "train_loss": 5.0, "new_key": 1}) + "\n"
        + json.dumps({"step": 2, "tokens": 20, "val_loss": 4.5, "split": "val"}) + "\n{\"torn")
    train, val = read_metric_rows(tmp_path)
    assert train == MetricsRow(step=1, tokens=10, train_loss=5.0)  # an unknown key is ignored
    assert val.val_loss == 4.5 and val.split == "val" and val.train_loss is None
