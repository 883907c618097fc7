"""The width round's GPU protocol rehearsed on a CPU (README "The width round on GPUs"): ``leviathan sweep --grid
paper-width --presweep paper-width-lr --shard I/N`` run stage after stage by two shards, then the report.

The first test keeps the shipped paper-width grids' structure (arms, seeds, pick anchors, lrs, edge steps) with tiny
models and a fake trainer whose loss is a known function of the lr, so the stages, the edge steps, the picks and
the shards are checked exactly in seconds; the second trains and evaluates real tiny models through the same
command and reads the rows with the same report.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from leviathan.cli import main
from leviathan.configs import find_grid_file
from leviathan.experiments.machinery import sweep as sweep_module
from leviathan.experiments.method.lr_sweep import arm_body
from leviathan.experiments.machinery.presweep import read_stage_rows, run_lr
from leviathan.eval.result import EvalResult
from leviathan.experiments.machinery.results import read_results
from leviathan.experiments.machinery.sweep import RunEvaluation

pytestmark = pytest.mark.usefixtures("single_thread")

TINY_WIDTH = {"109m": 16, "200m": 32}  # the two paper sizes the rehearsal keeps, as tiny bodies
BEST_LR = {"dense_tied": 1e-3, "dense_untied": 3e-4, "leviathan": 5e-5}  # the fake's best lr of each arm


def tiny_plan(tmp_path, data_dir, base: dict, model: dict, keep=tuple(TINY_WIDTH)) -> tuple[str, str]:
    """The shipped paper-width grids with tiny bodies (of the ``keep`` sizes), tiny settings and ``data_dir``: (main
    grid file, pre-sweep grid file). Arms, seeds, lrs and experiments are the shipped files'."""
    paths = []
    for name in ("paper-width", "paper-width-lr"):
        raw = yaml.safe_load(find_grid_file(name).read_text())
        raw.pop("anchors")  # resolved into the sizes while reading
        raw["base"], raw["data"] = base, {"dir": str(data_dir), "vocab_size": 300}
        raw["eval"] = {"sets": {"val": {"split": "val"}}, "buckets": 2, "seq_len": 16, "batch_size": 4,
                       "max_tokens": 96}
        sizes = {}
        for size, spec in raw["sizes"].items():
            body = arm_body(size).removesuffix("-pick")
            if body in keep:
                sizes[size] = {**model, "hidden_size": TINY_WIDTH[body], **({"run": spec["run"]} if "run" in spec
                                                                              else {})}
        raw["sizes"] = sizes
        for exp in raw["experiments"].values():
            exp["sizes"] = [s for s in exp["sizes"] if s in sizes]
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(raw, sort_keys=False))
        paths.append(str(path))
    return paths[0], paths[1]


def fake_loss(grid, spec) -> float:
    """A known loss: each arm best at BEST_LR, bigger bodies better, the generator's gap falling by 0.1 nats per
    e-fold of body parameters."""
    lr, body = run_lr(grid, spec), spec.params.body
    gap = (1.5 - 0.1 * math.log(body) + 0.01 * spec.seed) if spec.variant == "leviathan" else 0.0
    return 6.0 - 0.2 * math.log(body) + (math.log10(lr) - math.log10(BEST_LR[spec.variant])) ** 2 \
        + 0.02 * spec.seed + gap


class FakeTrainer:
    """Writes the run's config.yaml (the lr its row records) and returns a summary (the row's parameter counts are
    then the grid's)."""

    def __init__(self):
        self.calls = []

    def __call__(self, overrides, run_dir, resume=None):
        self.calls.append(os.path.basename(run_dir))
        lr = float([o.split("=", 1)[1] for o in overrides if o.startswith("optim.lr=")][-1])
        seed = int([o.split("=", 1)[1] for o in overrides if o.startswith("seed=")][-1])
        (Path(run_dir) / "config.yaml").write_text(yaml.safe_dump({"optim": {"lr": lr}, "seed": seed}))
        from leviathan.train.summary import TrainSummary

        return TrainSummary.from_dict({"run_dir": str(run_dir), "steps": 2, "tokens": 200, "wall_time_s": 1.0,
                                       "tokens_per_s": 200.0, "final_val_loss": 5.0, "final_val_ppl": math.exp(5.0)})


