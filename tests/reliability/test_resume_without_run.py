"""``train --run-dir X --resume auto`` without --config where X holds no run (issue 30 round 15, A200, A201): the
line was the built-in defaults' "set exactly one of max_steps and max_tokens ...; neither is set", for a folder that
does not exist or is prepare's output. Now it says there is no run there, what the folder is, and to pass --config."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_resume_auto_of_a_folder_that_does_not_exist_says_there_is_no_run(tmp_path):
    """A200."""
    line = cli_error(["train", "--run-dir", tmp_path / "rn2", "--resume", "auto", "--quiet"])
    assert line.startswith(f"error: no run to resume: '{tmp_path / 'rn2'}' does not exist"), line
    assert "--config CONFIG" in line and not (tmp_path / "rn2").exists()


def test_resume_auto_of_a_data_folder_says_it_is_prepares_output(data):
    """A201."""
    before = tree_hashes(data)
    line = cli_error(["train", "--run-dir", data, "--resume", "auto", "--quiet"])
    assert f"no run to resume: '{data}' is a prepared data folder" in line and f"data.path={data}" in line, line
    assert tree_hashes(data) == before
