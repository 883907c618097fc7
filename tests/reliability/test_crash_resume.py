"""Training survives SIGKILL at any moment, also inside a checkpoint write, and resumes bit for bit.

A real ``python -m leviathan train`` process (through a launcher that can pause inside the checkpoint
writer) is killed with SIGKILL, which no handler can intercept, then continued with ``--resume auto``.
After every kill: each ``step-*`` folder is complete and loads, the half-written one is a ``.tmp-*``
folder that is never chosen, and metrics.jsonl has no step twice. At the end: losses, validation
losses, weights and optimizer state equal those of an uninterrupted run exactly. The sweep's
results.jsonl gets the same treatment.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from leviathan.train import checkpoint as ckpt
from leviathan.run_config import load_run_config
from leviathan.train.loop import train

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, launch, metric_lines, tiny_overrides, wait_for  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

STEPS = 16


def settings(data: Path) -> list[str]:
    """A checkpoint after every step (keep 2), so a kill often lands inside a write; validation every 4."""
    return tiny_overrides(data, max_steps=STEPS, checkpoint_interval=1, keep_last=2, eval_interval=4,
                          log_interval=1)


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory) -> Path:
    """The uninterrupted run (in this process, one thread like the subprocesses)."""
    run = tmp_path_factory.mktemp("uninterrupted") / "run"
    train(load_run_config(None, settings(data)), run, quiet=True)
    return run


def kill(proc: subprocess.Popen) -> bool:
    """SIGKILL; False if the process had exited on its own just before."""
    proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=30) == -signal.SIGKILL


def assert_consistent(run: Path) -> int:
    """What a resume may rely on after a kill; returns the step it would resume from (0: none)."""
    found = ckpt.list_checkpoints(run)
    step_dirs = sorted(p.name for p in (run / "checkpoints").glob("step-*")) if (run / "checkpoints").exists() else []
    assert step_dirs == [p.name for _, p in found], "a step-* folder is incomplete"
    for _, path in found:
        state = ckpt.load_state(path)  # every file of every kept checkpoint loads
        assert state["state"]["step"] == int(path.name.split("-")[1])
    latest = ckpt.latest_checkpoint(run)
    assert latest is None or not latest.name.startswith(".tmp")
    rows, torn = metric_lines(run)
    assert len(torn) <= 1, torn  # at most the one line being written when the process died
    steps = [r["step"] for r in rows if "train_loss" in r]
    assert steps == sorted(set(steps)), f"metrics.jsonl has a step twice: {steps}"
    return found[-1][0] if found else 0


def assert_equals_reference(run: Path, reference: Path) -> None:
    rows, torn = metric_lines(run)
    ref_rows, _ = metric_lines(reference)
    assert torn == []
    train_rows = [(r["step"], r["train_loss"]) for r in rows if "train_loss" in r]
    assert train_rows == [(r["step"], r["train_loss"]) for r in ref_rows if "train_loss" in r]
    assert [s for s, _ in train_rows] == list(range(1, STEPS + 1))  # every step exactly once
    val = [(r["step"], r["val_loss"]) for r in rows if "val_loss" in r]
    assert val == [(r["step"], r["val_loss"]) for r in ref_rows if "val_loss" in r] and len(val) == STEPS // 4
    assert [s for s, _ in ckpt.list_checkpoints(run)] == [STEPS - 1, STEPS]
    assert not list((run / "checkpoints").glob(".tmp-*"))
    final = ckpt.step_name(STEPS)
    a = load_file(str(run / "checkpoints" / final / "model.safetensors"))
    b = load_file(str(reference / "checkpoints" / final / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    oa = ckpt.load_tensors(run / "checkpoints" / final / "optimizer.pt")
    ob = ckpt.load_tensors(reference / "checkpoints" / final / "optimizer.pt")
    for name, state in ob["state"].items():
        for key, value in state.items():
            assert torch.equal(oa["state"][name][key], value), (name, key)
    assert json.loads((run / "summary.json").read_text())["final_val_loss"] == \
        json.loads((reference / "summary.json").read_text())["final_val_loss"]


def test_kill_inside_checkpoint_writes_never_yields_a_partial_checkpoint(data, reference, tmp_path):
    run = tmp_path / "run"
    argv = ["train", *settings(data), "--run-dir", str(run), "--resume", "auto", "--quiet"]

    # 1. die after model.safetensors of step 5 was written, before its other files
    marker = tmp_path / "paused-files"
    proc = launch(argv, tmp_path, {"pause": {"step": 5, "where": "files", "marker": str(marker)}})
    wait_for(marker.exists, proc, "the pause inside the step-5 checkpoint write")
    assert kill(proc)
    (partial,) = (run / "checkpoints").glob(".tmp-step-00000005-*")
    assert [p.name for p in partial.iterdir()] == ["model.safetensors"]
    assert assert_consistent(run) == 4  # the half-written step 5 is not a candidate

    # 2. resume, then die with every file of step 9 written and fsynced, just before the rename
    marker = tmp_path / "paused-rename"
    proc = launch(argv, tmp_path, {"pause": {"step": 9, "where": "rename", "marker": str(marker)}})
    wait_for(marker.exists, proc, "the pause before the step-9 rename")
    assert kill(proc)
    assert not partial.exists()  # the leftover of the first crash was removed at the start
    (unrenamed,) = (run / "checkpoints").glob(".tmp-step-00000009-*")
    assert {"model.safetensors", "optimizer.pt", "state.json", "config.yaml"} <= {p.name for p in unrenamed.iterdir()}
    assert assert_consistent(run) == 8  # complete files, but not renamed: still not chosen

    # 3. resume to the end: identical to the run that was never interrupted
    proc = launch(argv, tmp_path)
    assert proc.wait(timeout=180) == 0, (tmp_path / "stderr.log").read_text()[-3000:]
    assert_equals_reference(run, reference)


def test_sigkill_at_random_moments_then_resume_matches_an_uninterrupted_run(data, reference, tmp_path):
    rng = random.Random(20240917)  # fixed: the same kill moments on every run of the suite
    run = tmp_path / "run"
    argv = ["train", *settings(data), "--run-dir", str(run), "--resume", "auto", "--quiet"]
    kills = 0
    for _ in range(3):
        start = assert_consistent(run) if run.exists() else 0
        proc = launch(argv, tmp_path)

        def training_again() -> bool:  # a train row past the resume point: the process is mid-run
            rows, _ = metric_lines(run)
            return any(r.get("step", 0) > start and "train_loss" in r for r in rows)

        wait_for(training_again, proc, "training to resume")
        delay = rng.uniform(0.0, 0.6)  # ~0.1 s per step, each one writing a checkpoint
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            kills += kill(proc)
        else:
            break  # finished before the kill (not expected: 16 steps take well over 0.6 s)
    assert kills >= 1 and assert_consistent(run) < STEPS
    proc = launch(argv, tmp_path)
    assert proc.wait(timeout=180) == 0, (tmp_path / "stderr.log").read_text()[-3000:]
    assert_equals_reference(run, reference)


SWEEP = r"""
import json, math, os, sys, time
sys.path.insert(0, sys.argv[2])
from test_sweep import grid_dict
from leviathan.experiments.machinery.grid import load_grid
from leviathan.eval.result import EvalResult
from leviathan.experiments.machinery.sweep import RunEvaluation, run_sweep