def fake_eval(grid, spec, run_dir, eval_data):
    loss = fake_loss(grid, spec)
    return RunEvaluation(eval={"val": EvalResult(loss=loss, ppl=math.exp(loss), tokens=96)})


def plan(main_file, lr_file, out, *extra):
    return main(["sweep", "--grid", main_file, "--presweep", lr_file, "--out", str(out), *extra])


def test_sharded_plan_runs_the_stages_and_picks_like_one_machine(tmp_path, monkeypatch, capsys):
    from leviathan.train import loop

    trainer = FakeTrainer()
    monkeypatch.setattr(loop, "train", trainer)
    monkeypatch.setattr(sweep_module, "evaluate_run", fake_eval)
    monkeypatch.setattr(sweep_module, "check_eval_sets", lambda grid, root: None)  # the fake evaluation reads no data
    monkeypatch.setattr(sweep_module, "build_run_config", lambda grid, spec: grid.run_overrides(spec))
    monkeypatch.setattr(sweep_module, "_check_memory", lambda configs, jobs: None)  # it sizes the real configs
    main_file, lr_file = tiny_plan(tmp_path, tmp_path / "nodata", {"max_steps": 2},
                                   {"preset": "cpu-tiny", "num_attention_heads": 2})
    sharded = tmp_path / "sharded"
    stages = []
    for _ in range(4):  # three job arrays (pre-sweep, edge steps, main runs), then a check that all is done
        for i in (1, 2):
            assert plan(main_file, lr_file, sharded, "--shard", f"{i}/2") == 0
            stages.append(capsys.readouterr().out.strip().splitlines()[-1].split(":")[0])
    assert stages == ["plan stage base"] * 2 + ["plan stage edge"] * 2 + ["plan stage main"] * 2 + \
        ["plan stage done"] * 2
    # each stage's runs split over the two shards, disjoint and covering
    assert sorted(os.listdir(sharded / "presweep")) == ["shard-1", "shard-2"]
    pre = read_stage_rows(sharded, "base")
    base = [r for r in pre if any(f"-lr{x}-" in r.name for x in ("1e-4", "3e-4", "1e-3"))]
    assert len(base) == 2 * 3 * 3 and len(trainer.calls) == len(set(trainer.calls))
    # edge steps: dense_tied's pick is its upper base lr (3e-3 runs), leviathan's its lower (3e-5 runs, and wins)
    edges = sorted(r.name for r in pre if r not in base)
    assert edges == sorted([f"{b}-lr3e-3-dense_tied-s0" for b in TINY_WIDTH] +
                           [f"{b}-pick-lr3e-5-leviathan-s0" for b in TINY_WIDTH])
    rows = read_stage_rows(sharded, "main")
    assert len(rows) == 2 * (3 + 3 + 1)
    lr = {r.name: r.config["optim"]["lr"] for r in rows}
    assert lr["109m-dense_tied-s0"] == 1e-3 and lr["200m-dense_untied-s2"] == 3e-4
    assert lr["109m-pick-leviathan-s1"] == 3e-5  # the edge step won
    # one machine, no shard: one command does every stage, the same runs and numbers
    whole = tmp_path / "whole"
    assert plan(main_file, lr_file, whole) == 0
    assert "plan stage done" in capsys.readouterr().out
    assert {r.name: r.loss() for r in read_results(whole / "main")} == {r.name: r.loss() for r in rows}
    # the report of the merged shards: the width panel (the gap falls: -0.1 per e-fold) and the pre-sweep's picks
    assert plan(main_file, lr_file, sharded, "--shard", "1/2") == 0
    report = capsys.readouterr().out.split("next: ")[-1].strip()
    assert report.startswith("leviathan report ") and report.count("--lr-sweep") == 2
    assert main(report.split()[1:]) == 0
    md = (sharded / "report" / "report.md").read_text()
    assert "## Width: the generator's gap" in md and "| 109m-pick:leviathan |" in md
    analysis = json.loads((sharded / "report" / "analysis.json").read_text())
    assert analysis["width"]["slope"]["slope"]["mean"] == pytest.approx(-0.1)
    assert analysis["lr_sweep"]["200m-pick:leviathan"]["lr"] == 3e-5


