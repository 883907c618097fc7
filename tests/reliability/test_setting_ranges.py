"""The float settings of the model and the optimiser are bounded at validation (issue 30 round 15, A167, A169-A174,
A178-A181): only > 0 was checked, so input_lr_mult 1e300 ended in torch's overflow traceback, ln_eps / rms_norm_eps
/ optim.eps 1e300, grad_clip 1e-300 or lr 1e-300 trained a model that learned nothing (exit 0, no word), and
input_lr_mult 1e30, initializer_range 1e300, rope_theta 1e-300 or weight_decay 1e300 diverged with the lr blamed.
Now each is one line naming the setting and its range, before anything is written; and a divergence line names
the settings off their defaults that it cannot rule out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides  # noqa: E402
from test_bad_input import DIVERGE, fails, huge_lr_allowed, resume  # noqa: E402,F401

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_an_overflowing_input_lr_mult_is_one_line_not_a_traceback(data, tmp_path):
    """A170: a real ``leviathan train`` process; the line names the setting and the range."""
    run = tmp_path / "run"
    line = cli_error(["train", *run_overrides(data, max_steps=2, **{"optim.input_lr_mult": 1e300}), "--run-dir",
                      run, "--quiet"])
    assert line == ("error: optim.input_lr_mult=1e+300 is outside the range a run can use: set it in [0.001, 1000] "
                    "(1 = no multiplier)"), line
    assert not run.exists()


@pytest.mark.parametrize("setting, words", [
    ("optim.input_lr_mult=1e30", "optim.input_lr_mult=1e+30 is outside the range a run can use"),  # A171
    ("model.initializer_range=1e300", "model.initializer_range=1e+300 is outside the range any model uses: set it "
                                      "in [1e-08, 1] (default 0.02)"),  # A172
    ("model.rope_theta=1e-300", "model.rope_theta=1e-300 is outside the range any model uses: set it in "
                                "[1, 1e+12] (default 10000)"),  # A173
    ("model.rms_norm_eps=1e300", "model.rms_norm_eps=1e+300 is outside the range any model uses"),  # A174
    ("model.generator_ln_eps=1e300", "model.generator_ln_eps=1e+300 is outside the range any model uses"),  # A169
    ("optim.eps=1e300", "optim.eps=1e+300 is outside the range a run can use: set it in [1e-30, 0.1]"),  # A178
    ("optim.grad_clip=1e-300", "optim.grad_clip=1e-300 is outside the range a run can use: set it in [1e-06, "
                               "1e+06], or 0 / null to disable clipping"),  # A179
    ("optim.lr=1e-300", "optim.lr=1e-300 is outside the range a run can use: set it in [1e-08, 10]"),  # A180
    ("optim.weight_decay=1e300", "optim.weight_decay=1e+300 is outside the range a run can use"),  # A181
])
def test_a_setting_outside_its_range_is_refused_before_the_run(capsys, data, tmp_path, setting, words):
    run = tmp_path / "run"
    line = fails(capsys, "train", *run_overrides(data, max_steps=2), setting, "--run-dir", run, "--quiet")
    assert line.startswith(f"error: {words}"), line
    assert not run.exists()


def test_adopt_refuses_a_layernorm_eps_outside_its_range():
    """A167: ``adopt(..., ln_eps=1e300)`` gave every id the same input embedding."""
    from leviathan.config import ConfigError
    from leviathan.model.config import ModelConfig

    with pytest.raises(ConfigError, match=r"model\.generator_ln_eps=1e\+300 is outside the range any model uses"):
        ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    generator_ln_eps=1e300)


def test_disabling_grad_clip_and_every_preset_stay_valid(data, tmp_path):
    """0 and null still disable clipping; the shipped configs load with their own values."""
    from leviathan.run_config import load_run_config

    for clip in ("0", "null"):
        assert load_run_config(None, run_overrides(data, **{"optim.grad_clip": clip})).optim.grad_clip in (0, None)
    for name in ("tiny", "cpu-small", "paper-109m"):
        load_run_config(name, [f"data.path={data}"])


def test_the_divergence_line_names_changed_settings_it_cannot_rule_out(capsys, data, run_copy, huge_lr_allowed):
    """A171, A181: the line blamed the lr alone when input_lr_mult or weight_decay was set off its default."""
    line = fails(capsys, *resume(run_copy, data, max_steps=8, **DIVERGE, **{"optim.input_lr_mult": 3.0,
                                                                            "optim.weight_decay": 0.5}))
    assert "training diverged at step" in line and "Try a lower learning rate" in line
    assert "or check the changed settings optim.input_lr_mult=3, optim.weight_decay=0.5" in line, line