def slow_train(cfg, run_dir, resume=None):
    path = os.path.join(run_dir, "progress")
    step = int(open(path).read() or 0) if os.path.exists(path) else 0  # a kill may leave it empty: the fake's own file
    while step < 4:
        time.sleep(0.05)
        step += 1
        open(path, "w").write(str(step))
    return {"run_dir": run_dir, "steps": 4, "tokens": 400, "wall_time_s": 0.2, "tokens_per_s": 2000.0,
            "final_val_loss": 4.6, "final_val_ppl": math.exp(4.6),
            "params": {"input": 1, "body": 2, "head": 3, "total": 6, "tied": False}, "metrics": None}

def slow_eval(grid, spec, run_dir, eval_data):
    time.sleep(0.05)
    return RunEvaluation(eval={"val": EvalResult(loss=4.5, ppl=math.exp(4.5), bpb=1.2, tokens=10)})

from leviathan.experiments.machinery import sweep
from leviathan.train import loop

from leviathan.train.summary import TrainSummary

loop.train = lambda cfg, run_dir, resume=None: TrainSummary.from_dict(slow_train(cfg, run_dir, resume))
sweep.evaluate_run, sweep.build_run_config = slow_eval, lambda grid, spec: None
sweep._check_memory = lambda configs, jobs: None  # it sizes the real configs replaced here
sweep.check_eval_sets = lambda grid, root: None  # the fake evaluation reads no data
run_sweep(load_grid(grid_dict()), sys.argv[1], log=lambda s: print(s, flush=True))
"""


def test_sweep_killed_at_random_moments_keeps_results_whole_and_unique(tmp_path):
    from leviathan.experiments.machinery.results import read_results

    rng = random.Random(7)
    out = tmp_path / "sweep"
    results = out / "results.jsonl"
    cmd = [sys.executable, "-c", SWEEP, str(out), str(REPO / "tests" / "integration")]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    for _ in range(2):
        before = len(read_results(results))
        log = tmp_path / "sweep.log"
        with open(log, "w") as f:
            proc = subprocess.Popen(cmd, env=env, stdout=f, stderr=subprocess.STDOUT)
        wait_for(lambda: "to go" in log.read_text(), proc, "the sweep to start")
        try:
            proc.wait(timeout=rng.uniform(0.1, 0.5))
        except subprocess.TimeoutExpired:
            kill(proc)
        lines = results.read_text().splitlines() if results.exists() else []
        rows = [json.loads(line) for line in lines]  # every line whole: a kill never tears a row
        assert len({r["name"] for r in rows}) == len(rows) >= before
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)) == 5, names  # each run once, none lost
