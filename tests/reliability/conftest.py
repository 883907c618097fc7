"""Fixtures of the reliability suite: one tiny prepared corpus and one finished run, built once per session.

Tests that damage or extend the run work on a copy (``run_copy``); the originals stay pristine.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import make_data, run_overrides  # noqa: E402


@pytest.fixture(scope="session")
def data(tmp_path_factory) -> Path:
    return make_data(tmp_path_factory.mktemp("reliability-data"))


@pytest.fixture(scope="session")
def finished_run(data, tmp_path_factory) -> Path:
    """A leviathan run of 4 steps with checkpoints at steps 2 and 4 (both kept)."""
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    run = tmp_path_factory.mktemp("reliability-run") / "run"
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train(load_run_config(None, run_overrides(data)), run, quiet=True)
    finally:
        torch.set_num_threads(before)
    return run


@pytest.fixture
def run_copy(finished_run, tmp_path) -> Path:
    """A private copy of ``finished_run`` that a test may damage or continue."""
    dst = tmp_path / "run"
    shutil.copytree(finished_run, dst)
    return dst
