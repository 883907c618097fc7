"""A number typed past what a 64-bit float holds is named as typed, never as the 0.0 or inf it reads as (issue 30
round 26, P30).

``train ... optim.lr=1e-400`` was "optim.lr must be positive, got 0.0": a value the user never typed, with no range.
``float_text.float_lost`` is asked by every float reader: the config's (an override, a config file, a grid:
``config._coerce_float`` and ``strict_yaml``'s float constructor) and the command line's number types
(``commands.values.written_float``: ``generate --temperature 1e-400`` was 0.0, greedy decoding, without a word).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

from leviathan.config import ConfigError  # noqa: E402
from leviathan.float_text import float_lost  # noqa: E402
from leviathan.run_config import load_run_config  # noqa: E402


def test_train_names_an_underflowing_lr_as_typed(tmp_path):
    line = cli_error(["train", "--config", "tiny", f"data.path={tmp_path / 'd1'}", "max_steps=2", "--run-dir",
                      tmp_path / "rX", "optim.lr=1e-400"], cwd=tmp_path)
    assert "'1e-400' is too small for a 64-bit float and reads as 0.0 (underflow)" in line, line
    assert "4.9e-324 to 1.8e308" in line and "got 0.0" not in line, line
    assert not (tmp_path / "rX").exists()


@pytest.mark.parametrize("value, words", [("1e-400", "underflow"), ("1.0e-400", "underflow"), ("-2e-999", "underflow"),
                                          ("1e400", "overflow"), ("1.0e+400", "overflow")])
def test_every_config_reader_names_it(tmp_path, value, words):
    with pytest.raises(ConfigError, match=f"'{re.escape(value)}' is too .* for a 64-bit float .*{words}"):
        load_run_config("tiny", [f"optim.lr={value}"], check_data=False)
    (tmp_path / "c.yaml").write_text(f"optim:\n  lr: {value}\n")
    with pytest.raises(ConfigError, match=f"'{re.escape(value)}' is too .* for a 64-bit float .*{words}"):
        load_run_config(tmp_path / "c.yaml", check_data=False)


@pytest.mark.parametrize("argv", [["generate", "r1", "--temperature", "1e-400"],
                                  ["demo", "--lr", "1e-400"],
                                  ["prepare", "c", "--out", "d", "--val-fraction", "1e-400"],
                                  ["analyze", "fit", "--sizes", "1e-400,200,400", "--losses", "3,2,1"]])
def test_command_line_numbers_name_it(tmp_path, argv):
    line = cli_error(argv, cwd=tmp_path)
    assert "'1e-400' is too small for a 64-bit float and reads as 0.0 (underflow)" in line, line


def test_what_is_not_lost():
    for text in ("0", "0.0", "-0.0", "0e5", "1e-300", "5e-324", "inf", ".inf", "nan", "1.5"):
        assert float_lost(text, float(text.replace(".inf", "inf"))) is None, text
