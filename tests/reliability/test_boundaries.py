"""Nonsense values are refused at the boundary where they enter (issue 30, kind 7): the command line, a YAML
config, the Python API, adoption's options; the message gives the valid range, and nothing is written first.

Before, a negative seed ended in numpy's traceback after the run folder was written, a seed past 64 bits in
torch's, and a seed past 32 bits was reduced modulo 2^32 (two seeds, one model).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from leviathan.cli import main
from leviathan.config import ConfigError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, one_error, run_overrides  # noqa: E402

pytestmark = [pytest.mark.reliability]

RANGE = "must be an integer in [0, 4294967295]"


def test_a_negative_seed_in_a_real_process(data, tmp_path):
    line = cli_error(["train", *run_overrides(data), "seed=-1", "--run-dir", tmp_path / "run"])
    assert f"seed: a seed {RANGE}" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("seed", ["4294967296", "99999999999999999999999"], ids=["33-bit", "huge"])
def test_a_seed_out_of_range_in_a_run_config(capsys, data, tmp_path, seed):
    assert main(["train", *run_overrides(data), f"seed={seed}", "--run-dir", str(tmp_path / "run")]) == 2
    assert f"seed: a seed {RANGE}" in one_error(capsys.readouterr().err)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv", [
    ["prepare", "stdlib", "--out", "{tmp}/d", "--seed", "-5"],
    ["generate", "{tmp}/run", "--seed", "99999999999999999999"],
    ["analyze", "fit", "--sizes", "1,2,3", "--losses", "3,2,1", "--seed", "-1"],
    ["report", "{tmp}/x", "--seed", "4294967296"],
    ["sweep", "--grid", "smoke", "--seeds", "0,-1", "--list"],
], ids=["prepare", "generate", "analyze", "report", "sweep"])
def test_a_seed_out_of_range_on_the_command_line(capsys, tmp_path, argv):
    with pytest.raises(SystemExit) as info:
        main([a.format(tmp=tmp_path) for a in argv])
    assert info.value.code == 2
    assert RANGE in one_error(capsys.readouterr().err)
    assert not (tmp_path / "d").exists()


def test_a_seed_out_of_range_in_the_python_api(tmp_path):
    from leviathan.data.prepare import prepare
    from leviathan.run_config import RunConfig

    with pytest.raises(ConfigError, match="seed: a seed must be an integer"):
        RunConfig(max_steps=1, seed=-1)
    with pytest.raises(ConfigError, match="seed: a seed must be an integer"):
        prepare("stdlib", tmp_path / "d", seed=2**33)
    assert not (tmp_path / "d").exists()
