"""The embedding-analysis and frequency-table helpers given empty, NaN, negative or mismatched inputs (issue 30 round
23, U432, U433, U435, U437, U445, U447, U449, U451, U456, U461).

``table_geometry``, ``nearest_neighbours``, ``probe_ids``, ``aligned_targets`` and ``eval.frequency.format_table``
took their arguments unchecked: no groups, k=0, per_group=-1, a group's id past the table and names without results
were numpy's or Python's raw errors (IndexError, "zero-size array to reduction operation", "Number of samples, -1");
a NaN row got neighbours, a (V, 0) table NaN statistics and num_losses=-1 an empty array, without a word; NaN counts
were named as -9223372036854775808, and counts of 10 ids for a 300-row table blamed --top-k. Each is now one
UserError ``API: ARGUMENT: PROBLEM; FIX``; the values that mean something still answer.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.eval.frequency import BucketLosses, aligned_targets, format_table
from leviathan.experiments.method.embeddings import (analyze_tables, frequency_groups, nearest_neighbours, probe_ids,
                                                     table_geometry)

pytestmark = [pytest.mark.reliability]

V, D = 300, 8


@pytest.fixture
def table() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((V, D)).astype("float32")


@pytest.fixture
def freq() -> np.ndarray:
    """Counts of a 300-id tokenizer: 250 ids seen, the last 50 never."""
    return np.concatenate([np.random.default_rng(1).integers(1, 100, 250), np.zeros(50, dtype=np.int64)])


def test_nan_counts_are_named_as_nan_without_a_numpy_warning(freq):
    """U432: the counts were cast to int64 first: "train_freq[0] is -9223372036854775808", after a RuntimeWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserError, match=r"train_freq\[0\] is nan, not a count .*; pass one whole-number count"):
            frequency_groups(freq.astype(float) * np.nan, V, 5)
    assert len(frequency_groups(freq.astype(float), V, 5)) == 6  # whole-number floats are counts


def test_table_geometry_refuses_no_groups_and_groups_of_a_larger_table(table, freq):
    """U433: no groups was IndexError "list index out of range"; U451: a 299-row table with groups of 300 ids was
    IndexError "index 299 is out of bounds"."""
    with pytest.raises(UserError, match=r"table_geometry: groups: expected a non-empty list of IdGroup, got \[\]; "
                                        r"pass frequency_groups"):
        table_geometry(table, [])
    groups = frequency_groups(freq, V, 5)
    with pytest.raises(UserError, match=r"table_geometry: groups: holds ids outside the table's \[0, 299\): 299; "):
        table_geometry(table[:299], groups)
    stats = table_geometry(table, groups)
    assert [s.group for s in stats[:2]] == ["all", "seen"] and stats[0].num_ids == V and stats[1].num_ids == 250
    unseen_only = table_geometry(table, groups[-1:])  # no bucket: "seen" is an empty group, not an IndexError
    assert unseen_only[1].num_ids == 0 and unseen_only[1].rms is None


def test_nearest_neighbours_refuses_k_0_and_nan_rows_it_reads(table):
    """U435: k=0 was numpy's "zero-size array to reduction operation minimum"; U437: a NaN row got neighbours without
    a word, and an all-NaN table was "could not broadcast input array from shape (0,) into shape (3,)"."""
    with pytest.raises(UserError, match=r"nearest_neighbours: k: must be a whole number >= 1, got 0; pass"):
        nearest_neighbours(table, np.array([1]), np.arange(V), 0)
    one_nan = table.copy()
    one_nan[5] = np.nan
    with pytest.raises(UserError, match=r"nearest_neighbours: table: holds NaN or inf in 1 of its 300 rows \(ids 5\); "
                                        r"analyse a checkpoint whose weights are finite"):
        nearest_neighbours(one_nan, np.array([1]), np.arange(V), 3)
    with pytest.raises(UserError, match=r"nearest_neighbours: table: holds NaN or inf in 300 of its 300 rows"):
        nearest_neighbours(np.full((V, D), np.nan, dtype="float32"), np.array([1]), np.arange(V), 3)
    assert nearest_neighbours(one_nan, np.array([1]), np.arange(5), 3).shape == (1, 3)  # row 5 is not read


