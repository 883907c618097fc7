"""Config files are read strictly (issue 30, kind 5): a key given twice, or a section of the wrong shape, is one
error naming the file, the line or the key, and what to do; never a value read as something else.

A YAML mapping with a repeated key used to keep the last value silently (``max_steps: 4`` then ``max_steps: 8``
trained 8 steps; a second ``optim:`` section dropped every key of the first). Grid sections of the wrong shape
(``seeds: 3``, ``sizes: [a, b]``) ended in tracebacks, and a misspelt key inside a section was ignored.
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import pytest
import yaml

from leviathan.config import ConfigError, load_yaml
from leviathan.experiments.machinery.grid import load_grid

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, run_overrides  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_key_given_twice_in_a_run_config_names_both_lines(data, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("optim:\n  lr: 0.01\n  eps: 1.0e-8\nmax_steps: 4\noptim:\n  weight_decay: 0.0\n")
    line = cli_error(["train", "--config", config, *run_overrides(data), "--run-dir", tmp_path / "run"])
    assert f"config file '{config}' line 5: key 'optim' is given twice (first on line 1)" in line
    assert "delete one of them" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text, key, line", [
    ("max_steps: 4\nseed: 1\nmax_steps: 8\n", "max_steps", 3),
    ("model:\n  preset: cpu-tiny\n  hidden_size: 64\n  hidden_size: 32\n", "hidden_size", 4),
    ("data: {seq_len: 32, seq_len: 64}\n", "seq_len", 1),
], ids=["top-level", "nested", "flow-mapping"])
def test_repeated_keys_are_refused_with_their_line(tmp_path, text, key, line):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"line {line}: key '{key}' is given twice"):
        load_yaml(path)


def test_a_merge_key_is_not_a_repeat(tmp_path):
    """``<<: *base`` followed by an explicit key overrides the merged value, as YAML specifies."""
    path = tmp_path / "c.yaml"
    path.write_text("base: &b {lr: 1, eps: 2}\noptim:\n  <<: *b\n  lr: 3\n")
    assert load_yaml(path)["optim"] == {"lr": 3, "eps": 2}


@pytest.mark.parametrize("text, said", [
    ("<<: [{max_steps: 2}, {max_steps: 5}]\n", "line 1: key 'max_steps' is given twice by two maps of one merge list"),
    ("a: &a {max_steps: 2}\nb: &b {max_steps: 5}\nc:\n  <<: [*a, *b]\n",
     "line 2: key 'max_steps' is given twice by two maps of one merge list ('<<: [...]'), which keeps one of them "
     "(first on line 1)"),
    ("<<: {max_steps: 2}\n<<: {max_steps: 5}\n", "line 2: key '<<' is given twice (the merge key: "),
    ("max_steps: 2\noptim:\n  <<: {<<: [{lr: 0.1}, {lr: 0.2}]}\n",  # round 32, AB41: inside a merged map
     "line 3: key 'lr' is given twice by two maps of one merge list"),
    ("optim:\n  <<: [{<<: {lr: 0.1}}, {lr: 0.2}]\n", "line 2: key 'lr' is given twice by two maps of one merge"),
], ids=["merge-list", "merge-list-of-aliases", "merge-key-twice", "merge-list-in-a-merged-map",
        "merge-list-map-merging-its-key"])
def test_a_key_given_twice_through_merges_is_refused(tmp_path, text, said):
    """Round 31 (Z54, Z55): one setting given by two maps of one merge list, or the merge key '<<' given twice in one
    mapping, kept one value without a word (max_steps 5, where YAML's merge rule names the first map's 2), while
    every other key given twice is refused. A key the mapping gives itself beside the merge still overrides."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(said)):
        load_yaml(path)
    path.write_text("a: &a {lr: 1, eps: 2}\nb: &b {lr: 3}\noptim:\n  <<: [*a, *b]\n  lr: 4\n")
    assert load_yaml(path)["optim"] == {"lr": 4, "eps": 2}


def test_a_merge_list_in_an_override_value(capsys, data, tmp_path):
    """Z54's kind in a ``key=value`` override."""
    from leviathan.cli import main

    assert main(["train", *run_overrides(data), "optim={<<: [{lr: 1}, {lr: 2}]}", "--print-config"]) == 2
    assert "key 'lr' is given twice by two maps of one merge list" in capsys.readouterr().err


def test_a_repeated_key_in_an_override_value(capsys, data, tmp_path):
    from leviathan.cli import main

    code = main(["train", *run_overrides(data), "optim={lr: 1, lr: 2}", "--run-dir", str(tmp_path / "r")])
    assert code == 2
    assert "override 'optim={lr: 1, lr: 2}': key 'lr' is given twice" in capsys.readouterr().err


