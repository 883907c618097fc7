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


@pytest.mark.parametrize("keep, what, steps", [
    (0, "holds no training rows", "steps 1, 4"),
    (2, "holds training rows up to step 2 only", "step 4"),
], ids=["C290-emptied", "C290-shortened"])
def test_a_resume_of_a_run_whose_metrics_lost_rows_says_so(data, run_copy, keep, what, steps):
    """C290 (round 16): metrics.jsonl emptied (``: > metrics.jsonl``) or cut to its first lines, then ``train --resume
    auto``: exit 0 without a word, the curve beginning after the lost rows though the checkpoint says 4 steps were
    trained. The run still goes on (the steps were trained; only their record is gone), with one note naming the
    file and the missing rows."""
    path = run_copy / "metrics.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:keep]))
    proc = cli(["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"])
    assert proc.returncode == 0, proc.stderr
    note = f"note: '{path}' {what}, but the checkpoint trained 4 steps (no row of {steps}): the file was emptied"
    assert proc.stderr.count(note) == 1, proc.stderr
    assert "restore metrics.jsonl from a copy" in proc.stderr, proc.stderr


def test_a_resume_of_a_whole_log_and_a_fork_say_nothing_of_lost_rows(data, run_copy, tmp_path):
    """C290's note is not said where no row is lost: a run's own whole log, and a fork into a new run folder (its
    rows begin after the step it continued from)."""
    proc = cli(["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"])
    assert proc.returncode == 0 and "metrics.jsonl" not in proc.stderr, proc.stderr
    fork = tmp_path / "fork"
    step = run_copy / "checkpoints" / "step-00000004"
    proc = cli(["train", *run_overrides(data, max_steps=6), "--run-dir", fork, "--resume", step, "--quiet"])
    assert proc.returncode == 0 and "metrics.jsonl" not in proc.stderr, proc.stderr
    proc = cli(["train", *run_overrides(data, max_steps=8), "--run-dir", fork, "--resume", "auto", "--quiet"])
    assert proc.returncode == 0 and "metrics.jsonl" not in proc.stderr, proc.stderr
