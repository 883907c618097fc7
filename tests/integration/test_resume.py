"""Exact resume, checkpoint selection, and SIGTERM / Ctrl-C handling of a training run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from leviathan.errors import UserError
from leviathan.train import checkpoint as ckpt
from leviathan.run_config import load_run_config
from leviathan.train.loop import train
from leviathan.io import read_metrics

sys.path.insert(0, str(Path(__file__).parent))
from test_train import make_data, tiny_overrides  # noqa: E402

pytestmark = pytest.mark.usefixtures("single_thread")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_data(tmp_path_factory.mktemp("resume-data"))


def _losses(run: Path) -> list[tuple[int, float]]:
    return [(r["step"], r["train_loss"]) for r in read_metrics(run) if "train_loss" in r]


@pytest.mark.parametrize("embedding", ["leviathan", "dense_tied"])
def test_n_steps_plus_resume_equals_2n_steps_bit_for_bit(data, tmp_path, embedding):
    n = 4
    cfg = load_run_config(None, tiny_overrides(data, max_steps=2 * n, checkpoint_interval=n, eval_interval=n,
                                               keep_last="null", **{"model.embedding": embedding}))
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert train(cfg, straight, quiet=True).resumed_from is None
    # continue a *new* run folder from the straight run's step-n checkpoint
    summary = train(cfg, resumed, resume=str(straight / "checkpoints" / ckpt.step_name(n)), quiet=True)
    assert summary.steps == 2 * n and summary.resumed_from == n
    a, b = _losses(straight), _losses(resumed)
    assert b == a[n:]  # exact float equality of every logged loss after the resume point
    final = ckpt.step_name(2 * n)
    wa = load_file(str(straight / "checkpoints" / final / "model.safetensors"))
    wb = load_file(str(resumed / "checkpoints" / final / "model.safetensors"))
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
    if embedding == "dense_tied":
        assert "lm_head.weight" not in wa  # stored once
    oa = torch.load(straight / "checkpoints" / final / "optimizer.pt", weights_only=True)
    ob = torch.load(resumed / "checkpoints" / final / "optimizer.pt", weights_only=True)
    for name, state in oa["state"].items():
        for key, value in state.items():
            assert torch.equal(value, ob["state"][name][key]), (name, key)
    val_a = [r for r in read_metrics(straight) if "val_loss" in r][-1]
    val_b = [r for r in read_metrics(resumed) if "val_loss" in r][-1]
    assert val_a["val_loss"] == val_b["val_loss"]


def test_resume_auto_picks_latest_complete_and_explicit_must_exist(data, tmp_path):
    cfg = load_run_config(None, tiny_overrides(data, max_steps=4, checkpoint_interval=1, keep_last=3,
                                               eval_interval=0))
    run = tmp_path / "run"
    train(cfg, run, quiet=True)
    assert [s for s, _ in ckpt.list_checkpoints(run)] == [2, 3, 4]  # keep_last=3
    # damage: an incomplete later step and a leftover temporary folder
    broken = run / "checkpoints" / ckpt.step_name(9)
    broken.mkdir()
    (broken / "model.safetensors").write_bytes(b"")
    (run / "checkpoints" / ".tmp-step-00000010-1").mkdir()
    assert ckpt.latest_checkpoint(run).name == ckpt.step_name(4)
    assert ckpt.resolve_resume("auto", run).name == ckpt.step_name(4)
    with pytest.raises(UserError, match="incomplete"):
        ckpt.resolve_resume(str(broken), run)
    with pytest.raises(UserError, match="does not exist"):
        ckpt.resolve_resume(str(run / "checkpoints" / ckpt.step_name(7)), run)
    # a fresh start into a folder with checkpoints is refused; auto continues (here: already finished)
    with pytest.raises(UserError, match="--resume auto"):
        train(cfg, run, quiet=True)
    more = load_run_config(None, tiny_overrides(data, max_steps=6, checkpoint_interval=1, keep_last=3,
                                                eval_interval=0))
    summary = train(more, run, resume="auto", quiet=True)
    assert summary.steps == 6
    assert not (run / "checkpoints" / ".tmp-step-00000010-1").exists()  # cleaned at start
    assert [s for s, _ in _losses(run)] == [1, 2, 3, 4, 5, 6]
    # the model section must match the checkpoint
    other = load_run_config(None, tiny_overrides(data, max_steps=8, **{"model.hidden_size": 32}))
    with pytest.raises(UserError, match="model section differs.*hidden_size"):
        train(other, run, resume="auto", quiet=True)


def _launch(args: list[str], tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    log = open(tmp_path / "stderr.log", "w")
    return subprocess.Popen([sys.executable, "-m", "leviathan", "train", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=log, cwd=tmp_path)


def _wait_for_step(run: Path, step: int, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (run / "metrics.jsonl").exists() and any(s >= step for s, _ in _losses(run)):
            return
        assert proc.poll() is None, "training exited before it could be signalled"
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("training did not reach the step in time")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_signal_saves_checkpoint_then_resume(data, tmp_path, sig, code):
    run = tmp_path / "run"
    overrides = tiny_overrides(data, max_steps=100_000, checkpoint_interval=0, eval_interval=0, log_interval=1)
    proc = _launch([*overrides, "--run-dir", str(run)], tmp_path)
    _wait_for_step(run, 2, proc)
    proc.send_signal(sig)
    try:
        assert proc.wait(timeout=60) == code, (tmp_path / "stderr.log").read_text()
    finally:
        if proc.poll() is None:  # a run the signal did not stop would train its 100,000 steps on
            proc.kill()
    saved = ckpt.list_checkpoints(run)
    assert len(saved) == 1
    step = saved[0][0]
    assert step >= 2 and [s for s, _ in _losses(run)][-1] == step
    assert f"stopped by {signal.Signals(sig).name} at step {step}" in (tmp_path / "stderr.log").read_text()
    # resume for two more steps (a shorter max_steps changes only the schedule's length)
    cfg = load_run_config(None, tiny_overrides(data, max_steps=step + 2, checkpoint_interval=0, eval_interval=0))
    summary = train(cfg, run, resume="auto", quiet=True)
    assert summary.steps == step + 2
    assert [s for s, _ in _losses(run)] == list(range(1, step + 3))
