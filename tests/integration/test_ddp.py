"""DDP on CPU (gloo): ``torchrun --nproc_per_node=2 -m leviathan train`` matches one process.

Two ranks with micro batch b read the sequences one process reads with micro batch 2b (the
loader's rank sharding), gradients are averaged, so the logged losses and the final weights agree
up to float reduction order.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from leviathan import checkpoint as ckpt
from leviathan.run_config import load_run_config
from leviathan.train.loop import train
from leviathan.io import read_metrics

sys.path.insert(0, str(Path(__file__).parent))
from test_train import make_data, tiny_overrides  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
STEPS = 4


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not available")
def test_two_process_ddp_matches_single_process(tmp_path):
    data = make_data(tmp_path)
    common = dict(max_steps=STEPS, checkpoint_interval=STEPS, eval_interval=STEPS, log_interval=1,
                  batch_tokens=256, **{"model.embedding": "leviathan"})
    # reference: one process, micro batch 4, 2 micro steps
    single = tmp_path / "single"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train(load_run_config(None, tiny_overrides(data, micro_batch_size=4, **common)), single, quiet=True)
    finally:
        torch.set_num_threads(threads)
    # two ranks, micro batch 2 each, 2 micro steps
    ddp = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    env.pop("WORLD_SIZE", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m", "leviathan",
           "train", *tiny_overrides(data, micro_batch_size=2, **common), "--run-dir", str(ddp), "--quiet"]
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    a = [r for r in read_metrics(single) if "train_loss" in r]
    b = [r for r in read_metrics(ddp) if "train_loss" in r]
    assert [r["step"] for r in a] == [r["step"] for r in b] == list(range(1, STEPS + 1))
    assert [r["tokens"] for r in a] == [r["tokens"] for r in b]
    for ra, rb in zip(a, b):
        assert rb["train_loss"] == pytest.approx(ra["train_loss"], rel=1e-5, abs=1e-6), (ra, rb)
    va = [r["val_loss"] for r in read_metrics(single) if "val_loss" in r]
    vb = [r["val_loss"] for r in read_metrics(ddp) if "val_loss" in r]
    assert vb == pytest.approx(va, rel=1e-5)
    # rank 0 wrote one checkpoint; the weights agree to float tolerance
    assert [s for s, _ in ckpt.list_checkpoints(ddp)] == [STEPS]
    wa = load_file(str(single / "checkpoints" / ckpt.step_name(STEPS) / "model.safetensors"))
    wb = load_file(str(ddp / "checkpoints" / ckpt.step_name(STEPS) / "model.safetensors"))
    for k in wa:
        torch.testing.assert_close(wb[k], wa[k], rtol=1e-4, atol=1e-5)
    versions = (ddp / "versions.json").read_text()
    assert '"world_size": 2' in versions
    shutil.rmtree(tmp_path / "corpus", ignore_errors=True)
