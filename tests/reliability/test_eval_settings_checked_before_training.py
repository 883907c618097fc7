"""A grid whose evaluation would leave a frequency bucket empty is refused before any run trains (issue 30 round 26,
P43).

``eval.max_tokens: 1`` (one scored target, three buckets) was taken by ``--list`` and the start; the run trained, and
only then ``append_result`` refused its row ("buckets.val.loss [None, 6.03, None], not a list of numbers; correct that
value"), naming a row the user never sees; a rerun trained again to the same end. ``sweep.check_eval_sets`` now asks
``bucket_reach.check_buckets_reached`` with the other eval checks, before training: one line naming the set, how many
buckets its scored targets reach, and the fewest ``eval.max_tokens`` that reach them all (or, when the whole set does
not, fewer ``eval.buckets``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, grid_file  # noqa: E402

from leviathan.errors import UserError  # noqa: E402
from leviathan.experiments.machinery.bucket_reach import reach  # noqa: E402
from leviathan.experiments.machinery.grid import load_grid  # noqa: E402
from leviathan.experiments.machinery.sweep import check_eval_sets  # noqa: E402


def test_sweep_refuses_a_cap_that_leaves_a_bucket_empty_before_training(tmp_path, data):
    # windows of 1 token: a cap below one window (eval.seq_len + 1) is refused at load since round 29 (W692)
    grid = grid_file(tmp_path, data, max_tokens=2, buckets=3, seq_len=1)
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "sgx", "--only", "a-dense_tied-s0"], cwd=tmp_path)
    found = re.search(r"eval set 'val' scores 2 target\(s\) \(eval\.max_tokens: 2\), which fall in 2 of the "
                      r"eval\.buckets: 3 training-frequency buckets.*; set eval\.max_tokens to at least ([\d,]+) "
                      r"\(or null: the whole set\)$", line)
    assert found, line
    assert not (tmp_path / "sgx" / "runs").exists()  # nothing trained
    least = int(found.group(1).replace(",", ""))
    check_eval_sets(load_grid(str(grid_file(tmp_path, data, max_tokens=least, buckets=3, seq_len=1))), None)  # holds


@pytest.mark.filterwarnings("ignore:.*frequency buckets hold no ids")
def test_a_set_that_cannot_reach_every_bucket_names_fewer_buckets(tmp_path, data):
    grid = load_grid(str(grid_file(tmp_path, data, max_tokens=None, buckets=40)))  # more than the ids: W670's line
    with pytest.raises(UserError, match=r"the whole set reaches \d+ of them: lower eval\.buckets"):
        check_eval_sets(grid, None)


def test_reach_counts_targets_not_the_first_token():
    bucket_of = np.array([0, 1, 2, 2])
    assert reach(np.array([0, 3, 3, 1]), bucket_of, 3) == (2, None)  # token 0 is no target
    assert reach(np.array([3, 0, 3, 1]), bucket_of, 3) == (3, 3)