def test_a_grid_file_with_a_repeated_key(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text("name: g\nseeds: [0]\nsizes: {a: cpu-tiny}\nseeds: [1]\n")
    line = cli_error(["sweep", "--grid", grid, "--list"])
    assert f"'{grid}' line 4: key 'seeds' is given twice (first on line 2)" in line


SMALL = {"name": "g", "data": {"dir": "/nonexistent", "vocab_size": 300}, "seeds": [0],
         "sizes": {"a": "cpu-tiny", "b": "cpu-mini", "c": "cpu-small"},
         "experiments": {"iso_body": {"variants": ["dense_tied", "leviathan"], "sizes": ["a"]}}}


@pytest.mark.parametrize("key, value, message", [
    ("seeds", 3, "seeds: expected a list of seeds such as [0, 1, 2], got 3"),
    ("seeds", "0,1", "seeds: expected a list of seeds"),
    ("seeds", [-1], "seeds[0]: a seed must be an integer in [0, 4294967295]"),
    ("seeds", [2**40], "seeds[0]: a seed must be an integer in [0, 4294967295]"),
    ("data_seed", -3, "data_seed: a seed must be an integer in [0, 4294967295]"),
    ("tolerance", float("nan"), "tolerance: expected a number in (0, 1)"),
    ("sizes", ["a", "b"], "sizes: expected a mapping of keys"),
    ("experiments", ["iso_body"], "experiments: expected a mapping of keys"),
    ("experiments", {"iso_body": ["a"]}, "experiments.iso_body: expected a mapping of keys"),
    ("experiments", {"iso_body": {"variants": ["leviathan"], "size": ["a"]}},
     "unknown key 'experiments.iso_body.size' in ExperimentSpec; did you mean 'experiments.iso_body.sizes'?"),
    ("data", ["x"], "data: expected a mapping of keys"),
    ("data", {"dir": "/x", "vocab": 5}, "unknown key 'data.vocab' in DataSection; did you mean 'data.vocab_size'?"),
    ("keys", {"sed": "seed"}, "unknown key 'keys.sed' in GridKeys; did you mean 'keys.seed'?"),
    ("eval", ["val"], "eval: expected a mapping of keys"),
    ("eval", {"sets": ["val"]}, "eval.sets: expected a mapping of keys"),
    ("eval", {"sets": {"val": {"split": "val", "optinal": True}}}, "unknown key 'eval.sets.val.optinal'"),
    ("eval", {"sets": {"w": {"text": "w.txt", "optional": 2}}}, "eval.sets.w.optional: expected true or false"),
    ("eval", {"buckets": "five"}, "eval.buckets: expected an integer, got 'five'"),
    ("eval", {"max_tokens": -5}, "eval.max_tokens must be a positive integer or null, got -5"),
    ("eval", {"batch_size": 0}, "eval.batch_size must be a positive integer, got 0"),
    ("eval", {"buckets": 10**9}, "eval.buckets must be between 2 and 1000 (each bucket averages a share of the "
                                 "training tokens), got 1,000,000,000"),
    ("eval", {"bucket_method": "foo"}, "eval.bucket_method: 'foo' is not one of 'mass', 'log'"),
], ids=lambda v: str(v)[:24])
def test_grid_sections_of_the_wrong_shape_or_type(key, value, message):
    grid = copy.deepcopy(SMALL)
    grid[key] = value
    with pytest.raises(ConfigError) as info:
        load_grid(grid)
    assert message in str(info.value)


def test_a_grid_section_of_the_wrong_shape_through_the_cli(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text(yaml.safe_dump({**SMALL, "sizes": ["a", "b"]}))
    assert "sizes: expected a mapping of keys (key: value lines), got ['a', 'b']" in cli_error(
        ["sweep", "--grid", grid, "--list"])


def test_a_key_given_twice_in_a_sweeps_overrides(capsys, data):
    """``sweep`` layers the user's overrides over the grid's: one key typed twice there is a mistake. (``train`` takes
    repeated keys, last wins: the lines ``sweep --commands`` prints layer a grid's settings that way.)"""
    from leviathan.cli import main

    argv = ["sweep", "--grid", "smoke", "--data-dir", str(data), "--list"]
    assert main([*argv, "optim.eps=1e-8", "optim.eps=1e-6"]) == 2
    assert "optim.eps is given twice on the command line ('optim.eps=1e-8' and 'optim.eps=1e-6')" in \
        capsys.readouterr().err


# Round 5: YAML 1.1 numbers that read otherwise than they look, and files that hold nothing. ``seed=017`` trained
# with seed 15, ``seeds: [010]`` made run s8, ``max_steps=1:30`` trained 90 steps, and an empty or comment-only
# config or grid file was read as the defaults; all without a word.
@pytest.mark.parametrize("override, shown", [
    ("seed=017", "'017' reads as 15 (YAML 1.1 reads a number with a leading zero as octal); write 17"),
    ("max_steps=1:30", "'1:30' reads as 90 (YAML 1.1 reads numbers with colons in base 60)"),
    ("optim.lr=-0:30.5", "reads as -30.5"),
    ("optim.lr=0x10", "'0x10' reads as 16 (YAML reads 0x... as a number in base 16)"),  # round 14 (B309)
    ("seed=0b101", "'0b101' reads as 5 (YAML reads 0b... as a number in base 2)"),
], ids=["octal", "base-60", "base-60-float", "hex", "binary"])
def test_a_number_yaml_reads_otherwise_is_refused(override, shown):
    from reliability_support import cli_error

    line = cli_error(["train", "max_steps=2", override, "--print-config"])
    assert f"override {override!r}: " in line and shown in line


# Round 8 (Y2, Y3, Y9, V8): words YAML 1.1 reads as booleans, and dates, reached the type check as True / False /
# datetime.date: "device: expected a string, got True" never named the `on` the user wrote. The words now read as
# words (YAML 1.2), a switch still takes them (compile=yes); a date is refused where it is written.
@pytest.mark.parametrize("text, shown", [
    ("device: on\nmax_steps: 2\n", "device must be auto, cpu, cuda or cuda:N (N a GPU's index, e.g. cuda:0), got 'on'"),
    ("max_steps: 4\ndtype: no\n", "dtype: 'no' is not one of 'auto', 'float32', 'bfloat16'"),
    ("max_steps: off\n", "max_steps: expected an integer, got 'off'"),
    ("seed: 2024-01-01\n", "line 1: '2024-01-01' reads as a date (YAML reads a date or a time as a timestamp); no "
                           "setting takes a date: quote it if it is text"),
], ids=["on", "no", "off", "date"])
def test_a_word_yaml_reads_as_a_boolean_or_a_date_is_named(capsys, data, tmp_path, text, shown):
    from leviathan.cli import main
    from reliability_support import one_error

    config = tmp_path / "run.yaml"
    config.write_text(text)
    assert main(["train", "--config", str(config), f"data.path={data}", "--run-dir", str(tmp_path / "run")]) == 2
    assert shown in one_error(capsys.readouterr().err)
    assert not (tmp_path / "run").exists()


def test_a_word_boolean_still_sets_a_switch(capsys, data):
    from leviathan.cli import main

    assert main(["train", "max_steps=2", f"data.path={data}", "compile=yes", "--print-config"]) == 0
    assert "compile: true" in capsys.readouterr().out


def test_a_number_yaml_reads_otherwise_in_a_grid_names_its_line(data, tmp_path):
    from reliability_support import cli_error

    grid = tmp_path / "grid.yaml"
    grid.write_text(f"name: g\ndata: {{dir: {data}}}\nseeds: [0, 010]\nsizes: {{a: {{preset: cpu-tiny}}}}\n"
                    f"experiments: {{iso_body: {{variants: [dense_tied], sizes: [a]}}}}\n")
    line = cli_error(["sweep", "--grid", grid, "--list"])
    assert f"config file '{grid}' line 3: '010' reads as 8" in line


@pytest.mark.parametrize("text", ["", "# settings to come\n", "\n\n"], ids=["empty", "comment", "blank"])
def test_an_empty_config_or_grid_file_is_refused(tmp_path, text):
    from reliability_support import cli_error

    path = tmp_path / "run.yaml"
    path.write_text(text)
    assert f"config file '{path}' is empty" in cli_error(["train", "--config", path, "max_steps=2", "--print-config"])
    assert f"config file '{path}' is empty" in cli_error(["sweep", "--grid", path, "--list"])


@pytest.mark.parametrize("nested", [
    "model:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(3000)) + "  " * 3001 + "x: 1\n",
    "model: " + "[" * 5000 + "]" * 5000 + "\n",
], ids=["block-mappings", "flow-lists"])
def test_a_config_nested_too_deeply_is_one_line(tmp_path, nested):
    """Round 6: a config nested a few thousand levels deep ended in PyYAML's RecursionError traceback (the config, a
    grid and an override all read YAML through ``strict_yaml.parse``)."""
    path = tmp_path / "run.yaml"
    path.write_text(nested)
    line = cli_error(["train", "--config", path, "--print-config"])
    assert f"config file '{path}': its mappings or lists are nested too deeply to read" in line
    assert "write it flatter" in line
    line = cli_error(["sweep", "--grid", path, "--list"])
    assert f"config file '{path}': its mappings or lists are nested too deeply to read" in line
    line = cli_error(["train", "model=" + "[" * 5000 + "]" * 5000, "--print-config"])
    assert "override 'model=[[[[" in line and "nested too deeply to read" in line


def test_a_key_yaml_reads_as_a_number_is_named(data, tmp_path):
    """Round 6: a config or grid key YAML reads as a number (``1: 2``) ended in a TypeError traceback from the
    closest-name hint; it is an unknown key like any other (grid sizes may still be named by numbers)."""
    config = tmp_path / "run.yaml"
    config.write_text("max_steps: 1\n1: 2\n")
    line = cli_error(["train", "--config", config, f"data.path={data}", "--print-config"])
    assert "unknown key '1' in RunConfig; valid keys: batch_tokens" in line
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"name: g\ndata: {{dir: {data}}}\nseeds: [0]\n1: 2\nsizes: {{64: {{preset: cpu-tiny}}}}\n"
                    f"experiments: {{iso_body: {{variants: [dense_tied], sizes: [64]}}}}\n")
    assert "unknown key 1 in grid g; valid keys: ablations" in cli_error(["sweep", "--grid", grid, "--list"])


@pytest.mark.parametrize("where, name", [("name", "../../escape"), ("name", "tiny/a"), ("size", "../../x"),
                                         ("name", "")], ids=["grid-dotdot", "grid-slash", "size-dotdot", "grid-empty"])
def test_grid_and_size_names_are_plain_folder_names(data, tmp_path, where, name):
    """Round 6: a grid named ``../../escape`` swept into ``runs/../../escape`` (its default --out), and a size named
    ``../../x`` trained its run in ``OUT/runs/../../x-dense_tied-s0``, a folder beside the sweep's; both exit 0.
    Round 13 (X13): a grid named ``''`` trained under its file's name without a word."""
    grid_name, size = (name, "a") if where == "name" else ("g", name)
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"name: '{grid_name}'\ndata: {{dir: {data}}}\nseeds: [0]\n"
                    f"sizes: {{'{size}': {{preset: cpu-tiny}}}}\n"
                    f"experiments: {{iso_body: {{variants: [dense_tied], sizes: ['{size}']}}}}\n")
    (tmp_path / "deep" / "er").mkdir(parents=True)
    line = cli_error(["sweep", "--grid", grid, "--out", "sw", "max_steps=1"], cwd=tmp_path / "deep" / "er")
    assert f"'{name}' is not a plain name (it names a folder" in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["deep", "er", "grid.yaml"]


