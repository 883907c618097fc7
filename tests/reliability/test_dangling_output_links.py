"""An output given as a symbolic link to nothing is named as such, and the path it names is offered only where a new
output may go (issue 30 round 20, K183, K185)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_export_into_a_link_to_a_runs_checkpoints_does_not_offer_that_path(finished_run, tmp_path):
    """K183: the fix offered "give the path it names (out_dir RUN/checkpoints/x)", which export then refused: it lies
    in the run's checkpoints/, which holds its step folders only."""
    link = tmp_path / "lk3"
    os.symlink(finished_run / "checkpoints" / "x", link)
    line = cli_error(["export", finished_run, link])
    assert f"is a symbolic link to '{finished_run / 'checkpoints' / 'x'}', which does not exist; remove the link" \
           in line, line
    assert "give the path it names" not in line and "the path it names lies inside another verb's output" in line
    free = tmp_path / "lk4"
    os.symlink(tmp_path / "nowhere", free)
    line = cli_error(["export", finished_run, free])
    assert f"give the path it names (out_dir {tmp_path / 'nowhere'})" in line, line
    assert not (finished_run / "checkpoints" / "x").exists() and not (tmp_path / "nowhere").exists()


def test_analyze_embeddings_into_a_link_to_nothing_names_the_link(finished_run, data, tmp_path):
    """K185: `analyze embeddings --out LINK` (a link to nothing inside a data folder) said "'LINK' exists and is not an
    embeddings record ... move the file away": nothing exists there."""
    link = tmp_path / "lk6"
    os.symlink(data / "sub", link)
    line = cli_error(["analyze", "embeddings", finished_run, "--out", link])
    assert f"--out '{link}' is a symbolic link to '{data / 'sub'}', which does not exist; remove the link" in line, line
    assert "exists and is not an embeddings record" not in line
    assert "the path it names lies inside another verb's output" in line
    assert os.path.islink(link) and not (data / "sub").exists()
