"""A grid whose lrs come from its pre-sweep (experiments.machinery.presweep): arms, stages, picks, on literal grids and rows."""

import pytest

from leviathan.config import ConfigError, to_dict
from leviathan.errors import UserError
from leviathan.experiments.machinery.grid import load_grid
from leviathan.experiments.method.lr_sweep import arm_body, arm_key
from leviathan.experiments.machinery.presweep import apply_picks, presweep_arms, presweep_state, run_lr
from leviathan.experiments.machinery.results import ResultRow
from leviathan.run_config import OptimConfig, RunConfig

LRS = {"lr1e-4": 1e-4, "lr3e-4": 3e-4, "lr1e-3": 1e-3, "lr3e-3": 3e-3}  # base: 3e-4, 1e-3; edges: 1e-4, 3e-3
MODEL = {"preset": "cpu-tiny", "hidden_size": 16, "num_attention_heads": 2}


def lr_grid(pick_run=None):
    sizes = {}
    for body, width in (("a", 16), ("b", 32)):
        for name, lr in LRS.items():
            sizes[f"{body}-{name}"] = {**MODEL, "hidden_size": width, "run": {"optim.lr": lr}}
            sizes[f"{body}-pick-{name}"] = {**MODEL, "hidden_size": width, "run": [pick_run or {}, {"optim.lr": lr}]}
    return load_grid({"name": "t-lr", "data": {"dir": "/nonexistent", "vocab_size": 512}, "seeds": [0],
                      "sizes": sizes,
                      "experiments": {"iso_body": {"variants": ["dense_untied"],
                                                   "sizes": [s for s in sizes if "pick" not in s]},
                                      "iso_body:gen": {"variants": ["leviathan"],
                                                       "sizes": [s for s in sizes if "pick" in s]}}})


def main_grid():
    sizes = {"a": {**MODEL}, "b": {**MODEL, "hidden_size": 32}, "a-pick": {**MODEL}, "b-pick": {**MODEL, "hidden_size": 32},
             "c": {**MODEL, "hidden_size": 48}}
    return load_grid({"name": "t", "data": {"dir": "/nonexistent", "vocab_size": 512}, "seeds": [0, 1],
                      "base": {"optim.lr": 5e-3}, "sizes": sizes,
                      "experiments": {"iso_body": {"variants": ["dense_untied"], "sizes": ["a", "b", "c"]},
                                      "iso_body:gen": {"variants": ["leviathan"], "sizes": ["a-pick", "b-pick"]}}})


def row(name, lr, loss):
    variant = name.split("-s")[0].rsplit("-", 1)[1]
    config = to_dict(RunConfig(max_steps=1, seed=0, optim=OptimConfig(lr=lr)))  # as a sweep's row records it: its
    config["model"]["embedding"] = variant  # seed and variant agree with its config (pick_learning_rates checks)
    return ResultRow.from_dict({"name": name, "variant": variant, "seed": 0, "size": name.rsplit("-", 2)[0],
                                "eval": {"val": {"loss": loss}}, "config": config})


# each arm's loss per lr: a:dense_untied best at the upper base lr, a-pick:leviathan at the lower, the b arms inside
LOSSES = {"a:dense_untied": {1e-4: 5.3, 3e-4: 5.2, 1e-3: 5.0, 3e-3: 4.9},
          "a-pick:leviathan": {1e-4: 5.05, 3e-4: 5.0, 1e-3: 5.2, 3e-3: 5.6},
          "b:dense_untied": {1e-4: 5.0, 3e-4: 4.8, 1e-3: 4.805, 3e-3: 6.0},  # a tie within 0.01: the lower lr
          "b-pick:leviathan": {1e-4: 5.0, 3e-4: 4.9, 1e-3: 4.7, 3e-3: None}}


def rows_of(grid, names):
    out = []
    for spec in grid.runs:
        if spec.name in names:
            lr = run_lr(grid, spec)
            out.append(row(spec.name, lr, LOSSES[arm_key(spec.size, spec.variant)][lr]))
    return out


def test_arm_keys_strip_the_lr_part_of_a_size():
    assert arm_body("d32L6-lr1e-3") == "d32L6" and arm_body("d32L6-pick-lr3e-2") == "d32L6-pick"
    assert arm_body("lr1e-3") == "" and arm_body("1.2b-lr3e-4") == "1.2b" and arm_body("d32L6") == "d32L6"
    assert arm_key("lr1e-3", "leviathan") == "leviathan" and arm_key("b-lr1e-3", "dense_tied") == "b:dense_tied"


def test_presweep_arms_split_base_and_edges():
    arms = {a.arm: a for a in presweep_arms(lr_grid())}
    assert set(arms) == set(LOSSES)
    a = arms["a-pick:leviathan"]
    assert a.base == [3e-4, 1e-3] and a.lower == 1e-4 and a.upper == 3e-3
    assert a.runs[1e-4] == "a-pick-lr1e-4-leviathan-s0"
    # the pick's run settings merge before the lr (a list of run mappings, applied in order)
    g = lr_grid(pick_run={"optim.input_lr_mult": 3.0})
    spec = g.run("a-pick-lr1e-3-leviathan-s0")
    assert spec.run_overrides == ["optim.input_lr_mult=3.0", "optim.lr=0.001"] and run_lr(g, spec) == 1e-3


