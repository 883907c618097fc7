"""Sample efficiency (tokens to reach a reference loss), gains over training, throughput table."""

import json

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.experiments.method.efficiency import (Curve, format_efficiency, gain_over_training, sample_efficiency,
                                              throughput_table, tokens_to_reach, val_curve)
from leviathan.experiments.machinery.results import ResultRow
from leviathan.io import read_metrics
from leviathan.train.metrics import MetricsRow, read_metric_rows


def test_tokens_to_reach_interpolates_linearly():
    c = Curve(np.array([0.0, 100.0, 200.0]), np.array([5.0, 4.0, 3.0]))
    assert tokens_to_reach(c, 3.5) == pytest.approx(150.0)
    assert tokens_to_reach(c, 4.0) == pytest.approx(100.0)
    assert tokens_to_reach(c, 6.0) == 0.0
    assert tokens_to_reach(c, 2.9) is None


def test_sample_efficiency_of_a_curve_twice_as_fast():
    t = np.linspace(1e6, 1e8, 100)
    ref = Curve(t, 2.0 + 30.0 * t ** -0.2)
    fast = Curve(t, 2.0 + 30.0 * (2.1 * t) ** -0.2)  # same curve, 2.1x the effective tokens
    res = sample_efficiency(fast, ref)
    assert res.reached and res.factor == pytest.approx(2.1, rel=0.01)
    slow = sample_efficiency(ref, fast)
    assert not slow.reached and slow.factor is None and slow.factor_upper_bound == pytest.approx(1.0)
    assert "fewer tokens" in format_efficiency("lev", "dense", res)
    assert "does not reach" in format_efficiency("dense", "lev", slow)
    g = gain_over_training(fast, ref)
    assert len(g.tokens) == 100 and all(r > 0 for r in g.reduction)


def test_read_metrics_and_val_curve(tmp_path):
    rows = [{"step": 1, "tokens": 10, "train_loss": 5.0, "lr": 1e-3},
            {"step": 2, "tokens": 20, "val_loss": 4.5, "split": "val"},
            {"step": 4, "tokens": 40, "val_loss": 4.0, "split": "val"},
            {"step": 2, "tokens": 20, "val_loss": 4.4, "split": "val"},  # step 2 again: no logger writes it (a
            {"step": 4, "tokens": 40, "val_loss": 9.0, "split": "other"}]  # resume rewrites the file; round 28, U481)
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n{\"torn")
    got = read_metrics(tmp_path)
    assert len(got) == 5
    said = []
    c = val_curve(read_metric_rows(tmp_path, report=said.append), split="val")
    assert c.tokens.tolist() == [20.0, 40.0] and c.loss.tolist() == [4.5, 4.0]
    assert "line 4 has step 2 after step 4" in said[0] and len(said) == 2  # and the torn line
    with pytest.raises(UserError):
        val_curve([MetricsRow(tokens=1, train_loss=3)])
    with pytest.raises(UserError):
        read_metrics(tmp_path / "missing")


def test_throughput_table_slowdown_within_groups():
    hw = {"device": "cpu", "cpu": "X", "torch_threads": 2}
    rows = [ResultRow(name="a", regime="iso_body", size="s", seed=0, variant="dense_tied", tokens_per_s=1000.0, hardware=hw),
            ResultRow(name="b", regime="iso_body", size="s", seed=0, variant="leviathan", tokens_per_s=700.0, hardware=hw),
            ResultRow(name="c", regimes=["isoparametric"], size="s", seed=0, variant="dense_untied", tokens_per_s=900.0,
                 hardware=hw),
            ResultRow(name="d", regimes=["isoparametric"], size="s", seed=0, variant="leviathan", tokens_per_s=450.0,
                 hardware={**hw, "cpu": "Y"})]
    table = {(e.regime, e.variant): e for e in throughput_table(rows)}
    assert table[("iso_body", "leviathan")].slowdown == pytest.approx(0.3)
    assert table[("iso_body", "dense_tied")].slowdown is None
    assert table[("isoparametric", "leviathan")].slowdown is None  # different hardware
    mixed = {(e.regime, e.variant): e for e in throughput_table(rows, allow_mixed_hardware=True)}
    assert mixed[("isoparametric", "leviathan")].slowdown == pytest.approx(0.5)
