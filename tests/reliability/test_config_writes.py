"""``leviathan.config.dump_yaml(cfg, path)`` writes only where nothing or a config it wrote stands (issue 30 round 22,
S281-S284): it wrote over a user's notes and an export's config.json, and a missing folder or a long name was the raw
OSError."""

from __future__ import annotations

import shutil

import pytest

from leviathan.config import dump_yaml
from leviathan.errors import StorageError, UserError
from leviathan.run_config import load_run_config


@pytest.fixture
def cfg(finished_run):
    return load_run_config(finished_run / "config.yaml")


def test_a_users_file_is_not_written_over(cfg, tmp_path):
    """S281: a user's text file, and a hand-written YAML file with comments, stay as they were."""
    notes, mine = tmp_path / "mynotes.txt", tmp_path / "mine.yaml"
    notes.write_text("my notes\n")
    mine.write_text("# my own settings\nmax_steps: 3\n")
    for path, text in ((notes, "my notes\n"), (mine, "# my own settings\nmax_steps: 3\n")):
        with pytest.raises(UserError, match="is not a config dump_yaml wrote.*nothing was written"):
            dump_yaml(cfg, path)
        assert path.read_text() == text


def test_its_own_config_is_written_again(cfg, finished_run, tmp_path):
    path = tmp_path / "c.yaml"
    first = dump_yaml(cfg, path)
    assert dump_yaml(load_run_config(finished_run / "config.yaml", ["max_steps=5"]), path) != first
    assert "max_steps: 5" in path.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_an_exports_config_json_is_refused(cfg, exported, tmp_path):
    """S282: a real export's config.json stays its own (the export keeps loading)."""
    ex = shutil.copytree(exported, tmp_path / "ex")
    before = (ex / "config.json").read_bytes()
    with pytest.raises(UserError, match="the output of `leviathan export`"):
        dump_yaml(cfg, ex / "config.json")
    assert (ex / "config.json").read_bytes() == before


def test_storage_failures_are_one_line(cfg, tmp_path):
    """S283: a missing folder is made, as append_result makes its own; S284: a name too long is a StorageError."""
    dump_yaml(cfg, tmp_path / "nodir" / "x.yaml")
    assert (tmp_path / "nodir" / "x.yaml").is_file()
    with pytest.raises(StorageError, match="too long.*dump_yaml|too long.*path"):
        dump_yaml(cfg, tmp_path / ("x" * 300))
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StorageError, match="a file is in the way"):
        dump_yaml(cfg, tmp_path / "afile" / "x.yaml")


def test_config_readers_name_an_argument_of_the_wrong_kind(tmp_path):
    """The public functions' walk (round 22): ``load_yaml(None)`` was os.fspath's TypeError, ``parse_override(5)``
    "argument of type 'int' is not iterable", ``apply_overrides({}, 'max_steps=3')`` "override 'm' must look like
    key=value", ``append_result(None, row)`` os.fspath's TypeError."""
    from leviathan.config import ConfigError, apply_overrides, load_yaml, parse_override
    from leviathan.experiments.machinery.results import append_result

    with pytest.raises(UserError, match="load_yaml: path: expected a path .*got None"):
        load_yaml(None)
    with pytest.raises(ConfigError, match=r"override 5 \(int\) is not a 'key=value' text"):
        parse_override(5)
    with pytest.raises(TypeError, match="overrides must be a list of 'key=value' strings"):
        apply_overrides({}, "max_steps=3")
    assert apply_overrides({}, ["max_steps=3"]) == {"max_steps": 3}
    with pytest.raises(UserError, match="append_result: path: expected a path .*got None"):
        append_result(None, {"name": "x", "variant": "dense_tied", "seed": 0})
    with pytest.raises(UserError, match="dump_yaml: path: expected a path .*got 5"):
        dump_yaml({"a": 1}, 5)