# Round 7: `params` took a key given twice (`model.hidden_size=64 hidden_size=128`: the last won), `sweep` a key and
# its section (`optim.lr=1 'optim={lr: 2}'`), and a key with an empty part was named as another key
# (`optim..lr=1`: "unknown key 'optim.'"; `model.hidden_size.=64`: "expected an integer, got {'': 64}").
@pytest.mark.parametrize("argv, shown", [
    (["params", "model.hidden_size=64", "model.hidden_size=128"],
     "model.hidden_size is given twice on the command line ('model.hidden_size=64' and 'model.hidden_size=128')"),
    (["params", "model.hidden_size=64", "hidden_size=128"],
     "model.hidden_size is given twice on the command line ('model.hidden_size=64' and 'hidden_size=128')"),
    (["params", "hidden_size=64", "model={hidden_size: 32}"],
     "model.hidden_size is set twice on the command line: by 'hidden_size=64' and by 'model={hidden_size: 32}' "
     "(which sets the section model)"),
    (["sweep", "--grid", "smoke", "--list", "optim.lr=1", "optim={lr: 2}"],
     "optim.lr is set twice on the command line: by 'optim.lr=1' and by 'optim={lr: 2}'"),
    (["sweep", "--grid", "smoke", "--list", "optim={lr: 2}", "optim.lr=1"],
     "optim.lr is set twice on the command line: by 'optim={lr: 2}' and by 'optim.lr=1' (which is inside"),
    (["params", "model..hidden_size=1"], "override 'model..hidden_size=1': its key 'model..hidden_size' has an empty "
                                         "part (two dots in a row, or a dot at an end)"),
    (["params", ".hidden_size=64"], "override '.hidden_size=64': its key '.hidden_size' has an empty part"),
    (["params", "model.hidden_size.=64"], "its key 'model.hidden_size.' has an empty part"),
    (["sweep", "--grid", "smoke", "--list", "optim..lr=1"], "override 'optim..lr=1': its key 'optim..lr' has an "
                                                            "empty part"),
    (["train", "--print-config", "max_steps=4", "optim.lr.=1"], "its key 'optim.lr.' has an empty part"),
])
def test_overrides_that_set_one_key_twice_or_name_an_empty_part_are_refused(data, argv, shown):
    if argv[0] == "sweep":
        argv = [*argv[:3], "--data-dir", data, *argv[3:]]
    line = cli_error(argv)
    assert shown in line, line


