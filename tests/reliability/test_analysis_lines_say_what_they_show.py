"""A line of an analysis says what it shows, no more and no less (issue 30 round 20).

- K205: ``analyze compare`` of a folder holding one arm printed nothing at all, exit 0; now it says there is no pair.
- K206: report.md's "Not computed" line for a ladder without runs told to use --variant; report's flag is --ladder.
- K210: ``analyze fit --bootstrap 0`` ended "(rmse ...; 95% bootstrap intervals)" and showed none.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_compare_of_a_folder_of_one_arm_says_there_is_no_pair(swept, tmp_path):
    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    rows = (sweep / "results.jsonl").read_text().splitlines(keepends=True)
    (sweep / "results.jsonl").write_text(rows[0])  # one arm: nothing to pair it with
    done = cli(["analyze", "compare", sweep])
    assert done.returncode == 0, done.stderr
    assert f"no pairs to compare in {sweep}: no size and seed has a row of a model and of its baseline" in done.stdout


def test_the_reports_ladder_line_names_the_reports_flag(swept, tmp_path):
    done = cli(["report", swept, "--out", tmp_path / "r", "--ladder", "factorized", "--bootstrap", "5"])
    assert done.returncode == 0, done.stderr
    md = (tmp_path / "r" / "report.md").read_text()
    assert "no factorized runs with a 'val' loss in the results" in md
    assert "--ladder in `leviathan report`" in md, md


def test_a_fit_without_bootstrap_draws_claims_no_intervals():
    done = cli(["analyze", "fit", "--sizes", "1e6,2e6,4e6,8e6", "--losses", "5,4,3.5,3.2", "--bootstrap", "0"])
    assert done.returncode == 0, done.stderr
    assert "bootstrap intervals" not in done.stdout and "no intervals: no bootstrap draws (--bootstrap 0)" in \
        done.stdout, done.stdout
    done = cli(["analyze", "fit", "--sizes", "1e6,2e6,4e6,8e6", "--losses", "5,4,3.5,3.2", "--bootstrap", "200"])
    assert "95% bootstrap intervals" in done.stdout, done.stdout
