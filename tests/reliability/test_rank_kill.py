"""A rank killed under ``torchrun --max-restarts=1`` recovers: the group restarts and resumes from the last
complete checkpoint, and the run ends exactly where an uninterrupted one does (DDP and FSDP2, 2 gloo ranks).

Each rank runs ``leviathan train ... --resume auto`` through a small launcher (``RANK_LAUNCHER``) that writes
its pid to ``pids/rank{R}-restart{N}.pid`` (how the test finds the process to kill) and, in the first
attempt only, stops one rank at a chosen moment and writes a marker, so the kill lands where it is meant to:

- DDP: rank 1 is held at the start of step 6 (step 4's checkpoint complete, rank 0 waiting for rank 1's
  gradients) and SIGKILLed: an ordinary mid-run death of a rank that writes nothing.
- FSDP2: rank 0, the one that writes, is held inside the write of step 4's checkpoint (model.safetensors
  written, the other files not) and SIGKILLed: a ``.tmp-step-00000004-*`` folder is left half written, and
  the restarted group must resume from step 2, never from it.

torchrun's agent sees the dead rank, stops the other, and starts both again (``TORCHELASTIC_RESTART_COUNT``
1); ``--resume auto`` picks the latest complete step. metrics.jsonl needs no deduplication by its readers:
``MetricsLogger`` rewrites it on resume to the rows up to the resumed step (train/metrics.py), so the file
itself must list every step once. Compared with an uninterrupted 2-rank run of the same settings: every
logged loss, validation loss, weight and AdamW moment is equal (same ranks, same reduction order).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from leviathan.train import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import metric_lines, tiny_overrides  # noqa: E402
from torchrun_support import run_torchrun, torchrun_cmd, torchrun_env  # noqa: E402

pytestmark = [pytest.mark.reliability,
              pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not available")]

STEPS = 8

# argv[1]: a JSON plan {"pids": DIR, "hold": {"rank": r, "at": "step" | "write", "step": k, "marker": path}};
# argv[2:]: the leviathan command line. The hold applies to the first attempt (restart count 0) only.
RANK_LAUNCHER = r"""
import json, os, sys, time
plan = json.loads(sys.argv[1])
rank, attempt = int(os.environ["RANK"]), int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
with open(os.path.join(plan["pids"], f"rank{rank}-restart{attempt}.pid"), "w") as f:
    f.write(str(os.getpid()))

def hold(marker):
    open(marker, "w").close()
    time.sleep(3600)

spec = plan.get("hold")
if spec and attempt == 0 and rank == spec["rank"]:
    if spec["at"] == "step":  # at the start of optimizer step k (1-based)
        from leviathan.train import loop
        real_step, calls = loop.train_step, [0]
        def train_step(*args, **kwargs):
            calls[0] += 1
            if calls[0] == spec["step"]:
                hold(spec["marker"])
            return real_step(*args, **kwargs)
        loop.train_step = train_step
    elif spec["at"] == "write":  # inside the checkpoint write of step k, after model.safetensors
        from leviathan.train import checkpoint as ckpt
        real_save = ckpt.save_file
        def save_file(tensors, path, *args, **kwargs):
            real_save(tensors, path, *args, **kwargs)
            if ckpt.step_name(spec["step"]) in str(path):
                hold(spec["marker"])
        ckpt.save_file = save_file
