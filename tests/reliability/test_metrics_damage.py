"""A run's damaged metrics.jsonl is kept aside, not dropped without a word (issue 30 round 15, A203): a file of random
bytes was rewritten empty on resume, exit 0, silently (only a line that happened to parse as JSON was named). Now
every line that is not JSON (but a last line a crash cut short) is named, and the file as it was is kept as
``metrics.jsonl.damaged`` beside the new one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, run_overrides  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_a_metrics_file_of_random_bytes_is_kept_aside_on_resume(data, run_copy):
    garbage = os.urandom(3000).replace(b"{", b"(")  # never a JSON object
    (run_copy / "metrics.jsonl").write_bytes(garbage)
    proc = cli(["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"])
    assert proc.returncode == 0, proc.stderr
    assert "is not JSON; skipped, dropped from the file on this resume" in proc.stderr, proc.stderr
    aside = run_copy / "metrics.jsonl.damaged"
    assert f"kept as '{aside}'" in proc.stderr and aside.read_bytes() == garbage


def test_a_last_line_cut_short_by_a_crash_is_still_dropped_quietly(data, run_copy):
    path = run_copy / "metrics.jsonl"
    path.write_text(path.read_text() + '{"step": 5, "train_lo')
    proc = cli(["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"])
    assert proc.returncode == 0, proc.stderr
    assert "metrics.jsonl" not in proc.stderr and not (run_copy / "metrics.jsonl.damaged").exists(), proc.stderr