def test_nearest_neighbours_names_what_was_asked_and_what_there_is(table):
    """Round 32, AC333, AC337, AC338: k past the candidates, the probe itself as the only candidate and no candidates
    were all "only N ids occur in training: too few for k neighbours; lower --top-k" ("only 0 ids", "only 1 ids")."""
    with pytest.raises(UserError, match=r"nearest_neighbours: k: asks 5 neighbours per probe, but candidates holds 2 "
                                        r"ids, so probe 1 can have at most 2; pass k=2 or less \(--top-k\)"):
        nearest_neighbours(table, [1], [2, 3], 5)
    with pytest.raises(UserError, match=r"nearest_neighbours: candidates: holds only probe 1 itself, which is never its "
                                        r"own neighbour, so it has none; pass other ids"):
        nearest_neighbours(table, [1], [1], 1)
    with pytest.raises(UserError, match=r"nearest_neighbours: candidates: is empty, so no probe has a neighbour"):
        nearest_neighbours(table, [1], np.array([], dtype=np.int64), 1)
    with pytest.raises(UserError, match=r"holds 3 ids, one of them probe 2, which is never its own neighbour, so probe "
                                        r"2 can have at most 2; pass k=2 or less"):
        nearest_neighbours(table, [1, 2], [2, 3, 4], 3)
    assert nearest_neighbours(table, [1], [2, 3], 2).shape == (1, 2)  # k = all the candidates, the probe not one


def test_a_table_or_ids_on_the_meta_device_are_named_and_tensors_elsewhere_read(table, freq):
    """Round 33, AE149: ``nearest_neighbours`` of a table on the meta device was torch's raw "can't convert meta
    device type tensor to numpy"; its siblings (ids there, table_geometry, analyze_tables) too. A tensor that requires
    grad is read as its values (numpy's raw "Can't call numpy() on Tensor that requires grad")."""
    import torch

    meta = torch.tensor(table, device="meta")
    with pytest.raises(UserError, match=r"^nearest_neighbours: table is on the meta device .*; pass it with values"):
        nearest_neighbours(meta, [1], [2, 3], 1)
    with pytest.raises(UserError, match=r"^nearest_neighbours: probes is on the meta device"):
        nearest_neighbours(table, torch.tensor([1], device="meta"), [2, 3], 1)
    with pytest.raises(UserError, match=r"^table_geometry: table is on the meta device"):
        table_geometry(meta, frequency_groups(freq, V))
    with pytest.raises(UserError, match=r"^analyze_tables: init is on the meta device"):
        analyze_tables(meta, table, freq)
    grad = torch.tensor(table, requires_grad=True)
    assert (nearest_neighbours(grad, torch.tensor([1]), [2, 3], 1) == nearest_neighbours(table, [1], [2, 3], 1)).all()


def test_analyze_tables_names_short_counts_and_a_table_of_width_0(table, freq):
    """U445: counts of 10 ids for a 300-row table were "only 4 ids occur in training ...; lower --top-k"; U447: (300, 0)
    tables gave rms NaN per group with numpy's RuntimeWarnings."""
    with pytest.raises(UserError, match=r"analyze_tables: train_freq: holds counts of 10 ids for a table of 300 rows, "
                                        r"and only 10 of them occur in training: too few for 10 neighbours; pass the "
                                        r"train_freq.npy of the data the run trained on"):
        analyze_tables(table, table.copy(), freq[:10])
    empty = np.zeros((V, 0), dtype="float32")
    with pytest.raises(UserError, match=r"analyze_tables: init: expected a \(V, D\) table of numbers with D >= 1, got "
                                        r"float32 shape \(300, 0\)"):
        analyze_tables(empty, empty, freq)
    found = analyze_tables(table, table.copy(), freq[:260], probes_per_group=2, top_k=3)  # a head past the tokenizer
    assert found.num_candidates == 250


