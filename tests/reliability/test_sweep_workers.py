"""A ``sweep --jobs 2`` whose worker dies or fails ends in one line, and the other worker's stop is the sweep's to
say (issue 30 round 20, K114, K115, K111; ``experiments.machinery.sweep._run_parallel``).

K114, K115: a worker killed (SIGKILL, as the OOM killer does; or a SIGTERM before its handlers were set) ended the
sweep in a 40-line BrokenProcessPool traceback, exit 1. K111: a worker that failed (a file grew past ``ulimit -f``)
made the sweep stop the other one, which printed train's "SIGTERM received: ... (exit status 0)": a signal the user
never sent and a status the sweep does not have.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, make_data, metric_lines, one_error, wait_for  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "integration"))
from test_sweep import _one_size_grid  # noqa: E402

pytestmark = [pytest.mark.reliability]
RUNS = ("a-dense_tied-s0", "a-leviathan-s0")


def _start(tmp_path: Path, grid: dict, preexec=None) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "g.yaml").write_text(yaml.safe_dump(grid))
    env = {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false",
           "PATH": "/usr/bin:/bin"}
    with open(tmp_path / "stderr.log", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "leviathan", "sweep", "--grid", "g.yaml", "--out", "sw",
                                 "--jobs", "2"], cwd=tmp_path, env=env, stdout=err, stderr=err,
                                start_new_session=True, preexec_fn=preexec)
    return proc, tmp_path / "sw"


def _ended(proc: subprocess.Popen, tmp_path: Path) -> tuple[int, str]:
    try:
        status = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("the sweep did not end")
    return status, (tmp_path / "stderr.log").read_text()


def _end_group(proc: subprocess.Popen) -> None:
    """Whatever is left of the sweep's process group (its own session), whatever the test found."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _group_members(pid: int, word: str) -> list[int]:
    """The processes of the sweep started as ``pid`` (its own process group) whose command line holds ``word``."""
    out = subprocess.run(["ps", "-eww", "-o", "pid=,pgid=,args="], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if line.split()[1] == str(pid) and word in line]


def _workers(pid: int) -> list[int]:
    """The pool's worker processes of the sweep started as ``pid``."""
    return _group_members(pid, "spawn_main")


def test_a_killed_worker_ends_the_sweep_in_one_line_naming_its_runs(tmp_path):
    data = make_data(tmp_path)
    grid = _one_size_grid(data, max_steps=100_000, eval_tokens=32)
    grid["base"].update(checkpoint_interval=1_000_000, eval_interval=0, log_interval=1)
    proc, out = _start(tmp_path, grid)
    try:
        wait_for(lambda: all(len(metric_lines(out / "runs" / r)[0]) >= 2 for r in RUNS), proc, "both to train", 240)
        os.kill(_workers(proc.pid)[0], signal.SIGKILL)  # K114: as the OOM killer would
        status, log = _ended(proc, tmp_path)
    finally:
        _end_group(proc)
    assert status == 2, log
    line = one_error(log)
    assert "a worker process of the sweep ended abruptly" in line and "run the same command again" in line, line
    assert all(name in line for name in RUNS), line
    assert "SIGTERM received" not in log, log  # the other worker, stopped by the sweep, says nothing of its own


def test_a_failing_worker_stops_the_other_without_a_stop_line_of_its_own(tmp_path):
    """K111: the leviathan run cannot save its first checkpoint (``ulimit -f``); the dense run, still training, is
    stopped by the sweep, and only the failure's line is printed."""
    data = make_data(tmp_path)
    grid = _one_size_grid(data, max_steps=100_000, eval_tokens=32)
    grid["base"].update(checkpoint_interval=1_000_000, eval_interval=0, log_interval=1_000_000)
    grid["variant_run"] = {"leviathan": {"checkpoint_interval": 20, "max_steps": 40}}
    limit = 12_000

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc, out = _start(tmp_path, grid, preexec=small_files)
    try:
        status, log = _ended(proc, tmp_path)
    finally:
        _end_group(proc)
    assert status == 2, log
    line = one_error(log)
    assert "a-leviathan-s0" in line and "could not save" in line, line
    assert "SIGTERM received" not in log and "exit status 0" not in log, log


def test_a_killed_resource_tracker_gives_one_warning_line_not_tracebacks(tmp_path):
    """K113: multiprocessing's resource tracker killed mid-sweep was launched again by each process, which printed
    UserWarnings with their source lines and KeyError tracebacks, though the rows were right."""
    data = make_data(tmp_path)
    grid = _one_size_grid(data, max_steps=30, eval_tokens=32)
    grid["base"].update(eval_interval=0, log_interval=1)
    proc, out = _start(tmp_path, grid)
    try:
        wait_for(lambda: all(len(metric_lines(out / "runs" / r)[0]) >= 2 for r in RUNS), proc, "both to train", 240)
        os.kill(_group_members(proc.pid, "resource_tracker")[0], signal.SIGKILL)
        status, log = _ended(proc, tmp_path)
    finally:
        _end_group(proc)
    assert status == 0, log
    assert "Traceback" not in log and "UserWarning" not in log and "KeyError" not in log, log
    assert log.count("warning: multiprocessing's resource tracker process died") == 1, log
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