def test_options_that_do_not_go_with_a_plan_are_refused(tmp_path, capsys):
    main_file, lr_file = tiny_plan(tmp_path, tmp_path / "nodata", {"max_steps": 2},
                                   {"preset": "cpu-tiny", "num_attention_heads": 2})
    assert plan(main_file, lr_file, tmp_path / "o", "--only", "109m-*") == 2
    assert "--only does not go with --presweep" in capsys.readouterr().err


WORDS = ("the cat dog bird sat ran flew on under over a mat tree house quickly slowly and then "
         "saw heard found big small red green old new river stone light dark").split()


def test_real_tiny_plan_writes_rows_the_report_reads(tmp_path, capsys):
    """Real training and evaluation of the smallest plan (2 tiny bodies, the shipped arms, 2 seeds of the main
    arms), two shards; the rows carry their picked lr, and the report shows the width panel and the pre-sweep."""
    from leviathan.data.prepare import prepare

    rng = np.random.default_rng(0)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for d in range(30):
        (corpus / f"doc{d:02d}.txt").write_text(" ".join(" ".join(rng.choice(WORDS, size=8)).capitalize() + "."
                                                         for _ in range(10)) + "\n")
    data = tmp_path / "data"
    prepare(str(corpus), str(data), "bpe:300", val_fraction=0.2, progress=False, log=lambda s: None)
    base = {"data": {"seq_len": 16}, "batch_tokens": 32, "micro_batch_size": 2, "max_steps": 2, "log_interval": 1,
            "eval_interval": 1, "eval_tokens": 32, "checkpoint_interval": 2, "schedule": {"warmup_steps": 1},
            "device": "cpu", "dtype": "float32"}
    model = {"num_hidden_layers": 1, "num_attention_heads": 2, "max_position_embeddings": 16, "generator_seed_dim": 4,
             "generator_modes": 1, "generator_knots": 4, "generator_rank": 2}
    main_file, lr_file = tiny_plan(tmp_path, data, base, model)
    raw = yaml.safe_load(open(main_file))
    raw["seeds"] = [0, 1]
    yaml.safe_dump(raw, open(main_file, "w"))
    raw = yaml.safe_load(open(lr_file))  # fewer runs: only the generator arms are pre-swept here, the tables
    for key in ("iso_body", "iso_body:edge"):  # keep the grid's own lr (an arm the pre-sweep does not cover)
        del raw["experiments"][key]
    yaml.safe_dump(raw, open(lr_file, "w"))
    out = tmp_path / "plan"
    for _ in range(3):
        for i in (1, 2):
            assert plan(main_file, lr_file, out, "--shard", f"{i}/2") == 0
    assert "plan stage main" in capsys.readouterr().out
    rows = read_stage_rows(out, "main")
    assert len(rows) == 2 * (2 + 2 + 1) and all(math.isfinite(r.loss()) for r in rows)
    lrs = {r.name: r.config["optim"]["lr"] for r in rows}
    assert all(lr in (3e-5, 1e-4, 3e-4, 1e-3, 3e-3) for n, lr in lrs.items() if "pick" in n)
    assert all(lr == 3e-4 for n, lr in lrs.items() if "pick" not in n)  # RunConfig's default: not pre-swept here
    assert plan(main_file, lr_file, out, "--shard", "2/2") == 0
    report = capsys.readouterr().out.split("next: ")[-1].strip()
    assert main(report.split()[1:]) == 0
    md = (out / "report" / "report.md").read_text()
    assert "## Width: the generator's gap" in md and "## Learning rates: the pre-sweep" in md
    # --reuse: a second plan with the same pre-sweep takes every main row from the first (the same runs exactly:
    # settings with the picked lrs, data, evaluation) and trains nothing
    again = tmp_path / "again"
    shutil.copytree(out / "presweep", again / "presweep")
    assert plan(main_file, lr_file, again, "--reuse", str(out / "main" / "shard-1"), "--reuse",
                str(out / "main" / "shard-2")) == 0
    assert "plan stage done: 0 run(s) trained now" in capsys.readouterr().out
    reused = read_results(again / "main")
    assert sorted(r.name for r in reused) == sorted(r.name for r in rows) and not (again / "main" / "runs").exists()
    by_name = {r.name: r.to_dict() for r in rows}  # the grid's own runs: taken as written (no note), so collecting
    assert all(r.to_dict() == by_name[r.name] for r in reused)  # them back merges the same rows (round 19, H170)
