"""Typed configuration (leviathan.config) and ModelConfig validation messages."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Literal, Optional

import pytest

from leviathan.config import ConfigError, apply_overrides, dump_yaml, from_dict, load_yaml, parse_override, to_dict
from leviathan.io import atomic_write_json, atomic_write_text
from leviathan.errors import UserError
from leviathan.model.config import ModelConfig


@dataclass
class Optim:
    lr: float = 3e-4
    betas: list[float] = field(default_factory=lambda: [0.9, 0.95])
    schedule: Literal["cosine", "linear", "constant"] = "cosine"


@dataclass
class Run:
    name: str = "run"
    steps: int = 10
    seed: Optional[int] = None
    compile: bool = False
    optim: Optim = field(default_factory=Optim)
    model: ModelConfig = field(default_factory=ModelConfig)


def test_config_error_is_a_user_error_and_a_value_error():
    assert issubclass(ConfigError, UserError) and issubclass(ConfigError, ValueError)


# ---------------------------------------------------------------------------------------------
# keys


def test_unknown_key_suggests_the_closest():
    with pytest.raises(ConfigError, match=r"unknown key 'hiden_size' in ModelConfig; did you mean 'hidden_size'\?"):
        from_dict(ModelConfig, {"hiden_size": 64})


def test_unknown_nested_key_names_the_full_path():
    with pytest.raises(ConfigError, match=r"unknown key 'optim\.lrr' in Optim; did you mean 'optim\.lr'\?"):
        from_dict(Run, {"optim": {"lrr": 0.1}})
    with pytest.raises(ConfigError, match=r"'model\.num_hiden_layers'.*did you mean 'model\.num_hidden_layers'"):
        from_dict(Run, {"model": {"num_hiden_layers": 3}})


def test_unknown_key_without_a_close_match_lists_valid_keys():
    with pytest.raises(ConfigError, match=r"unknown key 'zzz' in Optim; valid keys: betas, lr, schedule"):
        from_dict(Optim, {"zzz": 1})


# ---------------------------------------------------------------------------------------------
# types


@pytest.mark.parametrize("key,value,expected", [
    ("steps", "abc", r"steps: expected an integer, got 'abc'"),
    ("steps", 2.5, r"steps: expected an integer, got 2\.5"),
    ("steps", True, r"steps: expected an integer, got True"),  # bool is an int subclass: rejected
    ("compile", "maybe", r"compile: expected true or false, got 'maybe'"),
    ("compile", 3, r"compile: expected true or false, got 3"),
    ("name", ["a"], r"name: expected a string"),
    ("optim", 5, r"optim: expected a section of keys for Optim, got 5"),
])
def test_wrong_types_are_rejected_with_the_key(key, value, expected):
    with pytest.raises(ConfigError, match=expected):
        from_dict(Run, {key: value})


def test_nested_wrong_type_names_the_dotted_key():
    with pytest.raises(ConfigError, match=r"optim\.lr: expected a number, got 'fast'"):
        from_dict(Run, {"optim": {"lr": "fast"}})
    with pytest.raises(ConfigError, match=r"optim\.betas\[1\]: expected a number"):
        from_dict(Run, {"optim": {"betas": [0.9, "x"]}})


@pytest.mark.parametrize("field_name", ["hidden_size", "num_hidden_layers", "generator_rank"])
def test_bool_as_int_rejected_for_model_sizes(field_name):
    with pytest.raises(ConfigError, match=field_name):
        from_dict(ModelConfig, {field_name: True})
    with pytest.raises(ConfigError, match=field_name):
        ModelConfig(**{field_name: True})


def test_bool_for_optional_int_rejected_through_from_dict():
    with pytest.raises(ConfigError, match="intermediate_size: expected an integer, got True"):
        from_dict(ModelConfig, {"intermediate_size": True})
    with pytest.raises(ConfigError, match="rope_theta: expected a number, got True"):
        from_dict(ModelConfig, {"rope_theta": True})


def test_direct_construction_rejects_bool_for_optional_sizes():
    with pytest.raises(ConfigError, match="intermediate_size"):
        ModelConfig(intermediate_size=True)


@pytest.mark.parametrize("text,expected", [("1e-3", 1e-3), ("3", 3.0), (2, 2.0), ("-0.5", -0.5)])
def test_numbers_as_strings_are_converted(text, expected):
    value = from_dict(Optim, {"lr": text}).lr
    assert isinstance(value, float) and value == expected


@pytest.mark.parametrize("text,expected", [("1_000", 1000), ("12", 12), (7.0, 7), ("1e3", 1000)])
def test_integers_from_strings_and_integral_floats(text, expected):
    value = from_dict(Run, {"steps": text}).steps
    assert type(value) is int and value == expected


@pytest.mark.parametrize("text,expected", [("true", True), ("no", False), ("1", True), ("off", False),
                                           (False, False)])
def test_bool_spellings(text, expected):
    assert from_dict(Run, {"compile": text}).compile is expected


@pytest.mark.parametrize("value", [None, "null", "none", "None"])
def test_optional_accepts_null(value):
    assert from_dict(Run, {"seed": value}).seed is None
    assert from_dict(ModelConfig, {"head_dim": value}).head_dim is None


def test_optional_keeps_a_value_and_checks_its_type():
    assert from_dict(Run, {"seed": "42"}).seed == 42
    with pytest.raises(ConfigError, match="seed: expected an integer, got 'x'"):
        from_dict(Run, {"seed": "x"})


def test_literal_choices():
    assert from_dict(Optim, {"schedule": "linear"}).schedule == "linear"
    with pytest.raises(ConfigError, match=r"schedule: 'cosin' is not one of 'cosine', 'linear', 'constant'; "
                                          r"did you mean 'cosine'\?"):
        from_dict(Optim, {"schedule": "cosin"})
    with pytest.raises(ConfigError, match=r"model\.embedding: 'levithan' is not one of .*did you mean 'leviathan'"):
        from_dict(Run, {"model": {"embedding": "levithan"}})


def test_lists_from_comma_strings():
    assert from_dict(Optim, {"betas": "0.8, 0.9"}).betas == [0.8, 0.9]


def test_nested_dataclass_and_round_trip():
    run = from_dict(Run, {"name": "x", "optim": {"lr": "1e-2", "schedule": "constant"},
                          "model": {"hidden_size": 64, "num_attention_heads": 4, "embedding": "dense_tied"}})
    assert isinstance(run.optim, Optim) and run.optim.lr == 0.01 and run.optim.schedule == "constant"
    assert isinstance(run.model, ModelConfig) and run.model.hidden_size == 64
    assert run.model.num_hidden_layers == ModelConfig().num_hidden_layers  # defaults fill the rest
    data = to_dict(run)
    assert data["model"]["embedding"] == "dense_tied" and data["optim"]["betas"] == [0.9, 0.95]
    json.dumps(data)  # plain values only
    assert from_dict(Run, data) == run


def test_dataclass_post_init_errors_get_the_section_prefix():
    with pytest.raises(ConfigError, match=r"^model\.hidden_size \(30\) must be divisible"):
        from_dict(Run, {"model": {"hidden_size": 30, "num_attention_heads": 4}})


# ---------------------------------------------------------------------------------------------
# dotted overrides and files


def test_parse_override_values_are_yaml():
    assert parse_override("model.hidden_size=256") == (["model", "hidden_size"], 256)
    assert parse_override("--optim.lr=0.5") == (["optim", "lr"], 0.5)
    assert parse_override("seed=null") == (["seed"], None)
    assert parse_override("compile=true") == (["compile"], True)
    assert parse_override("optim.betas=[0.8, 0.99]") == (["optim", "betas"], [0.8, 0.99])
    assert parse_override("name=a=b") == (["name"], "a=b")
    assert parse_override("name=") == (["name"], "")


@pytest.mark.parametrize("bad,message", [("model.hidden_size", "must look like key=value"),
                                         ("=3", "empty key")])
def test_malformed_overrides(bad, message):
    with pytest.raises(ConfigError, match=message):
        parse_override(bad)


def test_overrides_build_nested_config():
    data = {"optim": {"lr": 0.1}}
    out = apply_overrides(data, ["model.hidden_size=64", "model.num_attention_heads=4", "model.rms_norm_eps=1e-5",
                                 "model.head_dim=null", "model.embedding=dense_untied", "optim.schedule=linear",
                                 "steps=1_000", "compile=yes"])
    assert out is data and data["optim"] == {"lr": 0.1, "schedule": "linear"}
    assert data["model"]["rms_norm_eps"] == "1e-5"  # YAML 1.1 reads this as a string ...
    run = from_dict(Run, data)
    assert run.model.rms_norm_eps == 1e-5  # ... and the typed layer converts it
    assert run.model.head_dim is None and run.model.embedding == "dense_untied"
    assert run.steps == 1000 and run.compile is True and run.optim.lr == 0.1


def test_override_into_a_value_is_refused():
    with pytest.raises(ConfigError, match="'steps' is the value 3, set by the config file or an earlier override, not a section"):
        apply_overrides({"steps": 3}, ["steps.x=1"])


def test_yaml_round_trip(tmp_path):
    run = from_dict(Run, {"seed": 3, "model": {"hidden_size": 96, "num_attention_heads": 6}})
    path = tmp_path / "run.yaml"
    text = dump_yaml(run, path)
    assert path.read_text() == text
    assert from_dict(Run, load_yaml(path)) == run
    assert sorted(os.listdir(tmp_path)) == ["run.yaml"]


def test_load_yaml_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_yaml(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="holds a list at the top level, not settings"):
        load_yaml(tmp_path / "list.yaml")
    (tmp_path / "bad.yaml").write_text("a: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_yaml(tmp_path / "bad.yaml")
    for text in ("", "# only a comment\n", "\n\n"):  # read as the defaults before (issue 30 round 5)
        (tmp_path / "empty.yaml").write_text(text)
        with pytest.raises(ConfigError, match="is empty"):
            load_yaml(tmp_path / "empty.yaml")


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "state.json"
    atomic_write_text(path, "first")
    atomic_write_text(path, "second, longer")
    assert path.read_text() == "second, longer"
    atomic_write_json(tmp_path / "m.json", {"a": [1, 2], "b": None})
    assert json.loads((tmp_path / "m.json").read_text()) == {"a": [1, 2], "b": None}
    assert sorted(os.listdir(tmp_path)) == ["m.json", "state.json"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "state.txt"
    atomic_write_text(path, "old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    monkeypatch.undo()
    assert path.read_text() == "old"  # readers never see a partial or new-but-unfinished file


# ---------------------------------------------------------------------------------------------
# ModelConfig validation


@pytest.mark.parametrize("kwargs,message", [
    (dict(hidden_size=0), r"model\.hidden_size must be a positive integer, got 0"),
    (dict(num_hidden_layers=-2), r"model\.num_hidden_layers must be a positive integer, got -2"),
    (dict(vocab_size=0), r"model\.vocab_size must be a positive integer"),
    (dict(generator_modes=0), r"model\.generator_modes must be a positive integer"),
    (dict(hidden_size=64.0), r"model\.hidden_size must be a positive integer, got 64\.0"),
    (dict(intermediate_size=0), r"model\.intermediate_size must be a positive integer or null, got 0"),
    (dict(num_key_value_heads=-1), r"model\.num_key_value_heads must be a positive integer or null"),
    (dict(hidden_size=100, num_attention_heads=3),
     r"model\.hidden_size \(100\) must be divisible by model\.num_attention_heads \(3\); .*model\.head_dim"),
    (dict(num_attention_heads=8, num_key_value_heads=3), r"must be a multiple of model\.num_key_value_heads \(3\)"),
    (dict(hidden_size=24, num_attention_heads=8), r"head dimension 3 must be even"),
    (dict(generator_knots=1), r"generator_knots must be a whole number, at least 2, got 1"),
    (dict(generator_degree=4), r"generator_degree must be the whole number 1, 2 or 3"),
    (dict(generator_knots=8.0), r"generator_knots must be a whole number, at least 2, got 8\.0"),  # round 21, P59
    (dict(generator_knots=True), r"generator_knots must be a whole number, at least 2, got True"),
    (dict(generator_degree=2.0), r"generator_degree must be the whole number 1, 2 or 3 \(paper: 2\), got 2\.0"),
    (dict(embedding="sparse"), r"model\.embedding must be one of"),
    (dict(rms_norm_eps=0.0), r"model\.rms_norm_eps must be a positive number, got 0\.0"),
    (dict(generator_ln_eps=-1e-5), r"model\.generator_ln_eps must be a positive number"),
    (dict(rope_theta=0), r"model\.rope_theta must be a positive number, got 0"),
    (dict(initializer_range=True), r"model\.initializer_range must be a positive number, got True"),
    (dict(rms_norm_eps="1e-6"), r"model\.rms_norm_eps must be a positive number, got '1e-6'"),
    (dict(generator_base=1), r"generator_base must be at least 2"),
    (dict(vocab_size=1001, generator_base=10),
     r"generator_base=10 with generator_k=3 addresses 1000 ids, fewer than vocab_size=1001"),
])
def test_model_config_validation_messages(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        ModelConfig(**kwargs)


def test_model_config_accepts_edge_values():
    ModelConfig(vocab_size=1000, generator_base=10)  # exactly b^k
    ModelConfig(hidden_size=100, num_attention_heads=3, head_dim=32)  # explicit head_dim lifts divisibility
    ModelConfig(vocab_size=1001, generator_base=10, embedding="dense_untied")  # digits unused: no base check


def test_resolved_config_makes_defaults_explicit():
    cfg = ModelConfig(vocab_size=200_019, hidden_size=512, num_attention_heads=8).resolved()
    assert (cfg.intermediate_size, cfg.num_key_value_heads, cfg.head_dim, cfg.generator_base) == (1408, 8, 64, 59)
    assert cfg.id_capacity == 59**3
    assert ModelConfig(embedding="dense_tied").resolved().generator_base is None
    assert ModelConfig(embedding="dense_tied").id_capacity == 200_019


def test_with_vocab_size_keeps_the_base():
    cfg = ModelConfig(vocab_size=1000)  # b = 10 exactly
    grown = ModelConfig(vocab_size=1000, generator_base=11).with_vocab_size(1200)
    assert grown.base == 11 and grown.vocab_size == 1200
    with pytest.raises(ConfigError, match="capacity"):
        cfg.with_vocab_size(1001)
    assert ModelConfig(vocab_size=120).with_vocab_size(125).base == 5
    # the stored base wins over the one the new size would suggest (min_base(10, 3) is 3)
    shrunk = ModelConfig(vocab_size=100).with_vocab_size(10)
    assert shrunk.generator_base == 5 and shrunk.base == 5


# ---------------------------------------------------------------------------------------------
# retired keys: configs written by older versions still load


def old_model_dict() -> dict:
    """A model section as older versions wrote it into config.yaml (with ``generator_chunk_size``)."""
    return {**to_dict(ModelConfig(vocab_size=300, hidden_size=64, num_attention_heads=4).resolved()),
            "generator_chunk_size": 256}


def test_retired_model_key_is_dropped_with_a_warning():
    old = old_model_dict()
    with pytest.warns(UserWarning, match=r"ignoring 'model\.generator_chunk_size' \(written by an older leviathan\)"):
        cfg = from_dict(ModelConfig, old, prefix="model.")
    assert not hasattr(cfg, "generator_chunk_size") and "generator_chunk_size" not in to_dict(cfg)
    assert cfg == from_dict(ModelConfig, {k: v for k, v in old.items() if k != "generator_chunk_size"})
    with pytest.raises(TypeError):  # no longer a field: the constructor refuses it outright
        ModelConfig(generator_chunk_size=256)


def test_old_run_folder_config_with_the_retired_key_loads(tmp_path):
    from leviathan.checkpoint import run_config_from_dict
    from leviathan.run_config import DataConfig, RunConfig

    old = {**to_dict(RunConfig(max_steps=10, data=DataConfig(path=str(tmp_path)))), "model": old_model_dict()}
    (tmp_path / "config.yaml").write_text(dump_yaml(old))
    with pytest.warns(UserWarning, match="generator_chunk_size"):
        cfg = run_config_from_dict(load_yaml(tmp_path / "config.yaml"))
    assert cfg.model.hidden_size == 64 and cfg.model.vocab_size == 300
    assert "generator_chunk_size" not in dump_yaml(cfg)  # a resumed run writes the key no more


def test_old_hf_config_with_the_retired_key_loads():
    from leviathan.hf.configuration import LeviathanConfig

    with pytest.warns(UserWarning, match="generator_chunk_size"):
        hf = LeviathanConfig(**old_model_dict())
    assert "generator_chunk_size" not in hf.to_dict()
    assert hf.to_model_config() == from_dict(ModelConfig, {k: v for k, v in old_model_dict().items()
                                                            if k != "generator_chunk_size"})


# ---------------------------------------------------------------------------------------------
# packaged configs (leviathan.configs): names, project-local precedence, old paths


def test_packaged_train_configs_and_grids_are_found_by_name(tmp_path, monkeypatch):
    from leviathan import configs

    monkeypatch.chdir(tmp_path)  # a folder with no configs/ of its own
    assert {"tiny", "cpu-small", "paper-109m"} <= set(configs.packaged_names(configs.TRAIN))
    assert {"cpu", "paper", "smoke"} <= set(configs.packaged_names(configs.GRIDS))
    tiny = configs.find_train_config("tiny")
    assert tiny.is_file() and tiny.parent.name == "configs" and tiny.parent.parent.name == "leviathan"
    assert "preset: cpu-tiny" in tiny.read_text()
    cpu = configs.find_grid_file("cpu")
    assert cpu.name == "cpu.yaml" and cpu.parent.name == "experiments" and cpu.parent.parent == tiny.parent
    # the paths a source checkout used to have fall back to the packaged files of the same name
    assert configs.find_train_config("configs/tiny.yaml") == tiny
    assert configs.find_grid_file("configs/experiments/cpu.yaml") == cpu


def test_project_local_configs_take_precedence(tmp_path, monkeypatch):
    from leviathan import configs

    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs" / "experiments").mkdir(parents=True)
    (tmp_path / "configs" / "tiny.yaml").write_text("max_steps: 3\n")
    (tmp_path / "configs" / "experiments" / "cpu.yaml").write_text("name: mine\n")
    (tmp_path / "configs" / "experiments" / "mine.yaml").write_text("name: mine\n")
    assert configs.find_train_config("tiny") == tmp_path / "configs" / "tiny.yaml"
    assert configs.find_grid_file("cpu") == tmp_path / "configs" / "experiments" / "cpu.yaml"
    assert configs.find_train_config("configs/tiny.yaml").resolve() == (tmp_path / "configs" / "tiny.yaml")
    assert {"mine", "cpu", "paper"} <= set(configs.available(configs.GRIDS))
    own = tmp_path / "elsewhere.yaml"
    own.write_text("max_steps: 1\n")
    assert configs.find_train_config(own) == own  # an existing path is used as given


def test_unknown_config_names_list_the_choices(tmp_path, monkeypatch):
    from leviathan import configs

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"unknown config 'tinyy'; available: .*tiny"):
        configs.find_train_config("tinyy")
    with pytest.raises(ConfigError, match=r"config file 'configs/nope.yaml' does not exist; .*paper-109m"):
        configs.find_train_config("configs/nope.yaml")
    with pytest.raises(ConfigError, match=r"unknown grid 'nope'; available: .*smoke"):
        configs.find_grid_file("nope")
    (tmp_path / "adir").mkdir()
    with pytest.raises(ConfigError, match="is not a file"):
        configs.find_train_config(tmp_path / "adir")
