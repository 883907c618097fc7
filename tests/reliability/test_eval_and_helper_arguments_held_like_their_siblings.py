"""Evaluation, analysis and helper functions take only what a sibling already refuses to take (issue 30 round 25).

The kind of round 24's test_api_arguments_held_like_their_siblings.py, in other functions: ``evaluate`` of
``load_model``'s (model, config) pair was "'tuple' object has no attribute 'parameters'" where ``generate`` names it
(Y404), and ``generate``'s own line embedded the pair's repr, three lines (Y413); ``num_bytes`` of 0 or 1 for 200
tokens gave bpb None or 1,535 where meta.json's byte counts are held to the tokens (Y431, Y432);
``paired_comparisons(eval_sets=[])`` was read as every set (Y450); ``relative_reduction('ab', 'cd')`` was a raw
TypeError (Y566); ``seed_everything(True)`` was seed 1 and ``'3'`` a % formatting's TypeError (Y589, Y590);
``initial_model(ModelConfig)`` an AttributeError where ``train`` names the mistake (Y592); ``fig_loss_curves([])``
returned "nothing drawn" and wrote an empty PNG (Y639); ``load_train_freq(meta=5)`` and ``train_commands(G, 5)``
raw AttributeError / TypeError (Y661, Y685; ``runs=[]`` wrote every run's line, as Y450).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)
from test_row_identity import grid_file  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _val(data: Path) -> np.ndarray:
    return np.fromfile(data / "val.bin", dtype=np.uint16)[:200]


def test_evaluate_and_generate_name_load_models_pair_in_one_line(finished_run, data):
    """Y404: evaluate's raw AttributeError; Y413: generate's line held the pair's multi-line repr."""
    from leviathan.checkpoint.read import load_model
    from leviathan.eval.perplexity import evaluate, token_losses
    from leviathan.generation import generate

    pair = load_model(finished_run)
    calls = [lambda: evaluate(pair, _val(data), 16, 2), lambda: token_losses(pair, _val(data), 16, 2),
             lambda: generate(pair, [1, 2], 3)]
    for call in calls:
        with pytest.raises(UserError, match=r"got a tuple of \(CausalLM, RunConfig\) \(load_model returns the model "
                                            r"and its config: take load_model\(RUN\)\[0\]\)") as info:
            call()
        assert "\n" not in str(info.value) and "LlamaModel" not in str(info.value)
    assert evaluate(pair[0], _val(data), 16, 2).tokens == 199


def test_evaluate_refuses_a_byte_count_no_text_of_the_tokens_has(finished_run, data):
    """Y431, Y432: 0 bytes gave bpb None (None says unknown) and 1 byte a bpb of 1,535 for 199 tokens."""
    from leviathan.checkpoint.read import load_model
    from leviathan.eval.perplexity import evaluate

    model = load_model(finished_run)[0]
    for num_bytes in (0, 1, 66, 200 * 1000 + 1):
        with pytest.raises(ValueError, match=rf"num_bytes {num_bytes} is no size of the text 200 tokens encode"):
            evaluate(model, _val(data), 16, 2, num_bytes=num_bytes)
    assert evaluate(model, _val(data), 16, 2, num_bytes=67).bpb > 0
    assert evaluate(model, _val(data), 16, 2, num_bytes=None).bpb is None


def test_paired_comparisons_refuses_an_empty_selection(swept):
    """Y450: eval_sets=[] was read as None, every set."""
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.method.paired import paired_comparisons

    rows = read_results(swept)
    with pytest.raises(UserError, match=r"paired_comparisons: eval_sets: is an empty list: no eval set to compare on; "
                                        r"pass a list of the sets the rows hold \(val\)"):
        paired_comparisons(rows, eval_sets=[])
    assert list(paired_comparisons(rows, eval_sets=None)[0].eval) == ["val"]


def test_relative_reduction_names_losses_that_are_no_numbers():
    """Y566: 'unsupported operand type(s) for -: 'str' and 'str''."""
    from leviathan.eval.frequency import relative_reduction

    for baseline, model, said in [("ab", "cd", "baseline: .* got str 'ab'"), ([1.0], ["x"], "model: .* got str 'x' "
                                                                                          "among them")]:
        with pytest.raises(TypeError, match=f"relative_reduction: {said}; pass BucketLosses.loss of each run"):
            relative_reduction(baseline, model)
    assert relative_reduction([1.0, None], [1.0, 2.0]) == [0.0, None]


@pytest.mark.parametrize("seed, error", [(True, TypeError), ("3", TypeError), (-1, ValueError), (2**32, ValueError)],
                         ids=["bool", "text", "negative", "past-32-bits"])
def test_seed_everything_takes_a_seed(seed, error):
    """Y589: True was seed 1 without a word; Y590: '3' was a raw TypeError naming no argument."""
    from leviathan.initial_model import seed_everything

    with pytest.raises(error, match=r"seed_everything: seed must be an integer in \[0, 4294967295\]"):
        seed_everything(seed)
    seed_everything(np.int64(3))


def test_initial_model_names_a_model_config_given_for_the_run_config():
    """Y592: "'ModelConfig' object has no attribute 'seed'"."""
    from leviathan.initial_model import initial_model
    from leviathan.presets import preset

    with pytest.raises(TypeError, match=r"initial_model: cfg must be a RunConfig .*got ModelConfig; pass "):
        initial_model(preset("cpu-tiny"))


def test_an_empty_loss_figure_is_not_written(tmp_path):
    """Y639: fig_loss_curves([]) returned False ("nothing drawn") and wrote an empty 720 x 504 PNG."""
    from leviathan.experiments.report.figures import fig_frontier, fig_loss_curves

    assert fig_loss_curves([], tmp_path / "e.png") is False
    assert fig_frontier([], None, None, "val", tmp_path / "f.png") is False
    assert list(tmp_path.iterdir()) == []


def test_load_train_freq_and_train_commands_name_an_argument_of_the_wrong_kind(data, tmp_path):
    """Y661: meta=5 was "'int' object has no attribute 'files'"; Y685: out_dir 5 pathlib's TypeError."""
    from leviathan.data.companions import load_train_freq
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import train_commands

    with pytest.raises(TypeError, match=r"load_train_freq: meta must be the folder's PreparedMeta .*got int 5"):
        load_train_freq(data, meta=5)
    assert load_train_freq(data).ndim == 1
    grid = load_grid(str(grid_file(tmp_path, data)))
    for kwargs, said in [({"out_dir": 5}, r"train_commands: out_dir: expected a path"),
                         ({"out_dir": tmp_path, "threads": True}, r"train_commands: threads: expected a positive"),
                         ({"out_dir": tmp_path, "runs": ["a"]}, r"train_commands: runs must be a list of the grid's"),
                         ({"out_dir": tmp_path, "runs": []}, r"train_commands: runs: is an empty list: no run to ")]:
        with pytest.raises(UserError, match=said):
            train_commands(grid, **kwargs)
    with pytest.raises(UserError, match=r"train_commands: grid must be a Grid"):
        train_commands("g.yaml", tmp_path)
    assert len(train_commands(grid, tmp_path, threads=1)) == 2