def test_params_takes_a_whole_model_section(capsys):
    from leviathan.cli import main

    assert main(["params", "model.hidden_size=32", "--json"]) == 0
    dotted = capsys.readouterr().out
    assert main(["params", "model={hidden_size: 32}", "--json"]) == 0  # was "unknown key 'model.model'"
    assert capsys.readouterr().out == dotted


@pytest.mark.parametrize("where, setting, shown", [
    ("cli", "seed=5", "'seed=5' on the command line sets seed, which the grid sets for each run after it "
                      "(run a-dense_tied-s0), so it would have no effect; set it through the grid's seeds"),
    ("cli", "data.path=elsewhere", "sets data.path, which the grid sets for each run after it"),
    ("cli", "model.generator_knots=8", "set it through the size's model fields (sizes.a.generator_knots in the grid)"),
    ("cli", "model={hidden_size: 8}", "'model={hidden_size: 8}' on the command line sets model.hidden_size"),
    ("base", {"seed": 7}, "'seed=7' in the grid's base sets seed"),
    ("run", {"model": {"embedding": "leviathan"}}, "'model.embedding=leviathan' in sizes.a.run sets model.embedding"),
    ("variant_run", {"data.path": "elsewhere"}, "'data.path=elsewhere' in variant_run.dense_tied sets data.path"),
])
def test_a_setting_the_grid_sets_for_each_run_is_refused_where_it_is_given(data, tmp_path, where, setting, shown):
    """Round 7 (D19-D22): `sweep seed=5` trained seed 0, `sweep data.path=OTHER` the grid's data, a grid's
    `base: {seed: 7}` or a size's model key in the base had no effect: the grid sets them for each run after every
    other layer. Each is named where it is given."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_row_identity import grid_file

    grid = yaml.safe_load(grid_file(tmp_path, data).read_text())
    overrides = [setting] if where == "cli" else []
    if where == "base":
        grid["base"].update(setting)
    elif where == "run":
        grid["sizes"]["a"]["run"] = setting
    elif where == "variant_run":
        grid["variant_run"] = {"dense_tied": setting}
    with pytest.raises(ConfigError) as e:
        load_grid(grid, overrides=overrides)
    assert shown in str(e.value)
    assert load_grid(yaml.safe_load(grid_file(tmp_path, data).read_text()), overrides=["optim.lr=0.02"]).runs


def test_sweep_names_a_seed_given_as_an_override(data, tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from test_row_identity import grid_file

    line = cli_error(["sweep", "--grid", grid_file(tmp_path, data), "--out", tmp_path / "out", "seed=5"])
    assert "'seed=5' on the command line sets seed" in line and "--seeds" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where, shown", [
    ("base", "optim.lr is given twice in the base of grid 'tiny' ("),
    ("run", "optim.lr is given twice in sizes.a.run of grid 'tiny' ("),
    ("variant_run", "optim.lr is given twice in variant_run.dense_tied of grid 'tiny' ("),
])
def test_one_key_spelt_twice_in_a_grid_section_is_refused(data, tmp_path, where, shown):
    """Round 7 (J2-J4): `optim.lr: 0.01` beside `optim: {lr: 0.02}` in one section of a grid is one key given twice
    (YAML sees two keys); the last spelling won without a word."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_row_identity import grid_file

    grid = yaml.safe_load(grid_file(tmp_path, data).read_text())
    section = {"optim.lr": 0.01, "optim": {"lr": 0.02}}
    if where == "base":
        grid["base"].update(section)
    elif where == "run":
        grid["sizes"]["a"]["run"] = section
    else:
        grid["variant_run"] = {"dense_tied": section}
    path = tmp_path / "twice.yaml"
    path.write_text(yaml.safe_dump(grid))
    line = cli_error(["sweep", "--grid", path, "--out", tmp_path / "out", "--list"])
    assert shown in line and "'optim.lr=0.01'" in line and "'optim.lr=0.02'" in line, line
    grid["sizes"]["a"]["run"] = [{"optim.lr": 0.01}, {"optim": {"lr": 0.02}}]  # a list is applied in order: allowed
    grid["base"].pop("optim.lr", None), grid["base"].pop("optim", None), grid.pop("variant_run", None)
    assert load_grid(grid).runs


