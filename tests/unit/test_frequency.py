"""Frequency buckets and per-bucket losses on synthetic counts where the answer is known."""

import math

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.eval.frequency import (aligned_targets, bucket_losses, format_table, make_buckets,
                                      relative_reduction)


def zipf_counts(V=2000, unseen=50):
    counts = (1e6 / np.arange(1, V + 1)).astype(np.int64)
    if unseen:
        counts[-unseen:] = 0
    return counts


def test_mass_buckets_have_equal_shares_and_are_ordered_rare_to_frequent():
    counts = zipf_counts()
    b = make_buckets(counts, 5, "mass")
    assert b.num_buckets == 5 and sum(b.num_ids) == len(counts)
    assert sum(b.mass) == pytest.approx(1.0)
    assert all(abs(m - 0.2) < 0.08 for m in b.mass)
    # rarest bucket holds most ids, the most frequent one few; max count grows with the bucket
    assert b.num_ids[0] > b.num_ids[-1]
    assert b.max_count == sorted(b.max_count)
    # ties never split across buckets; unseen ids in bucket 0
    for v in np.unique(counts):
        assert len(np.unique(b.bucket_of[counts == v])) == 1
    assert np.all(b.bucket_of[counts == 0] == 0)
    assert len(b.labels()) == 5


def test_log_buckets_are_equal_width_in_log_count():
    counts = np.array([0, 1, 10, 100, 1000, 10000])
    b = make_buckets(counts, 4, "log")
    # log10 counts 0..4 over 4 bins of width 1: 1->0, 10->1, 100->2, 1000->3, 10000->3 (top edge)
    assert b.bucket_of.tolist() == [0, 0, 1, 2, 3, 3]


def test_bucket_losses_known_means_and_reduction():
    counts = np.array([100, 100, 1, 1, 0])  # ids 0,1 frequent; 2,3 rare; 4 unseen
    b = make_buckets(counts, 2, "mass")
    assert b.bucket_of.tolist() == [1, 1, 0, 0, 0]
    targets = np.array([0, 1, 2, 3, 4, 0])
    base = bucket_losses(np.array([1.0, 1.0, 4.0, 4.0, 4.0, 1.0]), targets, b, counts)
    model = bucket_losses(np.array([1.0, 1.0, 2.0, 2.0, 2.0, 1.0]), targets, b, counts)
    assert base.loss == [4.0, 1.0] and base.count == [3, 3] and base.num_unseen_targets == 1
    red = relative_reduction(base.loss, model.loss)
    assert red[0] == pytest.approx(1 - math.exp(-2.0)) and red[1] == pytest.approx(0.0)
    assert base.ppl[1] == pytest.approx(math.e)
    text = format_table(["dense", "lev"], [base, model], b.labels())
    assert "86.5%" in text
    assert base.as_dict()["count"] == [3, 3]


def test_empty_bucket_is_none_and_alignment_checks():
    counts = zipf_counts(100, 0)
    b = make_buckets(counts, 5)
    r = bucket_losses(np.array([1.0]), np.array([0]), b)
    assert r.loss.count(None) == 4
    assert relative_reduction(r.loss, r.loss)[-1] == 0.0 and relative_reduction(r.loss, r.loss)[0] is None
    tokens = np.arange(10)
    assert aligned_targets(tokens, 9).tolist() == list(range(1, 10))
    assert aligned_targets(tokens, 4).tolist() == [1, 2, 3, 4]
    with pytest.raises(UserError):
        aligned_targets(tokens, 10)
    with pytest.raises(UserError, match="align"):
        bucket_losses(np.ones(3), np.ones(2, dtype=int), b)
    with pytest.raises(UserError, match="outside"):
        bucket_losses(np.ones(1), np.array([1000]), b)
    with pytest.raises(UserError):
        make_buckets(counts, 5, "quantile")
    with pytest.raises(UserError):
        make_buckets(np.zeros(5), 5)
