"""The width round's grid files (results/o200k-width/PLAN.md): the one line that waits for the fair-shot round is the
same in all four, width 64's runs are the o200k round's, each pre-sweep arm is a main-grid arm, and the benchmark's
width configurations are the grid's bodies."""

import pytest
import yaml

from leviathan.bench.configs import CONFIGS, WIDTH_CONFIGS
from leviathan.config import to_dict
from leviathan.configs import find_grid_file
from leviathan.experiments.machinery.drift import config_differences
from leviathan.experiments.machinery.grid import load_grid
from leviathan.experiments.machinery.presweep import presweep_arms
from leviathan.run_config import load_run_config

WIDTH_GRIDS = ("o200k-width", "o200k-width-lr", "paper-width", "paper-width-lr")


def resolved(grid, name):
    return to_dict(load_run_config(None, grid.run_overrides(grid.run(name)), check_data=False).resolved())


def test_the_pick_is_one_line_and_the_same_in_every_width_grid():
    picks = [yaml.safe_load(find_grid_file(g).read_text())["anchors"]["pick"] for g in WIDTH_GRIDS]
    # the fair-shot round's pick (results/o200k-fair/report.md): d64L6-ilr03, written as o200k-fair.yaml writes it
    fair = yaml.safe_load(find_grid_file("o200k-fair").read_text())["sizes"]["d64L6-ilr03"]
    assert all(p == picks[0] for p in picks) and picks[0] == {"model": {}, "run": fair["run"]}
    lines = [[line for line in find_grid_file(g).read_text().splitlines() if line.strip().startswith("pick:")]
             for g in WIDTH_GRIDS]
    assert all(len(found) == 1 for found in lines)


def test_width_64_runs_are_the_earlier_rounds_runs():
    """The tables are the o200k round's runs, the generator the fair-shot round's pick (its seeds: PLAN.md)."""
    width, o200k, fair = load_grid("o200k-width"), load_grid("o200k"), load_grid("o200k-fair")
    for mine, theirs, grid in (("d64L6-dense_untied-s1", "d64L6-dense_untied-s1", o200k),
                               ("d64L6-dense_tied-s0", "d64L6-dense_tied-s0", o200k),
                               ("d64L6-pick-leviathan-s0", "d64L6-ilr03-leviathan-s0", fair)):
        assert config_differences(resolved(grid, theirs), resolved(width, mine)) == []
    assert width.eval_sets == o200k.eval_sets and width.eval_options == o200k.eval_options
    # every width: head size 16, SwiGLU 3x the width, 6 layers; 21 runs (untied and generator x 3 seeds, tied x 1)
    for spec in width.runs:
        m = spec.model
        assert m.resolved_head_dim == 16 and m.resolved_intermediate_size == 3 * m.hidden_size
        assert m.num_hidden_layers == 6 and (spec.seed == 0 or spec.variant != "dense_tied")
    assert len(width.runs) == 21 and {s.params.body for s in width.runs} == {80_288, 320_320, 1_279_616}


@pytest.mark.parametrize("main, lr", [("o200k-width", "o200k-width-lr"), ("paper-width", "paper-width-lr")])
def test_every_presweep_arm_is_an_arm_of_its_main_grid(main, lr):
    main_grid, lr_grid = load_grid(main), load_grid(lr)
    arms = {f"{s.size}:{s.variant}": s for s in main_grid.runs}
    pre = presweep_arms(lr_grid)
    assert {a.arm for a in pre} <= set(arms)
    for a in pre:
        assert len(a.base) == 3 and a.upper / a.base[-1] == pytest.approx(3.0) and a.base[0] / a.lower == \
            pytest.approx(10 / 3, rel=0.02)
        lr_run = lr_grid.run(a.runs[a.base[0]])
        assert lr_run.model == arms[a.arm].model  # the pre-sweep trains the main run's model
    covered = {a.arm for a in pre}
    if main == "o200k-width":  # width 64 keeps the o200k round's lrs
        assert set(arms) - covered == {"d64L6:dense_untied", "d64L6-pick:leviathan", "d64L6:dense_tied"}
    else:
        assert covered == set(arms)
    assert lr_grid.seeds == [0] and {r.seed for r in lr_grid.runs} == {0}


def test_the_benchmark_width_configurations_are_the_grid_bodies():
    grid = load_grid("o200k-width")
    for name in WIDTH_CONFIGS:
        bench = CONFIGS[name]
        width = bench.model("leviathan").hidden_size
        spec = grid.run(f"d{width}L6-pick-leviathan-s0")
        assert bench.model("leviathan") == spec.model
        assert (bench.seq_len, bench.batch_size) == (128, 64)
