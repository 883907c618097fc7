"""Shared helpers of the reliability tests: a tiny corpus, file hashes, CLI runs, subprocess launches.

The corpus and the run overrides are those of the training integration tests (``tests/integration/
test_train.py``), so every run here trains in a fraction of a second per step.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
from test_train import make_data, tiny_overrides, write_corpus  # noqa: E402,F401

RUN_STEPS = 4


def run_overrides(data: Path, **extra) -> list[str]:
    """Settings of the session's ``finished_run`` fixture: 4 steps, checkpoints at 2 and 4 (extra keys override)."""
    base = dict(max_steps=RUN_STEPS, checkpoint_interval=2, eval_interval=0, keep_last="null")
    base.update(extra)
    return tiny_overrides(data, **base)


# A subprocess that runs ``leviathan <argv>`` after optionally pausing inside the checkpoint writer:
# argv[1] is a JSON plan {"pause": {"step": k, "where": "files" | "rename", "marker": path}}. "files"
# hangs after model.safetensors of step k is written (the other files are not), "rename" hangs once every
# file of step k is written and fsynced, just before the folder is renamed into place. The marker file
# tells the test the process is there, so it can SIGKILL it exactly inside the write.
LAUNCHER = r"""
import json, sys, time
plan = json.loads(sys.argv[1])
from leviathan.train import checkpoint as ckpt

def hang(marker):
    open(marker, "w").close()
    time.sleep(3600)

pause = plan.get("pause")
if pause and pause["where"] == "files":
    real_save = ckpt.save_file
    def save_file(tensors, path, *args, **kwargs):
        real_save(tensors, path, *args, **kwargs)
        if ckpt.step_name(pause["step"]) in str(path):
            hang(pause["marker"])
    ckpt.save_file = save_file
elif pause and pause["where"] == "rename":
    real_fsync_dir = ckpt._fsync_dir
    def fsync_dir(path):
        real_fsync_dir(path)
        if path.name.startswith(".tmp-" + ckpt.step_name(pause["step"])):
            hang(pause["marker"])
    ckpt._fsync_dir = fsync_dir
from leviathan.cli import main
sys.exit(main(sys.argv[2:]))
"""


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (relative path -> hex digest), less a reader's claim
    (``.reader-PID-X.lock``): since round 27 (S521) a TokenDataset claims its data folder for as long as its map lives,
    and a dataset an in-process refusal built lives until the garbage collector frees its traceback's frames. The
    claim is a lock, not a change of the folder; it goes with the map or the process."""
    from leviathan.locking import is_reader_lock

    root = Path(root)
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not is_reader_lock(p.name)}


def one_error(err: str) -> str:
    """The single ``error: ...`` line of a CLI run's stderr (asserting there is exactly one and no traceback)."""
    lines = [ln for ln in err.splitlines() if ln.startswith("error: ") or ": error: " in ln]  # ours or argparse's
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    return lines[0]


def launch(argv: list[str], cwd: Path, plan: dict | None = None, log_name: str = "stderr.log") -> subprocess.Popen:
    """``python -c LAUNCHER plan argv`` with one thread; stderr goes to ``cwd/log_name``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}
    with open(Path(cwd) / log_name, "a") as log:  # the child keeps its own descriptor
        return subprocess.Popen([sys.executable, "-c", LAUNCHER, json.dumps(plan or {}), *argv], env=env,
                                stdout=subprocess.DEVNULL, stderr=log, cwd=cwd)


def wait_for(condition, proc: subprocess.Popen, what: str, timeout: float = 120.0) -> None:
    """Poll ``condition()`` until true; fail if the process exits first or the time runs out."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the process exited ({proc.returncode}) before {what}")
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"timed out waiting for {what}")


def metric_lines(run: Path) -> tuple[list[dict], list[str]]:
    """(rows that parse, lines that do not) of a run's metrics.jsonl."""
    path = Path(run) / "metrics.jsonl"
    rows, torn = [], []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                torn.append(line)
    return rows, torn


