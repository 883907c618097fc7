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
    # round 14 (A11, A19): the global loader position of 2 ranks x micro steps read back as the tokens trained
    from leviathan.checkpoint.state import read_step_state

    state = read_step_state(ddp / "checkpoints" / ckpt.step_name(STEPS))
    assert state.world_size == 2 and state.tokens == state.loader["position"] * state.loader["seq_len"]
    from leviathan.run_identity import read_identity

    run_id = read_identity(ddp).run_id  # round 15 (A156, A239): rank 0 makes the run's id and records it everywhere
    assert state.run_id == run_id and {r["run_id"] for r in read_metrics(ddp)} == {run_id}
    versions = (ddp / "versions.json").read_text()
    assert '"world_size": 2' in versions
    shutil.rmtree(tmp_path / "corpus", ignore_errors=True)


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not available")
def test_a_locked_run_folder_stops_every_rank(tmp_path):
    """Only rank 0 takes the run folder's lock; when another writer holds it, every rank raises a UserError: rank 0
    the lock's message, rank 1 a pointer to it, and no transport error from a rank left waiting in a collective.
    The launch fails fast and the holder's folder is untouched."""
    from leviathan.locking import folder_lock

    from torchrun_support import torchrun_cmd, torchrun_env

    data = make_data(tmp_path)
    run_dir = tmp_path / "held"
    overrides = tiny_overrides(data, micro_batch_size=2, max_steps=2, batch_tokens=256)
    with folder_lock(run_dir, "train", "choose another --run-dir"):
        (run_dir / "mine.txt").write_text("the holder's file")
        proc = subprocess.run(torchrun_cmd(["-m", "leviathan", "train", *overrides, "--run-dir", str(run_dir),
                                            "--quiet"], max_restarts=0),
                              env=torchrun_env(), cwd=tmp_path, capture_output=True, text=True, timeout=180)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0
        assert "is writing there" in out and "choose another --run-dir" in out, out[-3000:]
        assert "rank 0 cannot train into" in out, out[-3000:]  # rank 1's own error
        assert "Connection reset" not in out and "[rank1]: Traceback" not in out, out[-3000:]  # (torchrun's own
        # agent still prints its ChildFailedError traceback)
        assert "exitcode  : 2" in out, out[-3000:]  # UserError's status (rank 1's may be the agent's SIGTERM, which
        # races with its own exit once rank 0 has failed)
        assert sorted(p.name for p in run_dir.iterdir()) == [".lock", "mine.txt"]
