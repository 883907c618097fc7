"""``--`` ends a verb's options, so a path that starts with '-' can be named (issue 30 round 20, K155)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_run_folder_named_after_double_dash_is_read(finished_run, tmp_path):
    """`eval -- -r` said "the following arguments are required: checkpoint": the word after '--' was dropped."""
    shutil.copytree(finished_run, tmp_path / "-r")
    proc = cli(["eval", "--max-tokens", "64", "--", "-r"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "-r/checkpoints/step-00000004" in proc.stdout, proc.stdout
    proc = cli(["eval", "--", "-r", "--max-tokens"], cwd=tmp_path)  # after '--' no word is an option
    assert proc.returncode == 2 and "unrecognized arguments: --max-tokens" in proc.stderr, proc.stderr
