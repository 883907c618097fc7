"""``scripts/same_numbers.py`` can answer "identical" (issue 30 round 25): one commit trained twice was "DIFFERENT",
because every metrics line carries its run's random ``run_id`` (X37); a grid whose base sets ``max_steps`` failed, the
script adding ``max_tokens`` beside it (X34); ``HEAD HEAD`` met its own worktree (X36); a ``--batch-tokens`` other
than the run's ran another number of steps than the line said (X38: the option is gone, the length is ``max_steps``).
A real comparison of the checkout's HEAD with itself, on a one-run grid."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_run_grid, script  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_numbers_leave_out_times_and_the_run_id(script_module, tmp_path):
    same = script_module("same_numbers.py")
    for name, run_id, t in (("a.jsonl", "0f3a", 1.5), ("b.jsonl", "9c1d", 2.5)):
        (tmp_path / name).write_text(json.dumps({"step": 1, "train_loss": 5.25, "run_id": run_id, "time_s": t}) + "\n")
    assert same.numbers(tmp_path / "a.jsonl") == same.numbers(tmp_path / "b.jsonl") == [{"step": 1,
                                                                                          "train_loss": 5.25}]


def test_a_runs_length_is_replaced_whichever_it_set(script_module):
    cut = script_module("same_numbers.py").cut_to
    assert cut(["--config", "tiny", "max_steps=1", "seed=0"], 2) == ["--config", "tiny", "seed=0", "max_steps=2"]
    assert cut(["max_tokens=99"], 3) == ["max_steps=3"]


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="a comparison of commits needs the git checkout")
def test_one_commit_trained_twice_is_identical(data, tmp_path):
    grid = one_run_grid(data, tmp_path)  # its base sets max_steps (X34)
    done = script("same_numbers.py", ["--grid", grid, "--run", "a-dense_tied-s0", "--data-dir", data, "--steps", "2",
                                      "HEAD", "HEAD"], cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "a-dense_tied-s0: identical over" in done.stdout and "(2 steps of the run's own batch" in done.stdout, \
        done.stdout