def test_probe_ids_refuses_a_negative_count(freq):
    """U449: per_group=-1 was numpy's "Number of samples, -1, must be non-negative."; 0 is no probes (U448)."""
    groups = frequency_groups(freq, V, 5)
    with pytest.raises(UserError, match=r"probe_ids: per_group: must be a whole number >= 0, got -1; pass"):
        probe_ids(groups, -1)
    assert probe_ids(groups, 0) == [] and len(probe_ids(groups, 1)) == 6


def test_aligned_targets_refuses_a_negative_count():
    """U456: num_losses=-1 returned an empty array without a word (20 for 10 tokens was refused, U455)."""
    with pytest.raises(UserError, match=r"aligned_targets: num_losses: must be a whole number >= 0, got -1; pass"):
        aligned_targets(np.arange(10), -1)
    assert aligned_targets(np.arange(10), 0).tolist() == [] and aligned_targets(np.arange(10), 9).tolist()[-1] == 9


def test_format_table_refuses_names_results_and_labels_that_do_not_match():
    """U461: names and results of different lengths were IndexError "list index out of range"."""
    result = BucketLosses(loss=[1.0, 2.0], count=[3, 4])
    with pytest.raises(UserError, match=r"format_table: results: holds 0 results for 1 names; pass one BucketLosses"):
        format_table(["a"], [], ["x"])
    with pytest.raises(UserError, match=r"format_table: labels: holds 3 labels for results of 2 buckets; pass"):
        format_table(["a"], [result], ["x", "y", "z"])
    with pytest.raises(UserError, match=r"format_table: baseline: must index one of the 2 names, got 2; pass"):
        format_table(["a", "b"], [result, result], ["x", "y"], baseline=2)
    assert len(format_table(["a", "b"], [result, result], ["x", "y"], baseline=1).splitlines()) == 4


def test_bucket_losses_names_the_target_that_is_no_id_and_a_short_train_freq(freq):
    """Found beside U456 (the same module): target -1 was named as the largest target ("target id 5 is outside"),
    2.5 was cut to 2 without a word and NaN cast after numpy's RuntimeWarning, and a train_freq shorter than the
    buckets was IndexError."""
    from leviathan.eval.frequency import bucket_losses, make_buckets

    buckets = make_buckets(freq, 5)
    with pytest.raises(UserError, match=r"target id -1 is outside the bucketed vocabulary \(300 ids\)"):
        bucket_losses([1.0, 2.0], [-1, 5], buckets)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for targets in ([2.5, 3.0], [np.nan, 3.0]):
            with pytest.raises(UserError, match=r"targets hold float64 values, not token ids; pass the integer ids"):
                bucket_losses([1.0, 2.0], targets, buckets)
    with pytest.raises(UserError, match=r"train_freq has 10 ids and the buckets 300; pass the train_freq the buckets"):
        bucket_losses([1.0, 2.0], [1, 299], buckets, freq[:10])
    assert sum(bucket_losses([1.0, 2.0], np.array([1, 299], dtype=np.uint16), buckets, freq).count) == 2
    with pytest.raises(UserError, match=r"hold no target, so every loss would be a mean over none"):  # Q536
        bucket_losses([], [], buckets)


def test_frequency_groups_refuses_a_vocab_size_that_is_no_row_count(freq):
    """Found beside U432: ``vocab_size=300.0`` was numpy's TypeError "expected a sequence of integers", and -1 was
    blamed on the data ("it belongs to data prepared with another tokenizer")."""
    for value, problem in ((300.0, "expected a whole number >= 1, got 300.0"), (-1, "must be a whole number >= 1, "
                                                                                    "got -1")):
        with pytest.raises(UserError, match=rf"frequency_groups: vocab_size: {problem}; pass the table's number"):
            frequency_groups(freq, value, 5)
    assert sum(len(g.ids) for g in frequency_groups(freq, np.int64(V), 5)) == V