def test_a_config_file_holding_a_list_says_how_settings_are_written(tmp_path):
    """Round 8 (Y1): a top-level list was "must hold a mapping of keys at the top level", with no way out."""
    from reliability_support import cli_error

    config = tmp_path / "run.yaml"
    config.write_text("- model: {preset: cpu-tiny}\n- max_steps: 3\n")
    line = cli_error(["train", "--config", config, "--run-dir", tmp_path / "run"])
    assert f"config file '{config}' holds a list at the top level, not settings; write one `key: value` line per " \
           f"setting (for example max_steps: 1000)" in line


def test_a_grid_name_that_is_not_text_is_refused(data, tmp_path):
    """Round 8 (YG5): ``name: !!binary aGVsbG8=`` named the grid "b'hello'" (its default --out runs/b'hello')."""
    from reliability_support import cli_error

    grid = tmp_path / "grid.yaml"
    grid.write_text(f"name: !!binary aGVsbG8=\ndata: {{dir: {data}}}\nseeds: [0]\nsizes: {{a: {{preset: cpu-tiny}}}}\n"
                    f"experiments: {{iso_body: {{variants: [dense_tied], sizes: [a]}}}}\n")
    line = cli_error(["sweep", "--grid", grid, "--list"])
    assert "the grid's name: expected a name (text), got bytes b'hello'; write a plain name" in line


@pytest.mark.parametrize("keys, shown", [
    ({"seed": "optim.lr"}, "keys.seed: 'optim.lr' is a number setting; the grid writes each run's seed there, so it "
                           "must name an integer setting"),
    ({"seed": "optim"}, "keys.seed: 'optim' is a section, not a setting"),
    ({"data_dir": "data.seq_len"}, "keys.data_dir: 'data.seq_len' is an integer setting"),
], ids=["seed-into-a-rate", "seed-into-a-section", "data-into-a-size"])
def test_a_grid_key_that_names_a_setting_of_another_kind_is_named(data, tmp_path, keys, shown):
    """Round 7 left (D33): ``keys: {seed: optim.lr}`` wrote each run's seed into the learning rate, refused as
    "optim.lr must be positive, got 0.0", naming no grid key; now the grid key, the setting and its kind are named
    before anything is written."""
    from test_row_identity import grid_file

    path = grid_file(tmp_path, data)
    grid = yaml.safe_load(path.read_text())
    grid["keys"] = keys
    path.write_text(yaml.safe_dump(grid))
    line = cli_error(["sweep", "--grid", path, "--out", tmp_path / "out"])
    assert shown in line, line
    assert not (tmp_path / "out").exists()
    grid["keys"] = {"seed": "seed", "data_dir": "data.path"}  # the defaults, spelt out: still a grid
    assert load_grid(grid).runs


@pytest.mark.parametrize("value, shown", [
    ("[DATA]", "data.path: expected the path of a prepared data folder (text), got ["),
    ("''", "data.path is empty; set it to a prepared data directory"),
], ids=["list", "empty"])
def test_a_data_path_that_is_not_a_path_is_named(data, tmp_path, value, shown):
    """Round 9 (M53, M82): ``data: {path: [DIR]}`` was made text and looked for as a folder named "['DIR']", and an
    empty ``data.path=`` was resolved to '.' ("'.' has no meta.json")."""
    config = tmp_path / "run.yaml"
    config.write_text(f"data: {{path: {value.replace('DATA', str(data))}, seq_len: 32}}\nmodel: {{preset: cpu-tiny}}\n"
                      f"max_steps: 2\n")
    line = cli_error(["train", "--config", config, "--run-dir", tmp_path / "run"])
    assert shown in line, line
    assert not (tmp_path / "run").exists()


def test_an_override_into_a_value_of_the_config_names_the_value(data, tmp_path):
    """Round 10 (Q35b): ``model: cpu-tiny`` in the config with ``model.preset=cpu-tiny`` on the command line was
    "override 'model.preset=cpu-tiny': 'model' is a value, not a section", which blamed the override; the value and where
    it came from are named."""
    config = tmp_path / "run.yaml"
    config.write_text(f"data: {{path: {data}, seq_len: 32}}\nmodel: cpu-tiny\nmax_steps: 2\n")
    line = cli_error(["train", "--config", config, "model.preset=cpu-tiny", "--run-dir", tmp_path / "run"])
    assert "override 'model.preset=cpu-tiny': 'model' is the value 'cpu-tiny', set by the config file or an earlier " \
           "override, not a section of keys; make it a section there, or drop this override" in line, line
    assert not (tmp_path / "run").exists()


def test_a_grid_whose_experiments_make_no_run_names_them(data, tmp_path):
    """Round 10 (Q70): ``experiments: {iso_body: {variants: []}}`` was "has no experiments; add iso_body, ..." although
    it has iso_body; the experiments given are named, and why they make no run."""
    from test_row_identity import grid_file

    path = grid_file(tmp_path, data)
    grid = yaml.safe_load(path.read_text())
    for experiment in grid["experiments"].values():
        experiment["variants"] = []
    path.write_text(yaml.safe_dump(grid))
    line = cli_error(["sweep", "--grid", path, "--out", tmp_path / "out", "--list"])
    assert f"its experiments ({', '.join(sorted(grid['experiments']))}) make no run (no variants or sizes listed in " \
           "them); list at least one variant and size in each" in line, line
    assert not (tmp_path / "out").exists()


