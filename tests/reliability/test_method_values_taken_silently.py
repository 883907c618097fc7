"""Values the method and eval API took without a word (issue 30 round 21, tester P's silent and unclear ids).

Each gave a result that looked like an answer: a NaN or negative loss from ``summarize``, a NaN fit from
``fit_power_law(fix_E=nan)``, NaN from ``power_law`` of a negative size, a record of 5 buckets for ``num_buckets=0``,
every slowdown None for a baseline that is no variant, and a sweep folder 's' named for ``merge_sweeps('sw1')``.
Each is now refused where it is taken, naming the argument, the range and the fix.
"""

from __future__ import annotations

import math

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_summarize_refuses_no_predictions_and_a_negative_total():
    """P392: ``summarize(5.0, 0)`` returned loss NaN; P393: ``summarize(-5.0, 10)`` loss -0.5, ppl 0.61."""
    from leviathan.eval.perplexity import summarize

    with pytest.raises(ValueError, match=r"num_predicted must be a whole number >= 1, got 0 .*; pass their count"):
        summarize(5.0, 0)
    with pytest.raises(ValueError, match=r"total_nats must be .*a number >= 0.*got -5.0; pass token_losses"):
        summarize(-5.0, 10)
    assert summarize(5.0, 10).loss == 0.5 and math.isnan(summarize(math.nan, 3).loss)  # a diverged model's sum


def test_power_law_and_a_fixed_E_outside_their_range_are_refused():
    """P448: ``fit_power_law(..., fix_E=nan)`` returned E=nan, rmse nan; P455: ``power_law(-1.0, ...)`` nan."""
    from leviathan.experiments.method.scaling import fit_power_law, power_law

    sizes, losses = [1e4, 2e4, 4e4, 8e4], [5.0, 4.6, 4.3, 4.1]
    for fix_E, problem in ((math.nan, "must be a finite number >= 0, got nan"),
                           (-1.0, r"must lie in \[0, 4.1\)"), (10.0, r"must lie in \[0, 4.1\)")):
        with pytest.raises(UserError, match=f"fit_power_law: fix_E: {problem}.*; pass the irreducible loss"):
            fit_power_law(sizes, losses, num_bootstrap=0, fix_E=fix_E)
    assert fit_power_law(sizes, losses, num_bootstrap=0, fix_E=0.0).E == 0.0
    for size in (-1.0, 0.0, math.nan):
        with pytest.raises(UserError, match="power_law: N: a parameter count must be a finite number > 0"):
            power_law([1e4, size], 1.0, 1.0, 0.5)
    assert power_law(1e4, 1.0, 1.0, 0.5) == pytest.approx(1.01)


def test_record_options_take_zero_buckets_as_given_not_as_left_open(finished_run):
    """P234: ``record_of_run(run, options=RecordOptions(num_buckets=0))`` (or False) made a record of 5 buckets."""
    from leviathan.experiments.machinery.embedding_files import RecordOptions, record_of_run

    for value in (0, False):
        with pytest.raises(UserError, match=f"num_buckets must be a whole number between 2 and 1000.*got {value}"):
            record_of_run(finished_run, options=RecordOptions(num_buckets=value))
    with pytest.raises(UserError, match="unknown bucketing method ''"):
        record_of_run(finished_run, options=RecordOptions(bucket_method=""))
    assert RecordOptions().filled().num_buckets == 5


def test_throughput_table_refuses_a_baseline_that_is_no_variant_or_regime():
    """P460: ``throughput_table(rows, baselines={'iso_body': 'nope'})`` gave every slowdown None; a key that is no
    regime was ignored; both without a word."""
    from leviathan.experiments.method.efficiency import throughput_table

    with pytest.raises(UserError, match="throughput_table: baseline: no such variant 'nope'; pass one of dense_tied"):
        throughput_table([], baselines={"iso_body": "nope"})
    with pytest.raises(UserError, match="throughput_table: regime: no such regime 'leviathan'; pass one of iso_body"):
        throughput_table([], baselines={"leviathan": "dense_tied"})
    with pytest.raises(UserError, match="baselines: expected a dict of regime -> baseline variant"):
        throughput_table([], baselines="dense_tied")
    assert throughput_table([], baselines={"iso_body": "dense_untied", "variants": None}) == []


def test_merge_sweeps_of_one_path_as_a_str_names_the_list_it_wants(tmp_path):
    """P327: ``merge_sweeps('sw1')`` iterated the characters: "sweep folder 's' does not exist"."""
    from leviathan.experiments.machinery.shards import merge_sweeps

    (tmp_path / "sw1").mkdir()
    with pytest.raises(UserError, match=r"merge_sweeps: paths: expected a list of sweep folders, got the single path "
                                        r"'.*sw1'; pass a list, e.g. merge_sweeps\(\['.*sw1'\]\)"):
        merge_sweeps(str(tmp_path / "sw1"))
