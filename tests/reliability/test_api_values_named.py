"""The Python API's analysis and conversion functions of issue 30 round 19 (ids J...): each took a value it cannot
compute with, or ended in a library's error naming nothing the caller passed. Each is now one error naming the
argument, the problem and the fix; the values that were right before still give the same results.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from leviathan.errors import ConfigError, UserError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_run_grid, tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_gap_slope_and_mean_known_refuse_what_they_cannot_compute():
    """J281: ``width.gap_slope`` of equal x returned nan (``least_squares_slope`` refuses it since G217); J282: of
    unequal lengths numpy's broadcast ValueError; J289: ``paired.mean_known(['1', 2.0])`` numpy's dtype TypeError.
    gap_slope is least_squares_slope now, one rule."""
    from leviathan.experiments.method.paired import mean_known
    from leviathan.experiments.method.width import gap_slope

    with pytest.raises(UserError, match="gap_slope: xs: are all equal, so no line has a slope"):
        gap_slope([1.0, 1.0], [0.1, 0.2])
    with pytest.raises(UserError, match=r"gap_slope: xs: expected as many numbers as ys \(2\), at least 2, got 3"):
        gap_slope([1.0, 2.0, 3.0], [0.1, 0.2])
    with pytest.raises(UserError, match="gap_slope: xs, ys: expected numbers, got str '2'"):
        gap_slope([1.0, "2"], [0.1, 0.2])
    assert gap_slope([0.0, 1.0, 2.0], [0.0, 1.0, 0.5]) == pytest.approx(0.25)
    with pytest.raises(UserError, match=r"mean_known: xs: expected numbers \(or None\), got str '1'; pass the values"):
        mean_known(["1", 2.0])
    assert mean_known([None, 1, np.float32(2.0)]) == 1.5 and mean_known([None]) is None


def test_efficiency_and_frequency_refuse_a_target_regime_or_baseline_that_is_none():
    """J280: ``tokens_to_reach(curve, nan)`` returned None, read as "never reached"; J283, J284:
    ``efficiency_from_results(rows, regime='nope')`` and ``frequency_from_results(rows, baseline='nope')`` returned []
    without a word. A diverged reference (a NaN final loss) is still "not reached" in sample_efficiency."""
    from leviathan.experiments.method.efficiency import Curve, efficiency_from_results, sample_efficiency, \
        tokens_to_reach
    from leviathan.experiments.method.frequency import frequency_from_results

    curve = Curve(np.array([0.0, 100.0, 200.0]), np.array([5.0, 4.0, 3.0]))
    for target in (float("nan"), float("inf"), "3.5"):
        with pytest.raises(UserError, match="tokens_to_reach: target: .*a finite loss"):
            tokens_to_reach(curve, target)
    assert tokens_to_reach(curve, 3.5) == pytest.approx(150.0) and tokens_to_reach(curve, 2.0) is None
    diverged = Curve(np.array([0.0, 100.0]), np.array([5.0, float("nan")]))
    assert sample_efficiency(curve, diverged).reached is False
    with pytest.raises(UserError, match="efficiency_from_results: regime: no such regime 'nope'; pass one of iso_body"):
        efficiency_from_results([], regime="nope")
    with pytest.raises(UserError, match="efficiency_from_results: baseline: no such variant 'nope'"):
        efficiency_from_results([], baseline="nope")
    with pytest.raises(UserError, match="frequency_from_results: baseline: no such variant 'nope'; pass one of "
                                        "dense_tied"):
        frequency_from_results([], baseline="nope")
    with pytest.raises(UserError, match="frequency_from_results: regime: no such regime 'nope'"):
        frequency_from_results([], regime="nope")
    assert efficiency_from_results([], regime="isoparametric") == [] == frequency_from_results([], baseline="leviathan")


def test_lr_sweep_pick_refuses_a_learning_rate_no_run_trains_with():
    """J288: ``lr_sweep.pick({-1e-3: 3.0, 3e-3: 4.0})`` picked -0.001 without a word."""
    from leviathan.experiments.method.lr_sweep import pick

    for lr in (-1e-3, 0.0, float("nan"), "1e-3"):
        with pytest.raises(UserError, match="lr_sweep.pick: losses: a learning rate .a key. .*key each loss by the "
                                            "positive learning rate"):
            pick({lr: 3.0, 3e-3: 4.0})
    assert pick({1e-3: 3.0, 3e-3: 4.0}) == 1e-3 and pick({1e-3: None}) is None


def test_generate_names_a_tensor_given_for_a_number(finished_run):
    """J9, J12, J15: ``generate(m, ids, torch.tensor(3))``, ``eos_id=torch.tensor(1)``, ``temperature=
    torch.tensor(0.5)`` were refused as values out of range ("must be a whole number >= 0, got tensor(3)"): 3 is one.
    The type is named, and how to pass the number."""
    from leviathan.checkpoint.read import load_model
    from leviathan.generation import Decoder, generate

    model, _ = load_model(str(finished_run))
    for args, kw, name in [((torch.tensor(3),), {}, "max_new_tokens"), ((3,), {"eos_id": torch.tensor(1)}, "eos_id"),
                           ((3,), {"temperature": torch.tensor(0.5)}, "temperature"),
                           ((3,), {"top_p": np.array(0.5)}, "top_p")]:
        with pytest.raises(TypeError, match=f"{name} must be a plain number, got a (Tensor|ndarray) .*; pass a Python "
                                            f"number, e.g. {name}=value.item"):
            generate(model, [1, 2, 3], *args, **kw)
    with pytest.raises(TypeError, match="top_k must be a plain number, got a Tensor"):
        Decoder(model, 1.0, torch.tensor(5))
    assert generate(model, [1, 2, 3], 2, eos_id=1, temperature=0.5, seed=0).shape[-1] >= 4


def test_to_native_names_an_adopted_or_transformers_model_and_what_to_do(tmp_path):
    """J294, J295: ``to_native(load_adopted(DIR))`` and ``to_native(LlamaForCausalLM(...))`` ended in transformers'
    AttributeError "'LlamaConfig' object has no attribute 'to_model_config'"."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import adopt, load_adopted
    from leviathan.hf.export import to_native

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, max_position_embeddings=64)
    adopt(config, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(tmp_path / "ad")
    with pytest.raises(TypeError, match="to_native takes a LeviathanForCausalLM .*got an adopted LlamaForCausalLM; "
                                        r"an adopted model stays .*to_original\(model\)"):
        to_native(load_adopted(tmp_path / "ad"))
    with pytest.raises(TypeError, match=r"got a LlamaForCausalLM; .*leviathan.hf.adopt\(model\) gives it a generator"):
        to_native(LlamaForCausalLM(config))
    with pytest.raises(TypeError, match="got str 'x'; pass a model loaded from an export folder"):
        to_native("x")


@pytest.mark.parametrize("key, value", [("hidden_act", "gelu"), ("attention_bias", True), ("mlp_bias", True),
                                        ("rope_scaling", {"rope_type": "linear", "factor": 2.0}),
                                        ("rope_parameters", {"rope_type": "yarn", "factor": 2.0})])
def test_an_export_whose_config_names_a_setting_the_model_does_not_implement_is_refused(exported, tmp_path, key,
                                                                                       value):
    """J42: an export's config.json with hidden_act edited to 'gelu' loaded, config.hidden_act said gelu, and the
    logits were exp1's (SiLU): a setting the model does not read was trusted and ignored (the root of G210). Such
    a setting is refused on load, naming the key; the value the model implements loads."""
    import leviathan.hf  # noqa: F401  (registers the Auto classes)
    from transformers import AutoModelForCausalLM

    edited = Path(shutil.copytree(exported, tmp_path / "e"))
    (edited / "leviathan_output.json").unlink()  # an export's own config.json is digested (G210, fix19a) and an edit
    # refused by that first; a folder without the marker (a config written by hand or by another tool) meets this rule
    config = json.loads((edited / "config.json").read_text())
    (edited / "config.json").write_text(json.dumps({**config, key: value}))
    with pytest.raises(ConfigError, match=f"{key} .* is a setting this model does not implement .*remove the key"):
        AutoModelForCausalLM.from_pretrained(str(edited))
    implemented = {"hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "rope_scaling": None,
                   "rope_parameters": {"rope_type": "default"}}[key]
    (edited / "config.json").write_text(json.dumps({**config, key: implemented}))
    assert AutoModelForCausalLM.from_pretrained(str(edited)) is not None


def test_a_sweep_whose_data_dir_is_a_train_run_names_it_as_one(data, finished_run, tmp_path):
    """J267: ``run_sweep(load_grid(G, data_dir=RUN))`` of a grid giving data.vocab_size said "RUN is not a prepared
    data dir (no meta.json); run `leviathan prepare SOURCE --out RUN`": preparing into the train run's folder (without
    data.vocab_size, "is not prepared ...; run `leviathan prepare ...` first"). load_grid names the folder as a run and
    suggests the data it trained on or a new folder, as read_meta does for the sweep's later readers; the run is
    untouched."""
    import yaml

    from leviathan.data.meta import read_meta
    from leviathan.experiments.machinery.grid import load_grid

    before = tree_hashes(finished_run)
    grid_file = one_run_grid(data, tmp_path)
    sized = tmp_path / "sized.yaml"
    raw = yaml.safe_load(grid_file.read_text())
    sized.write_text(yaml.safe_dump({**raw, "data": {**raw["data"], "vocab_size": 300}}))
    said = ("is a run folder (checkpoints/, as `leviathan train` writes), not prepared data; pass the data folder it "
            "trained on (data.path in its config.yaml), or prepare one into a new folder (`leviathan prepare SOURCE "
            "--out NEW_DIR`)")
    for grid in (grid_file, sized):
        with pytest.raises(UserError) as caught:
            load_grid(str(grid), data_dir=str(finished_run))
        assert f"data dir {str(finished_run)!r} {said}" in str(caught.value), caught.value
        assert f"--out {finished_run}" not in str(caught.value)
    with pytest.raises(UserError) as caught:
        read_meta(finished_run)
    assert str(caught.value) == f"{finished_run} {said}" and tree_hashes(finished_run) == before
    with pytest.raises(UserError, match="is not a prepared data folder .no meta.json.; if it holds the text to "
                                        "train on, prepare it into a new folder"):
        read_meta(tmp_path)  # a plain folder of files: prepare them apart, not into it (round 25, X30)
    assert load_grid(str(sized), data_dir=str(tmp_path / "later")).data_dir == tmp_path / "later"