from leviathan.cli import main
sys.exit(main(sys.argv[2:]))
"""

CASES = {  # parallel -> (rank held and killed, where, step, the step the restart must resume from)
    "ddp": (1, "step", 6, 4),
    "fsdp": (0, "write", 4, 2),
}


def settings(data: Path, parallel: str) -> list[str]:
    """Micro batch 2 on each of 2 ranks; validation every 4 steps, a checkpoint every 2 (2 kept)."""
    return tiny_overrides(data, max_steps=STEPS, checkpoint_interval=2, keep_last=2, eval_interval=4, log_interval=1,
                          micro_batch_size=2, parallel=parallel, **{"model.embedding": "leviathan"})


def wait_until(condition, proc: subprocess.Popen, what: str, log: Path, timeout: float = 180.0) -> None:
    deadline = time.time() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"torchrun exited ({proc.returncode}) before {what}:\n{log.read_text()[-3000:]}")
        if time.time() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"timed out waiting for {what}:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)


def state_tensors(run: Path) -> tuple[dict, dict]:
    final = run / "checkpoints" / ckpt.step_name(STEPS)
    return load_file(str(final / "model.safetensors")), ckpt.load_tensors(final / "optimizer.pt")


@pytest.mark.parametrize("parallel", [pytest.param("fsdp", id="fsdp"),
                                      pytest.param("ddp", id="ddp", marks=pytest.mark.slow)])
def test_sigkill_of_one_rank_restarts_the_group_from_the_last_complete_checkpoint(data, tmp_path, parallel,
                                                                                 record_property):
    killed_rank, where, at_step, resume_step = CASES[parallel]
    reference = tmp_path / "uninterrupted"
    run_torchrun(["-m", "leviathan", "train", *settings(data, parallel), "--run-dir", str(reference), "--quiet"],
                 tmp_path)

    run, pids, marker, log = tmp_path / "run", tmp_path / "pids", tmp_path / "held", tmp_path / "torchrun.log"
    pids.mkdir()
    launcher = tmp_path / "rank_launcher.py"
    launcher.write_text(RANK_LAUNCHER)
    plan = {"pids": str(pids), "hold": {"rank": killed_rank, "at": where, "step": at_step, "marker": str(marker)}}
    argv = ["train", *settings(data, parallel), "--run-dir", str(run), "--resume", "auto"]
    with open(log, "w") as out:
        proc = subprocess.Popen(torchrun_cmd([str(launcher), json.dumps(plan), *argv], max_restarts=1),
                                env=torchrun_env(), cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_until(lambda: marker.exists() and ckpt.latest_checkpoint(run) is not None, proc,
                   f"rank {killed_rank} held at step {at_step} after a complete checkpoint", log)
        assert ckpt.list_checkpoints(run)[-1][0] == resume_step
        partial = list((run / "checkpoints").glob(".tmp-*"))
        if where == "write":  # the half-written checkpoint the restart must not choose
            assert [p.name for p in partial] and [f.name for f in partial[0].iterdir()] == ["model.safetensors"]
        os.kill(int((pids / f"rank{killed_rank}-restart0.pid").read_text()), signal.SIGKILL)
        assert proc.wait(timeout=240) == 0, log.read_text()[-5000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()

    # the group was restarted once, both ranks, and resumed from the last complete step, not the partial one
    assert sorted(p.name for p in pids.iterdir()) == [f"rank{r}-restart{n}.pid" for r in (0, 1) for n in (0, 1)]
    resumed = re.findall(r"resumed from (\S+) at step (\d+)", text)
    assert resumed == [(str(run / "checkpoints" / ckpt.step_name(resume_step)), str(resume_step))], text[-3000:]
    assert not list((run / "checkpoints").glob(".tmp-*"))  # the leftover was removed at the restart
    found = ckpt.list_checkpoints(run)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [p.name for _, p in found]
    assert [s for s, _ in found] == [STEPS - 2, STEPS]

    # metrics.jsonl itself lists every step once (no reader-side dedup needed) and equals the uninterrupted run's
    rows, torn = metric_lines(run)
    ref_rows, _ = metric_lines(reference)
    assert torn == []
    train_rows = [(r["step"], r["train_loss"]) for r in rows if "train_loss" in r]
    assert [s for s, _ in train_rows] == list(range(1, STEPS + 1))
    assert train_rows == [(r["step"], r["train_loss"]) for r in ref_rows if "train_loss" in r]
    val_rows = [(r["step"], r["val_loss"]) for r in rows if "val_loss" in r]
    assert [s for s, _ in val_rows] == [4, STEPS]
    assert val_rows == [(r["step"], r["val_loss"]) for r in ref_rows if "val_loss" in r]

    # the final weights and optimizer state equal the uninterrupted run's exactly
    (wa, oa), (wb, ob) = state_tensors(run), state_tensors(reference)
    record_property("max_abs_diff_weights", max(float((wa[k] - wb[k]).abs().max()) for k in wb))
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wb)
    for name, state in ob["state"].items():
        for key, value in state.items():
            assert torch.equal(oa["state"][name][key], value), (name, key)
    assert json.loads((run / "summary.json").read_text())["final_val_loss"] == \
        json.loads((reference / "summary.json").read_text())["final_val_loss"]


def test_a_killed_rank_without_restarts_ends_in_one_line_naming_it_and_the_resume_command(data, tmp_path):
    """No --max-restarts: rank 1 is SIGKILLed while rank 0 waits for it in a collective. Rank 0 ends in one line
    (no transport-error traceback) naming rank 1, the last complete checkpoint and the command that resumes; that
    command, run as printed (in this launch's shape), finishes the run."""
    run, pids, marker, log = tmp_path / "run", tmp_path / "pids", tmp_path / "held", tmp_path / "torchrun.log"
    pids.mkdir()
    launcher = tmp_path / "rank_launcher.py"
    launcher.write_text(RANK_LAUNCHER)
    plan = {"pids": str(pids), "hold": {"rank": 1, "at": "step", "step": 6, "marker": str(marker)}}
    argv = ["train", *settings(data, "ddp"), "--run-dir", str(run), "--resume", "auto"]
    with open(log, "w") as out:
        proc = subprocess.Popen(torchrun_cmd([str(launcher), json.dumps(plan), *argv]), env=torchrun_env(),
                                cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until(lambda: marker.exists() and ckpt.latest_checkpoint(run) is not None, proc,
                   "rank 1 held at step 6 after a complete checkpoint", log)
        killed = int((pids / "rank1-restart0.pid").read_text())
        os.kill(killed, signal.SIGKILL)
        assert proc.wait(timeout=240) != 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    errors = [line for line in text.splitlines() if "error: " in line and "rank 1" in line]
    assert len(errors) == 1, text[-4000:]
    line = errors[0]
    assert f"rank 1 (pid {killed} on " in line and "of 2 was killed or crashed" in line
    assert "from its last complete checkpoint (step-00000004)" in line
    assert "[rank0]: Traceback" not in text and "Connection closed by peer" not in text, text[-4000:]
    command = line.split(" with: ", 1)[1]
    assert command.startswith("torchrun --nproc_per_node=2 -m leviathan train ") and command.endswith("--resume auto")
    # the printed command resumes and finishes the run (torchrun -> this interpreter's torch.distributed.run)
    args = shlex.split(command)
    done = subprocess.run(torchrun_cmd(args[args.index("-m"):] + ["--quiet"]), env=torchrun_env(), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [s for s, _ in ckpt.list_checkpoints(run)][-1] == STEPS