def test_params_takes_a_preset_as_train_does(capsys):
    """Round 9 (M81): ``params model.preset=cpu-tiny`` was "unknown key 'model.preset' in ModelConfig" (train takes
    it); now the preset is applied, and two different presets are refused."""
    from leviathan.cli import main

    assert main(["params", "model.preset=cpu-tiny", "model.hidden_size=32", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"num_hidden_layers": 2' in out
    assert main(["params", "model.preset=cpu-tiny", "--preset", "cpu-small"]) == 2
    assert "--preset cpu-small and model.preset=cpu-tiny name two presets" in capsys.readouterr().err


def test_a_run_config_the_grid_cannot_build_is_refused_before_the_sweep_writes(data, tmp_path):
    """Round 9 (M169): a grid whose base sets both max_steps and max_tokens was refused only after the sweep had
    marked its --out and written grid.json, and the line named neither the grid nor the run."""
    from test_row_identity import grid_file

    path = grid_file(tmp_path, data)
    grid = yaml.safe_load(path.read_text())
    grid["base"]["max_tokens"] = 256
    path.write_text(yaml.safe_dump(grid))
    line = cli_error(["sweep", "--grid", path, "--out", tmp_path / "out"])
    assert f"grid 'tiny' (file {str(path)!r}), in its base: set exactly one of max_steps and max_tokens" in line, line
    assert not (tmp_path / "out" / "grid.json").exists()


def _no_size(grid: dict) -> None:
    grid["experiments"]["iso_body:arms"] = {"variants": ["leviathan"], "sizes": []}


@pytest.mark.parametrize("change, said", [
    (_no_size, "experiments.iso_body:arms makes no run (no sizes, variants or seeds listed in it)"),
    (lambda g: g.update(description=["a", "b"]), "description is ['a', 'b'], not text"),
    (lambda g: g["eval"].update(sets={"val": {"split": "val", "optional": "yes"}}),
     "eval.sets.val.optional: expected true or false, got 'yes'"),
    (lambda g: g["eval"].update(bucket_sets=["nope"]), "eval.bucket_sets names 'nope', which is no eval set of the "
                                                       "grid (its sets: val)"),
    (lambda g: g.update(ablations={"shape": ["a", "zz"]}), "ablations.shape names 'zz', no size of the grid (its "
                                                           "sizes: a)"),
    (lambda g: g["eval"].update(seq_len=1000), "eval.seq_len 1,000 exceeds run a-dense_tied-s0's "
                                               "max_position_embeddings ("),
], ids=["B36-experiment-without-sizes", "B39-description-list", "B41-optional-text", "B43-bucket-set-unknown",
        "B243-ablation-unknown-size", "B31-eval-past-positions"])
def test_a_grid_setting_that_would_be_dropped_or_misread_is_refused_by_list(data, tmp_path, change, said):
    """Round 15 (B36, B39, B41, B43, B243): an experiment with ``sizes: []`` beside others vanished (3 runs, no
    word); ``description: [a, b]`` was kept as a list; ``optional: "yes"`` was read as true; ``bucket_sets: [nope]``
    wrote rows with no per-bucket losses; ``ablations: {shape: [a, zz]}`` named a size the grid has not. Each is refused
    by ``sweep --list``, before any run, naming the key."""
    from test_row_identity import grid_file

    path = grid_file(tmp_path, data)
    grid = yaml.safe_load(path.read_text())
    change(grid)
    path.write_text(yaml.safe_dump(grid))
    line = cli_error(["sweep", "--grid", path, "--out", tmp_path / "out", "--list"])
    assert said in line, line
    assert not (tmp_path / "out").exists()


def test_a_dotted_key_in_a_config_file_is_said_to_be_nested(data, tmp_path):
    """Round 15 (B199): ``model.hidden_size: 32`` at the top of a train config file was "unknown key
    'model.hidden_size' in RunConfig; valid keys: ...", with no word that dotted keys are overrides' and the file
    needs ``model: {hidden_size: 32}``."""
    config = tmp_path / "c14.yaml"
    config.write_text("max_steps: 2\nmodel: {preset: cpu-tiny}\nmodel.hidden_size: 32\n")
    line = cli_error(["train", "--config", config, "--print-config", f"data.path={data}"])
    assert line == "error: key 'model.hidden_size': a dotted key is for an override on the command line (or a grid's " \
                   "run: mapping), not a file's key; nest it in the file: model: {hidden_size: ...}", line


def test_a_grid_file_whose_grid_has_another_name_is_listed_with_that_name(data, tmp_path):
    """Round 15 (B298): ./configs/experiments/smoke.yaml holding grid 'tinyg' was listed by ``sweep --grids`` as smoke,
    "the small pipeline check", while `--grid smoke` writes rows of grid 'tinyg' that lookups by name cannot find.
    The line names the grid inside and the footer no longer calls that file the pipeline check."""
    from test_row_identity import grid_file

    folder = tmp_path / "cwd" / "configs" / "experiments"
    folder.mkdir(parents=True)
    grid_file(tmp_path, data).rename(folder / "smoke.yaml")
    proc = cli(["sweep", "--grids"], cwd=tmp_path / "cwd")
    assert proc.returncode == 0, proc.stderr
    smoke = next(line for line in proc.stdout.splitlines() if line.startswith("smoke "))
    assert "[the file names grid 'tiny': its rows are of grid 'tiny'; rename the file tiny.yaml]" in smoke, smoke
    assert "pipeline check" not in proc.stdout


@pytest.mark.parametrize("text, shown", [
    ("optim: {lr: \"0.5\"}\n", "optim.lr: '0.5' is in quotes (line 2), which makes it text, not a number; remove the "
                               "quotes"),
    ("max_steps: '3'\n", "max_steps: '3' is in quotes (line 2), which makes it text, not an integer"),
    ("compile: \"true\"\n", "compile: 'true' is in quotes (line 2), which makes it text, not true or false"),
], ids=["C135-lr", "C135-max-steps", "C135-switch"])
def test_a_quoted_number_in_a_config_file_is_text_and_refused(data, tmp_path, text, shown):
    """Round 16 (C135): ``optim: {lr: "0.5"}`` trained at lr 0.5 and ``max_steps: "3"`` for 3 steps, config.yaml
    recording them unquoted, while a grid refused ``seeds: [0, "0"]``. A quoted number is text: refused, naming the
    key and the line; quoted text of a text setting is still text."""
    config = tmp_path / "q.yaml"
    config.write_text("model: {preset: cpu-tiny}\n" + text)
    line = cli_error(["train", "--config", config, "data.seq_len=32", f"data.path={data}", "--run-dir", tmp_path / "r"])
    assert shown in line, line
    assert not (tmp_path / "r").exists()
    config.write_text(f"model: {{preset: cpu-tiny}}\nmax_steps: 2\ndata: {{path: \"{data}\", seq_len: 32}}\n")
    assert cli(["train", "--config", config, "--print-config"]).returncode == 0


def test_a_quoted_number_in_an_override_or_a_grid_is_refused_as_in_a_file(data, tmp_path):
    """Round 16 (C135): the escaped override ``'optim.lr="0.5"'`` (a shell drops unescaped quotes: ``optim.lr="0.5"``
    arrives as ``optim.lr=0.5``, a number) and a grid's ``base: {optim: {lr: "0.5"}}`` (flattened to ``optim.lr=0.5``,
    its quotes lost) are refused as the file's value is; a quoted text setting keeps its quotes for the run."""
    from leviathan.config import parse_override
    from leviathan.experiments.machinery.grid_values import override_text
    from leviathan.strict_yaml import QuotedText
    from test_row_identity import grid_file

    line = cli_error(["train", *run_overrides(data), 'optim.lr="0.5"', "--run-dir", tmp_path / "r"])
    assert "optim.lr: '0.5' is in quotes, which makes it text, not a number; remove the quotes" in line, line
    path = grid_file(tmp_path, data)
    text = path.read_text()
    path.write_text(text.replace("base:\n", "base:\n  optim: {lr: \"0.5\"}\n"))
    line = cli_error(["sweep", "--grid", path, "--out", tmp_path / "out", "--list"])
    assert "optim.lr: '0.5' is in quotes (line " in line and "not a number; remove the quotes" in line, line
    assert not (tmp_path / "out").exists()
    text_value = override_text("device", QuotedText("0", 4))  # a text setting: the quotes travel with it
    assert text_value == 'device="0"' and parse_override(text_value)[1] == "0"


def test_an_integer_setting_written_as_a_whole_float_is_recorded_as_the_integer(data, tmp_path):
    """Round 16 (C156): two sweeps of one grid but for ``max_steps: 2`` and ``max_steps: 2.0`` recorded
    ``max_steps=2`` and ``max_steps=2.0`` in grid.json, and ``report`` of the two refused them as "started with
    different settings" although both trained 2 steps. The grid reads a whole number for an integer setting as the
    integer, as a config file does (``max_steps: 2.0`` trains 2 steps); a fraction is still refused."""
    import json

    from test_row_identity import grid_file

    path = grid_file(tmp_path, data)
    float_path = tmp_path / "float.yaml"
    float_path.write_text(path.read_text().replace("max_steps: 2", "max_steps: 2.0"))
    assert "max_steps: 2.0" in float_path.read_text()
    listed = [json.loads(cli(["sweep", "--grid", p, "--list", "--json"]).stdout)["base_overrides"]
              for p in (path, float_path)]
    assert "max_steps=2" in listed[0] and listed[0] == listed[1], listed
    assert load_grid(path, overrides=["eval_batch_size=4.0"]).base_overrides[-1] == "eval_batch_size=4"  # the CLI's
    float_path.write_text(path.read_text().replace("max_steps: 2", "max_steps: 2.5"))
    line = cli_error(["sweep", "--grid", float_path, "--list"])
    assert "max_steps: expected an integer, got 2.5" in line, line


def test_a_grid_given_to_train_and_a_run_config_given_to_sweep_are_named_with_their_verb(data, tmp_path):
    """Round 16 (C263, C264): ``train --config GRID.yaml`` said "unknown key name in RunConfig" and ``sweep --grid
    tiny.yaml`` "unknown key batch_tokens in grid": true, but the fix is the other verb, as for a meta.json or a
    state.json given there (C265, C266). Nothing is written."""
    from test_row_identity import grid_file

    grid = grid_file(tmp_path, data)
    line = cli_error(["train", "--config", grid, "--run-dir", tmp_path / "r263"])
    assert line == f"error: config file '{grid}' is a sweep grid (it has sizes and experiments), not a run config; " \
                   f"run it with `leviathan sweep --grid {grid}`, or give train a run config (--config tiny, or a " \
                   f"run's config.yaml)", line
    assert not (tmp_path / "r263").exists()
    config = tmp_path / "tiny.yaml"
    config.write_text("model: {preset: cpu-tiny}\ndata: {seq_len: 32}\nbatch_tokens: 256\nmax_steps: 4\n")
    line = cli_error(["sweep", "--grid", config, "--out", tmp_path / "sw", "--list"])
    assert f"error: grid file '{config}' is a run config (a `leviathan train --config` file: it has batch_tokens, " \
           f"max_steps, model), not a grid; train it with `leviathan train --config {config}`" in line, line
    assert not (tmp_path / "sw").exists()


def test_two_sizes_that_are_one_model_under_two_names_are_refused(data, tmp_path):
    """Round 16 (C289): a size ``b: *A``, a YAML alias of size ``a``, listed 4 runs: one model trained twice under two
    names, entering the ladder as two sizes (a size repeated in a list is refused since round 4). Sizes of one model
    with other run settings (a per-size lr) still differ."""
    grid = tmp_path / "alias.yaml"
    grid.write_text(f"name: al\ndata: {{dir: {data}}}\nbase: {{max_steps: 2, data: {{seq_len: 32}}}}\n"
                    f"sizes:\n  a: &A {{preset: cpu-tiny, hidden_size: 16, num_attention_heads: 2}}\n  b: *A\n"
                    f"experiments: {{iso_body: {{variants: [dense_tied, leviathan], sizes: [a, b]}}}}\n")
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "sw", "--list"])
    assert "grid 'al': sizes 'a' and 'b' are the same model with the same settings (" in line, line
    assert "runs a-dense_tied-s0 and b-dense_tied-s0 would train it twice" in line and "delete one of them" in line
    assert not (tmp_path / "sw").exists()
    grid.write_text(grid.read_text().replace("  b: *A\n", "  b: {<<: *A, run: {optim.lr: 0.01}}\n"))
    assert len(load_grid(grid).runs) == 4


