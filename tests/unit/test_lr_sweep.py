"""The learning-rate pick rule of a pre-sweep (results/o200k/PLAN.md), on rows built in the test."""

import math

import pytest

from leviathan.config import to_dict
from leviathan.errors import UserError
from leviathan.experiments.method.lr_sweep import pick, pick_learning_rates
from leviathan.experiments.machinery.results import ResultRow
from leviathan.run_config import OptimConfig, RunConfig


def row(variant, lr, loss, config=True):
    resolved = to_dict(RunConfig(max_steps=1, seed=0, optim=OptimConfig(lr=lr)))  # a row records the whole resolved
    resolved["model"]["embedding"] = variant  # config, which agrees with the row's seed and variant
    return ResultRow.from_dict({"name": f"lr{lr:g}-{variant}-s0", "variant": variant, "seed": 0,
                                "eval": {"val": {"loss": loss}}, "config": resolved if config else None})


@pytest.mark.parametrize("losses, lr", [
    ({1e-3: 5.0, 3e-3: 4.9, 1e-2: 5.1}, 3e-3),            # the lowest
    ({1e-3: 4.905, 3e-3: 4.9, 1e-2: 5.1}, 1e-3),          # within 0.01 of the lowest: the lower lr
    ({1e-3: 4.95, 3e-3: 4.9, 1e-2: 4.89}, 3e-3),          # 1e-2 lowest, 3e-3 within 0.01, 1e-3 not
    ({1e-3: 5.0, 3e-3: None, 1e-2: math.nan}, 1e-3),      # diverged runs lose to every finite one
    ({1e-3: None}, None),
])
def test_pick_rule(losses, lr):
    assert pick(losses) == lr


def test_edges_are_named_and_bad_rows_refused():
    choices = pick_learning_rates([row("dense_tied", 1e-3, 5.0), row("dense_tied", 3e-3, 5.2),
                                   row("leviathan", 1e-3, 5.3), row("leviathan", 1e-2, 5.0),
                                   row("leviathan", 3e-3, 5.1)])
    assert choices["dense_tied"].lr == 1e-3 and choices["dense_tied"].edge == "lower"
    assert choices["leviathan"].lr == 1e-2 and choices["leviathan"].edge == "upper"
    assert list(choices["leviathan"].losses) == [1e-3, 3e-3, 1e-2]  # sorted by lr
    with pytest.raises(UserError, match="no resolved config"):
        pick_learning_rates([row("leviathan", 1e-3, 5.0, config=False)])
    with pytest.raises(UserError, match="run 'lr0.001-leviathan-s0' has two different rows"):  # round 23
        pick_learning_rates([row("leviathan", 1e-3, 5.0), row("leviathan", 1e-3, 5.1)])


def test_analyze_lr_prints_the_table_and_the_picks(tmp_path, capsys):
    import json

    from leviathan.cli import main
    from leviathan.experiments.machinery.results import append_result

    for variant, lr, loss in (("dense_tied", 1e-3, 5.0), ("dense_tied", 3e-3, 4.8), ("leviathan", 1e-3, 4.7)):
        append_result(tmp_path / "results.jsonl", row(variant, lr, loss))
    assert main(["analyze", "lr", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| dense_tied | 5.0000 | **4.8000** | 0.003 (upper edge of the lrs tried) |" in out
    assert main(["analyze", "lr", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["leviathan"] == {"losses": {"0.001": 4.7}, "lr": 0.001, "edge": None}


def test_analyze_lr_refuses_rows_with_one_learning_rate_per_arm(tmp_path, capsys):
    """Issue 30 round 14 (B336): a main grid's rows (one lr per arm) were shown as a pre-sweep, "picked" for each."""
    from leviathan.cli import main
    from leviathan.experiments.machinery.results import append_result

    for variant, lr, loss in (("dense_tied", 3e-3, 5.0), ("leviathan", 3e-3, 4.7)):
        append_result(tmp_path / "results.jsonl", row(variant, lr, loss))
    assert main(["analyze", "lr", str(tmp_path)]) == 2
    assert "hold one learning rate per arm, so there is nothing to pick" in capsys.readouterr().err


def test_analyze_lr_marks_an_arm_picked_from_fewer_lrs_than_the_pre_sweep_tried(tmp_path, capsys):
    """Issue 30 round 15 (B180): a pre-sweep row whose final loss was NaN is skipped by the reader, and its arm was
    "picked" from the one lr left with no mark, exit 0. The cell says "missing", the pick "incomplete", and a
    warning names the arm and the lr."""
    import json

    from leviathan.cli import main
    from leviathan.experiments.machinery.results import append_result

    for variant, lr, loss in (("dense_tied", 1e-3, 5.0), ("dense_tied", 1e-2, 4.8), ("leviathan", 1e-3, 4.7)):
        append_result(tmp_path / "results.jsonl", row(variant, lr, loss))
    with open(tmp_path / "results.jsonl") as f:
        first = json.loads(f.readline())
    first.update(name="lr0.01-leviathan-s0", variant="leviathan", final_val_loss=float("nan"))
    first["config"]["optim"]["lr"], first["config"]["model"]["embedding"] = 1e-2, "leviathan"
    with open(tmp_path / "results.jsonl", "a") as f:
        f.write(json.dumps(first) + "\n")  # NaN: skipped with a warning by the reader
    assert main(["analyze", "lr", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "| leviathan | **4.7000** | missing | 0.001 (incomplete: no row at lr 0.01) |" in captured.out, captured.out
    assert "warning: the pre-sweep is incomplete (leviathan: no row at lr 0.01)" in captured.err, captured.err
