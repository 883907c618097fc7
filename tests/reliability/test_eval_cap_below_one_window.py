"""A cap on the tokens scored below one evaluation window is refused where it is set (issue 30 round 29, W692).

A grid whose eval section set ``max_tokens: 10`` (windows of 64) loaded, and its sweep scored every run on 9 targets
without a word: round 28's floor of one window (``seq_len`` + 1 tokens, ``short_split_problem``) held the split's size,
not the cap actually scored. ``eval.window_floor.short_cap_problem`` now holds the grid's ``eval.max_tokens`` (against
``eval.seq_len``, else each run's ``data.seq_len``), a run config's ``eval_tokens`` (train's validation), the eval
verb's ``--max-tokens`` and, found beside them, ``analyze frequency --runs``' ``--max-tokens`` to it, in one line
naming the cap, the window and the least cap.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, grid_file, one_error  # noqa: E402

from leviathan.config import ConfigError  # noqa: E402
from leviathan.experiments.machinery.grid import load_grid  # noqa: E402
from leviathan.run_config import DataConfig, RunConfig  # noqa: E402


def test_a_grid_cap_below_the_eval_window_is_refused_at_load(tmp_path, data):
    with pytest.raises(ConfigError, match=r"grid 'tiny': eval.max_tokens 10 is fewer than one evaluation window "
                                          r"\(eval.seq_len 32 \+ 1 tokens\): each loss would be measured on 9 "
                                          r"target\(s\); set eval.max_tokens to at least 33, or null"):
        load_grid(str(grid_file(tmp_path, data, max_tokens=10)))


def test_without_an_eval_seq_len_the_runs_own_window_is_the_floor(tmp_path, data):
    with pytest.raises(ConfigError, match=r"eval.max_tokens 20 is fewer than one evaluation window \(run "
                                          r"a-dense_tied-s0's data.seq_len 32 \+ 1 tokens\)"):
        load_grid(str(grid_file(tmp_path, data, max_tokens=20, seq_len=None)))
    assert load_grid(str(grid_file(tmp_path, data, max_tokens=33, seq_len=None))).eval_options.max_tokens == 33


def test_a_run_configs_eval_tokens_below_a_window_is_refused():
    with pytest.raises(ConfigError, match=r"eval_tokens 10 is fewer than one evaluation window \(data.seq_len 64 \+ 1 "
                                          r"tokens\).*set eval_tokens to at least 65, or null \(the whole split\)"):
        RunConfig(max_steps=4, eval_tokens=10, data=DataConfig(seq_len=64))
    assert RunConfig(max_steps=4, eval_tokens=65, data=DataConfig(seq_len=64)).eval_tokens == 65


def test_the_eval_verb_refuses_a_cap_below_its_window(finished_run, tmp_path):
    done = cli(["eval", finished_run, "--max-tokens", "10"], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert ("--max-tokens 10 is fewer than one evaluation window (the run's data.seq_len 32 + 1 tokens): each loss "
            "would be measured on 9 target(s); set --max-tokens to at least 33, or leave it out") in line, line
    done = cli(["eval", finished_run, "--max-tokens", "10", "--seq-len", "8"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_analyze_frequency_refuses_a_cap_below_the_runs_window(finished_run, data, tmp_path):
    done = cli(["analyze", "frequency", "--runs", finished_run, "--data", data, "--max-tokens", "10"], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert (f"--max-tokens 10 is fewer than one evaluation window (data.seq_len of run '{finished_run}' 32 + 1 "
            f"tokens)") in line, line
