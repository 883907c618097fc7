"""Pure functions refuse a value of the wrong type or meaning in one line, as their siblings do (issue 30 round 24).

``ppl_of(-1.0)`` was 0.37, a perplexity below 1, and ``ppl_of('5')`` a raw TypeError (W556, W557); ``make_buckets``
of counts summing past 2^62 put id 0 in bucket -2 (W555); ``compare_records('a', 'b')`` was a raw AttributeError
(W630); ``linear_cross_entropy`` of labels all ignored was tensor(nan) without a word (W115) and, under autocast, a
float64 hidden beside a float32 head torch's "expected m1 and m2 to have the same dtype" (W678); ``dump_yaml(object())``
was yaml's RepresenterError (W445); ``ModelConfig(embedding='factorized', embedding_rank=10**6)`` for a 300 x 32 table
was accepted, 332M parameters (W21). Each is now an error of the project's own types; the values that mean something
still answer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from leviathan.errors import ArgumentTypeError, ArgumentValueError, ConfigError, UserError


def test_ppl_of_refuses_a_loss_below_zero_and_text():
    """W556, W557. NaN is carried and a diverged loss is inf, as before."""
    from leviathan.eval.frequency import ppl_of

    with pytest.raises(ArgumentValueError, match=r"ppl_of: loss: must be a number >= 0 \(a loss in nats\), got -1.0"):
        ppl_of(-1.0)
    for value in ("5", None, True):
        with pytest.raises(ArgumentTypeError, match=r"ppl_of: loss: expected a loss \(nats, a number >= 0\), got "):
            ppl_of(value)
    assert math.isnan(ppl_of(float("nan"))) and ppl_of(800.0) == math.inf and ppl_of(np.float32(0.0)) == 1.0


def test_make_buckets_refuses_counts_that_sum_past_2_62():
    """W555: a count of 2^63 - 1 wrapped the int64 sum and put id 0 in bucket -2, with a warning about empty buckets."""
    from leviathan.eval.frequency import make_buckets

    freq = np.arange(1, 301, dtype=np.int64)
    assert make_buckets(freq, 5).bucket_of.min() >= 0
    freq[0] = 2**63 - 1
    with pytest.raises(UserError, match=r"train_freq's counts sum to 9.223e\+18, past 4,611,686,018,427,387,904 \(2\^62"):
        make_buckets(freq, 5)


def test_compare_records_refuses_what_is_no_record():
    """W630: compare_records('a', 'b') was "'str' object has no attribute 'top_k'"; embeddings_section likewise."""
    from leviathan.experiments.method.embeddings import compare_records
    from leviathan.experiments.report.embeddings import embeddings_section

    with pytest.raises(ArgumentTypeError, match=r"compare_records: a and b: expected an EmbeddingRecord, got str 'a'; "
                                                r"pass what read_record, read_records or record_of_run return"):
        compare_records("a", "b")
    with pytest.raises(ArgumentTypeError, match=r"embeddings_section: records: expected a list of EmbeddingRecords, "
                                                r"got str 'ab'"):
        embeddings_section("ab")


def test_linear_cross_entropy_refuses_labels_all_ignored_and_a_float64_pair_under_autocast():
    """W115: tensor(nan) for labels all equal to ignore_index (CausalLM.forward refuses them); W678: under autocast
    a float64 hidden and a float32 head reached torch's dtype error (autocast casts no float64)."""
    from leviathan.model.loss import linear_cross_entropy

    h, w = torch.randn(4, 8), torch.randn(10, 8)
    with pytest.raises(ArgumentValueError, match=r"linear_cross_entropy: every label is 5 \(ignored\), so the loss "
                                                 r"would be a mean over no target \(NaN\)"):
        linear_cross_entropy(h, w, torch.tensor([5, 5, 5, 5]), ignore_index=5)
    assert torch.isfinite(linear_cross_entropy(h, w, torch.tensor([5, 1, 5, 5]), ignore_index=5))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(ArgumentTypeError, match=r"linear_cross_entropy: hidden is torch.float64 and weight "
                                                    r"torch.float32; torch.autocast does not cast float64"):
            linear_cross_entropy(h.double(), w, torch.tensor([1, 2, 3, 4]))
        assert torch.isfinite(linear_cross_entropy(h.bfloat16(), w, torch.tensor([1, 2, 3, 4])))


def test_dump_yaml_refuses_what_yaml_settings_cannot_hold(tmp_path):
    """W445: dump_yaml(object(), path) was yaml's raw RepresenterError; nothing is written."""
    from leviathan.config import dump_yaml

    with pytest.raises(ArgumentTypeError, match=r"dump_yaml: obj: expected a config, got object "):
        dump_yaml(object(), tmp_path / "a.yaml")
    with pytest.raises(ArgumentTypeError, match=r"dump_yaml: obj holds object .*, which YAML settings cannot hold"):
        dump_yaml({"a": object()}, tmp_path / "b.yaml")
    assert not list(tmp_path.iterdir())
    assert dump_yaml({"a": 1}) == "a: 1\n"


def test_a_factorized_rank_past_the_table_it_factorizes_is_refused():
    """W21: embedding_rank=10**6 for a 300 x 32 table was accepted (a rank past min(V, D) factorizes nothing). A rank
    up to min(V, D), and the default on the small presets, still build."""
    from leviathan.model.config import ModelConfig
    from leviathan.presets import preset

    small = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, embedding="factorized")
    with pytest.raises(ConfigError, match=r"model.embedding_rank=1,000,000 is past the smaller of vocab_size \(300\) "
                                          r"and hidden_size \(32\).*set model.embedding_rank to at most 32"):
        ModelConfig(**small, embedding_rank=10**6)
    with pytest.raises(ConfigError, match=r"model.embedding_rank=129 is past"):
        ModelConfig(**small, embedding_rank=129)
    assert ModelConfig(**small, embedding_rank=32).embedding_rank == 32
    assert preset("cpu-tiny", vocab_size=64, embedding="factorized").embedding_rank == 128  # the default