def test_stages_follow_the_rows():
    g = lr_grid()
    state = presweep_state(g, [])
    assert state.stage == "base" and len(state.base_runs) == 8 and state.base_missing == state.base_runs
    assert all("lr1e-4" not in n and "lr3e-3" not in n for n in state.base_runs)
    state = presweep_state(g, rows_of(g, state.base_runs[:-1]))
    assert state.stage == "base" and state.base_missing == state.base_runs[-1:]
    base = rows_of(g, state.base_runs)
    state = presweep_state(g, base)
    # a:dense_untied's pick over its base lrs is the upper one, a-pick:leviathan's the lower one, b:dense_untied
    # ties within 0.01 nats and takes the lower (an edge too); b-pick:leviathan's best is 1e-3, its upper edge
    assert state.stage == "edge"
    assert sorted(state.edge_runs) == sorted(["a-lr3e-3-dense_untied-s0", "a-pick-lr1e-4-leviathan-s0",
                                              "b-lr1e-4-dense_untied-s0", "b-pick-lr3e-3-leviathan-s0"])
    state = presweep_state(g, base + rows_of(g, state.edge_runs))
    assert state.stage == "main"
    picks = {arm: c.lr for arm, c in state.picks.items()}
    # the extension wins where it is better (a:dense_untied 3e-3); a diverged extension loses (b-pick:leviathan)
    assert picks == {"a:dense_untied": 3e-3, "a-pick:leviathan": 3e-4, "b:dense_untied": 3e-4,
                     "b-pick:leviathan": 1e-3}
    assert state.picks["b-pick:leviathan"].losses[3e-3] is None
    # a run that was not due (the other edge) does not enter the pick
    extra = rows_of(g, ["a-lr1e-4-dense_untied-s0"])
    assert presweep_state(g, base + rows_of(g, state.edge_runs) + extra).picks["a:dense_untied"].losses == \
        {3e-4: 5.2, 1e-3: 5.0, 3e-3: 4.9}


def test_picks_apply_to_the_main_grid_and_uncovered_arms_keep_its_lr():
    g = lr_grid()
    base = rows_of(g, presweep_state(g, []).base_runs)
    state = presweep_state(g, base + rows_of(g, presweep_state(g, base).edge_runs))
    main, uncovered = apply_picks(main_grid(), state.picks)
    assert uncovered == ["c:dense_untied"]
    lr = {s.name: run_lr(main, s) for s in main.runs}
    assert lr["a-dense_untied-s1"] == 3e-3 and lr["a-pick-leviathan-s0"] == 3e-4 and lr["b-pick-leviathan-s1"] == 1e-3
    assert lr["c-dense_untied-s0"] == 5e-3  # the grid's own (base) lr
    assert main_grid().run("a-dense_untied-s0").run_overrides == []  # the grid itself is not changed
    with pytest.raises(UserError, match=r"pre-sweep arm\(s\) z:leviathan have no run in grid 't'"):
        apply_picks(main_grid(), {**state.picks, "z:leviathan": state.picks["a-pick:leviathan"]})


def test_bad_presweep_grids_and_diverged_arms_are_named():
    g = lr_grid()
    three = load_grid({"name": "t3", "data": {"dir": "/nonexistent", "vocab_size": 512},
                       "sizes": {f"a-{n}": {**MODEL, "run": {"optim.lr": lr}} for n, lr in list(LRS.items())[:3]},
                       "experiments": {"iso_body": {"variants": ["leviathan"], "sizes": ["a-lr1e-4", "a-lr3e-4",
                                                                                          "a-lr1e-3"]}}})
    with pytest.raises(ConfigError, match="arm a:leviathan of grid 't3' lists 3 lrs"):
        presweep_arms(three)
    no_lr = load_grid({"name": "t0", "data": {"dir": "/nonexistent", "vocab_size": 512}, "sizes": {"a": MODEL},
                       "experiments": {"iso_body": {"variants": ["leviathan"], "sizes": ["a"]}}})
    with pytest.raises(ConfigError, match="sets no optim.lr"):
        presweep_arms(no_lr)
    names = presweep_state(g, []).base_runs
    diverged = [row(r.name, r.config["optim"]["lr"], None if "a-pick" in r.name else r.loss())  # null: as written
                for r in rows_of(g, names)]
    state = presweep_state(g, diverged)
    assert state.stage == "edge" and not any("a-pick" in n for n in state.edge_runs)
    with pytest.raises(UserError, match="every pre-sweep run of a-pick:leviathan diverged"):
        presweep_state(g, diverged + rows_of(g, state.edge_runs))
