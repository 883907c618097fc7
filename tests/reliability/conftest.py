"""Fixtures of the reliability suite: one tiny prepared corpus and one finished run, built once per session.

Tests that damage or extend the run work on a copy (``run_copy``); the originals stay pristine.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, grid_file, make_data, one_run_grid, run_overrides, swept_grid  # noqa: E402


@pytest.fixture(scope="session")
def data(tmp_path_factory) -> Path:
    return make_data(tmp_path_factory.mktemp("reliability-data"))


@pytest.fixture(scope="session")
def one_run_sweep(data, tmp_path_factory) -> Path:
    """The finished sweep of ``one_run_grid`` (one one-step run), trained once; modules copy it (``copied_sweep``)."""
    root = tmp_path_factory.mktemp("one-run-sweep")
    return swept_grid(one_run_grid(data, root), root)


@pytest.fixture(scope="session")
def two_run_sweep(data, tmp_path_factory) -> Path:
    """The finished sweep of ``grid_file`` (two two-step runs), trained once; modules copy it (``copied_sweep``)."""
    root = tmp_path_factory.mktemp("two-run-sweep")
    return swept_grid(grid_file(root, data), root)


def train_tiny(run: Path, overrides: list[str]) -> Path:
    """Train the tiny run ``overrides`` describe into ``run`` on one thread (the thread count restored after)."""
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train(load_run_config(None, overrides), run, quiet=True)
    finally:
        torch.set_num_threads(before)
    return run


@pytest.fixture(scope="session")
def finished_run(data, tmp_path_factory) -> Path:
    """A leviathan run of 4 steps with checkpoints at steps 2 and 4 (both kept)."""
    return train_tiny(tmp_path_factory.mktemp("reliability-run") / "run", run_overrides(data))


@pytest.fixture(scope="session")
def other_run(data, tmp_path_factory) -> Path:
    """A second run of the same shape as ``finished_run`` (seed 2): its step folders fit the first run's model."""
    return train_tiny(tmp_path_factory.mktemp("other-run") / "rb", run_overrides(data, seed=2))


@pytest.fixture(scope="session")
def exported(finished_run, tmp_path_factory) -> Path:
    """``leviathan export`` of ``finished_run``; a test that changes it works on a copy."""
    out = tmp_path_factory.mktemp("reliability-export") / "ex"
    proc = cli(["export", finished_run, out])
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def run_copy(finished_run, tmp_path) -> Path:
    """A private copy of ``finished_run`` that a test may damage or continue."""
    dst = tmp_path / "run"
    shutil.copytree(finished_run, dst)
    return dst


@pytest.fixture
def tmpfs(tmp_path):
    """A function ``(mount options such as "size=300k" or "size=20m,nr_inodes=6") -> folder on a fresh tmpfs``: a
    real full disk (or one out of inodes). Skips where mounting is not allowed; every mount is undone at the end."""
    import subprocess
    import uuid

    mounts: list[Path] = []

    def make(options: str) -> Path:
        where = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
        where.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True,
                              text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'mount refused'})")
        mounts.append(where)
        return where

    yield make
    for where in mounts:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def immutable():
    """``immutable(path)`` sets the file's immutable flag (chattr +i: even root cannot delete it); undone at the end."""
    import subprocess

    if os.geteuid() != 0 or not shutil.which("chattr"):
        pytest.skip("chattr +i needs root")
    flagged: list[Path] = []

    def flag(path: Path) -> Path:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("this file system has no immutable flag")
        flagged.append(path)
        return path

    yield flag
    for path in flagged:
        for p in [path, *path.parent.parent.glob(f".*/{path.parent.name}/{path.name}"),
                  *path.parent.parent.glob(f".*.old-*/{path.name}"), *path.parent.parent.glob(f".tmp-*/{path.name}")]:
            subprocess.run(["chattr", "-i", str(p)], capture_output=True)
