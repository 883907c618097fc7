"""More frequency buckets than the ids that occur in training are refused (issue 30 round 29, W670).

``frequency_groups(np.ones(300), 300, num_buckets=301)`` returned 301 buckets, 300 of them empty, with only
``make_buckets``' warning (num_buckets 0 is refused, round 28 U793). Each id sits in one bucket, so buckets past the
ids seen hold none whatever the counts: ``make_buckets`` (which the eval, the sweep, ``analyze`` and
``frequency_groups`` share) refuses them in one line naming the count and the most it can be. The warning stays for
buckets the ids could fill but the counts' few distinct values do not (round 14, B292).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import grid_file  # noqa: E402

from leviathan.errors import UserError  # noqa: E402
from leviathan.eval.frequency import make_buckets  # noqa: E402
from leviathan.experiments.machinery.grid import load_grid  # noqa: E402
from leviathan.experiments.machinery.sweep import check_eval_sets  # noqa: E402
from leviathan.experiments.method.embeddings import frequency_groups  # noqa: E402

pytestmark = pytest.mark.reliability


def test_frequency_groups_refuses_more_buckets_than_ids():
    with pytest.raises(UserError, match=r"num_buckets 301 is more than the 300 ids that occur in training .*1 of the "
                                        r"buckets would hold no id; lower num_buckets to at most 300$"):
        frequency_groups(np.ones(300), 300, num_buckets=301)


def test_make_buckets_counts_only_the_ids_seen():
    counts = np.array([0, 0, 4, 7, 9])  # 3 ids seen of 5
    with pytest.raises(UserError, match=r"num_buckets 4 is more than the 3 ids that occur in training"):
        make_buckets(counts, 4)
    assert make_buckets(counts, 3).num_ids == [3, 1, 1]


def test_one_id_seen_names_the_counts_not_a_bucket_count():
    with pytest.raises(UserError, match=r"the 1 ids that occur .*; pass the train_freq of a training split"):
        make_buckets(np.array([0, 5, 0]), 2)


@pytest.mark.filterwarnings("ignore:.*frequency buckets hold no ids")
def test_as_many_buckets_as_ids_are_taken():
    groups = frequency_groups(np.arange(1, 301), 300, num_buckets=300)
    assert len(groups) == 301 and sum(len(g.ids) for g in groups) == 300


def test_a_grid_names_its_own_setting(tmp_path, data):
    grid = load_grid(str(grid_file(tmp_path, data, max_tokens=None, buckets=500)))
    with pytest.raises(UserError, match=r"eval.buckets 500 is more than the \d+ ids that occur in training .*; lower "
                                        r"eval.buckets to at most \d+$"):
        check_eval_sets(grid, None)