@pytest.mark.parametrize("spelt", ["num_key_value_heads: 2", "head_dim: 8"], ids=["E369-kv-heads", "E370-head-dim"])
def test_two_sizes_that_are_one_model_once_defaults_are_filled_in_are_refused(data, tmp_path, spelt):
    """Round 17 (E369, E370): size ``b`` = ``a`` plus ``num_key_value_heads: 2`` (a's 2 heads) or ``head_dim: 8``
    (16 / 2) is the same model, but the check compared the fields as spelt (None against 2) and `sweep --list`
    listed 4 runs, exit 0. The models are compared with every default filled in (``ModelConfig.resolved``)."""
    grid = tmp_path / "spelt.yaml"
    grid.write_text(f"name: sp\ndata: {{dir: {data}}}\nbase: {{max_steps: 2, data: {{seq_len: 32}}}}\n"
                    f"sizes:\n  a: {{preset: cpu-tiny, hidden_size: 16, num_attention_heads: 2}}\n"
                    f"  b: {{preset: cpu-tiny, hidden_size: 16, num_attention_heads: 2, {spelt}}}\n"
                    f"experiments: {{iso_body: {{variants: [dense_tied, leviathan], sizes: [a, b]}}}}\n")
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "sw", "--list"])
    assert "grid 'sp': sizes 'a' and 'b' are the same model with the same settings (" in line, line
    assert not (tmp_path / "sw").exists()
    grid.write_text(grid.read_text().replace(spelt, spelt.replace("2", "1").replace("8", "4")))
    assert len(load_grid(grid).runs) == 4  # another model: 1 kv head, or heads of 4

