"""A results row's validation curve held to its run's own log (issue 30 round 28, T27).

A row whose ``curve.val_loss`` point was edited (5.4495 to 0.5 at 1,536 tokens) was reported, exit 0, and entered
analysis.json's gain over training, though the run's metrics.jsonl beside it (``runs/<name>``) holds 5.4495 there:
the sweep copies the curve from that log (``sweep._curve``), and only the final numbers were held to it.
``summary_check.row_contradiction`` (behind report, collect_results.py and merge_sweeps) now compares each point of
the curve with the log's validation at the same tokens, where the log is proven the row's (its last validation is
the row's final_val_loss); the refusal names the row, the point, both values and the log.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, copied_sweep  # noqa: E402

pytestmark = [pytest.mark.reliability]


def two_point_sweep(one_run_sweep, tmp_path_factory) -> Path:
    """A copy of the one-run sweep whose run logged a validation at step 0 too, its row's curve copied from it as
    the sweep copies it (the one-step run has one point, its final, which ``_impossible`` holds to final_val_loss)."""
    sweep = copied_sweep(one_run_sweep, tmp_path_factory, "t27")
    metrics = next((sweep / "runs").glob("*/metrics.jsonl"))
    lines = metrics.read_text().splitlines()
    first = {"step": 0, "tokens": 0, "val_loss": 5.9, "split": "val", "run_id": json.loads(lines[-1])["run_id"]}
    metrics.write_text("".join(line + "\n" for line in [json.dumps(first), *lines]))
    row = json.loads((sweep / "results.jsonl").read_text())
    row["curve"]["tokens"].insert(0, 0)
    row["curve"]["val_loss"].insert(0, 5.9)
    (sweep / "results.jsonl").write_text(json.dumps(row) + "\n")
    return sweep


def test_a_row_whose_curve_point_was_edited_is_refused(one_run_sweep, tmp_path_factory):
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.machinery.summary_check import row_contradiction

    sweep = two_point_sweep(one_run_sweep, tmp_path_factory)
    results = sweep / "results.jsonl"
    assert row_contradiction(read_results(sweep)[0], sweep) is None  # as the sweep writes it
    row = json.loads(results.read_text())
    row["curve"]["val_loss"][0] = 0.5
    results.write_text(json.dumps(row) + "\n")
    done = cli(["report", str(sweep), "--out", str(sweep.parent / "rp")])
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert (f"the row of run {row['name']!r}: curve.val_loss 0.5 at 0 tokens is not the run's own validation there "
            f"(val_loss 5.9 in ") in line, line
    assert not (sweep.parent / "rp").exists()
