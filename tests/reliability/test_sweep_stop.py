"""A stop that reaches only the sweep's own process reaches its training workers too.

``kill PID`` (a service manager, ``timeout``, a scheduler that signals the main process) sends SIGTERM to the
``leviathan sweep`` process alone, not to its process group. With ``--jobs 2`` the sweep then waited, without a word,
for its two workers to train their runs to the end (hours at the paper's sizes): the width round's sweep, stopped
with ``kill -TERM`` of its pid, trained on until its workers were signalled by hand. Now the sweep passes the stop on:
each worker finishes its step, saves a checkpoint and ends, and the sweep says one line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, make_data, metric_lines, wait_for  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "integration"))
from test_sweep import _one_size_grid  # noqa: E402


def test_a_sigterm_to_the_sweep_alone_stops_its_workers_with_checkpoints(tmp_path):
    data = make_data(tmp_path)
    grid = _one_size_grid(data, max_steps=100_000, eval_tokens=32)  # runs that would train for hours
    grid["base"].update(checkpoint_interval=1_000_000, eval_interval=0, log_interval=1)
    (tmp_path / "g.yaml").write_text(yaml.safe_dump(grid))
    out = tmp_path / "sw"
    env = {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false",
           "PATH": "/usr/bin:/bin"}
    with open(tmp_path / "stderr.log", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "leviathan", "sweep", "--grid", "g.yaml", "--out", str(out),
                                 "--jobs", "2"], cwd=tmp_path, env=env, stdout=err, stderr=err,
                                start_new_session=True)  # its own group: the test's signal reaches this pid only
    runs = [out / "runs" / name for name in ("a-dense_tied-s0", "a-leviathan-s0")]
    wait_for(lambda: all(len(metric_lines(r)[0]) >= 3 for r in runs), proc, "both workers to train", timeout=240)
    proc.send_signal(signal.SIGTERM)
    t0 = time.time()
    try:
        status = proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("the sweep did not stop its workers: still training 90 s after its SIGTERM")
    log = (tmp_path / "stderr.log").read_text()
    assert status == 128 + signal.SIGTERM, log
    assert "Traceback" not in log, log
    assert "stopped by SIGTERM before `leviathan sweep` finished" in log, log
    assert time.time() - t0 < 90
    for run in runs:  # each worker saved the step it had finished, so the same command resumes it
        steps = sorted((run / "checkpoints").glob("step-*"))
        assert steps, log
        state = json.loads((steps[-1] / "state.json").read_text())
        assert 3 <= state["step"] < 100_000
        assert f"{run.name}: training stopped by SIGTERM at step {state['step']}; checkpoint saved" in log
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text().strip()