def cli(argv: list, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m leviathan <argv>`` in a real process with one thread (stdout and stderr captured as text)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, "-m", "leviathan", *map(str, argv)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def cli_error(argv: list, cwd: Path | None = None) -> str:
    """The single ``error: ...`` line of a real ``leviathan`` process that must exit with status 2."""
    proc = cli(argv, cwd)
    assert proc.returncode == 2, proc.stderr
    return one_error(proc.stderr)


def script(name: str, argv: list, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python scripts/<name> <argv>`` in a real process with one thread (stdout and stderr captured as text)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, str(REPO / "scripts" / name), *map(str, argv)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def refingerprint(step: Path) -> None:
    """Rewrite a step folder's state.json to record its files as they are now: a checkpoint tampered with as a
    whole (state.json too), so the fingerprints agree and the deeper checks (weight shapes, the pickle guard) are
    the ones tested."""
    from leviathan.checkpoint.state import fingerprints

    path = Path(step) / "state.json"
    state = json.loads(path.read_text())
    state["files"] = fingerprints(step)
    path.write_text(json.dumps(state))


def refingerprint_data(data: Path) -> None:
    """Rewrite a data folder's meta.json to record its files as they are now (see ``refingerprint``)."""
    from leviathan.data.companions import file_digests
    from leviathan.data.meta_digest import DIGESTS, field_digests

    path = Path(data) / "meta.json"
    meta = json.loads(path.read_text())
    meta["files"] = file_digests(data)
    if DIGESTS in meta:  # its own fields too (round 14): a folder edited as a whole, so deeper checks are tested
        meta[DIGESTS] = field_digests(meta)
    path.write_text(json.dumps(meta))


def damage_beyond_use(step: Path) -> int:
    """Make a step folder one a resume passes over with a note (``checkpoint.damage``: a file missing and its weights
    unreadable), so ``--resume auto`` goes on from the previous step and saves this step again over it: since round
    14 (A179) the one way to reach that save, as resuming an older step while a newer complete one exists is refused.
    Returns the bytes it freed."""
    step = Path(step)
    freed = (step / "optimizer.pt").stat().st_size + (step / "model.safetensors").stat().st_size - 16
    (step / "optimizer.pt").unlink()
    (step / "model.safetensors").write_bytes(b"not safetensors")
    return freed


def swept_grid(grid: Path, root: Path) -> Path:
    """``leviathan sweep --grid GRID --out ROOT/sweep`` in this process (real training and evaluation): the sweep
    folder. The sweeps of ``one_run_grid`` and ``grid_file`` are trained once per session (conftest's
    ``one_run_sweep``, ``two_run_sweep``); a module takes its own copy with ``copied_sweep``."""
    from leviathan.cli import main

    assert main(["sweep", "--grid", str(grid), "--out", str(root / "sweep")]) == 0
    return root / "sweep"


def grid_file(folder: Path, data: Path, **eval_options) -> Path:
    """A grid file ``folder/grid.yaml``: grid ``tiny``, two two-step runs (dense_tied and dense_untied of a width-16
    cpu-tiny, seed 0) on ``data``, evaluated on the val split with ``eval_options``."""
    import yaml

    grid = {"name": "tiny", "data": {"dir": str(data)}, "seeds": [0],
            "base": {"data": {"seq_len": 32}, "batch_tokens": 128, "micro_batch_size": 4, "max_steps": 2,
                     "log_interval": 1, "eval_interval": 0, "eval_tokens": 200, "checkpoint_interval": 0,
                     "keep_last": 1, "device": "cpu", "schedule": {"warmup_steps": 1}},
            "eval": {"buckets": 2, "seq_len": 32, "batch_size": 4, "max_tokens": 400, **eval_options},
            "sizes": {"a": {"preset": "cpu-tiny", "hidden_size": 16, "num_attention_heads": 2}},
            "experiments": {"iso_body": {"variants": ["dense_tied", "dense_untied"], "sizes": ["a"]}}}
    path = folder / "grid.yaml"
    path.write_text(yaml.safe_dump(grid))
    return path


def one_run_grid(data: Path, folder: Path) -> Path:
    """A grid file ``folder/g.yaml``: grid ``g``, one one-step run (dense_tied, cpu-tiny, seed 0) on ``data``."""
    import yaml

    grid = Path(folder) / "g.yaml"
    grid.write_text(yaml.safe_dump({"name": "g", "data": {"dir": str(data)}, "seeds": [0],
                                    "base": {"max_steps": 1, "schedule": {"warmup_steps": 0}, "data": {"seq_len": 32}},
                                    "sizes": {"a": "cpu-tiny"},
                                    "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}))
    return grid


def copied_sweep(sweep: Path, tmp_path_factory, name: str) -> Path:
    """A copy of the session's finished ``sweep`` for a module fixture, in a fresh folder ``name``: the module may
    change its copy; the session's sweep stays as trained. The folder holding the sweep is copied whole, under its
    own name, so the grid file beside the sweep and the relative path grid.json records still name each other."""
    import shutil

    root = Path(sweep).parent
    return Path(shutil.copytree(root, tmp_path_factory.mktemp(name) / root.name)) / Path(sweep).name