def test_a_sizes_whole_float_is_read_as_its_integer_like_the_grids_base(data, tmp_path):
    """Round 17 (E226): a size ``{preset: cpu-tiny, hidden_size: 32.0}`` was refused as "model.hidden_size must be a
    positive integer, got 32.0", where the grid's base, its eval section and train's overrides read a whole float as
    its integer (round 16, C156): one setting, one rule. The listed runs are those of ``hidden_size: 32``."""
    from reliability_support import cli, one_run_grid

    listed = []
    for value in ("32", "32.0"):
        folder = tmp_path / value
        folder.mkdir()
        grid = one_run_grid(data, folder)
        grid.write_text(grid.read_text().replace("a: cpu-tiny", f"a: {{preset: cpu-tiny, hidden_size: {value}}}"))
        proc = cli(["sweep", "--grid", grid, "--out", folder / "sw", "--list"])
        assert proc.returncode == 0, proc.stderr
        listed.append(proc.stdout)
    assert listed[0] == listed[1] and "a-dense_tied-s0" in listed[0]


def test_an_override_given_twice_is_refused_by_train_as_by_sweep(data, tmp_path):
    """G184-G187: ``load_run_config(c, ['max_steps=2', 'max_steps=5'])`` and ``leviathan train ... max_steps=2
    max_steps=5`` (or ``optim.lr=1e-3 'optim={lr: 2e-3}'``) trained with the last value without a word, where sweep
    refuses the same two overrides. Both are refused naming the two; the ``train`` lines ``sweep --commands`` prints
    for a size that sets the base's keys again give each key once, and train takes them."""
    from leviathan.run_config import load_run_config

    with pytest.raises(ConfigError, match=r"max_steps is given twice in the overrides \('max_steps=2' and 'max_st"):
        load_run_config(None, [f"data.path={data}", "max_steps=2", "max_steps=5"])
    with pytest.raises(ConfigError, match=r"optim.lr is set twice in the overrides: by 'optim.lr=1e-3' and by "):
        load_run_config(None, [f"data.path={data}", "max_steps=2", "optim.lr=1e-3", "optim={lr: 2e-3}"])
    for twice in (["max_steps=2", "max_steps=5"], ["optim.lr=1e-3", "optim={lr: 2e-3}"]):
        settings = [o for o in run_overrides(data) if o.split("=")[0] not in (twice[0].split("=")[0], "optim")]
        line = cli_error(["train", *settings, *twice, "--run-dir", tmp_path / "run"])
        assert "twice in the overrides" in line and "keep one" in line, line
        assert not (tmp_path / "run").exists()
    grid = tmp_path / "g.yaml"
    grid.write_text(yaml.safe_dump({"name": "g", "data": {"dir": str(data)}, "seeds": [0],
                                    "base": {"max_steps": 1, "optim": {"lr": 0.01}, "data": {"seq_len": 32}},
                                    "sizes": {"a": {"preset": "cpu-tiny", "run": {"max_steps": 2, "optim.lr": 0.02}}},
                                    "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}))
    proc = cli(["sweep", "--grid", grid, "--out", tmp_path / "sw", "--commands"])
    assert proc.returncode == 0, proc.stderr
    argv = proc.stdout.strip().splitlines()[-1].split()
    assert argv.count("max_steps=2") == 1 and not any(a.startswith("max_steps=1") for a in argv), argv
    shown = cli([*argv[1:], "--print-config"])
    assert shown.returncode == 0, shown.stderr
    assert "max_steps: 2\n" in shown.stdout and "lr: 0.02\n" in shown.stdout
