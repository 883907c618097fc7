"""scripts/collect_results.py says what skipping a damaged duplicate row means: the run's sound row is copied
(issue 30 round 21, N279). A results.jsonl with a run's sound row and a damaged second row of it warned "skipped, not
copied (its run has no row: the sweep trains it again)" while it copied the sound row and nothing was trained
again; the readers' rule (``results.skipped_consequence``, round 19 H95, H96) now says it for both."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import copied_sweep  # noqa: E402
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def swept(one_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(one_run_sweep, tmp_path_factory, "collect-duplicate")


def test_a_damaged_duplicate_of_a_copied_row_names_the_copied_row(swept, tmp_path):
    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    results = sweep / "results.jsonl"
    row = json.loads(results.read_text().splitlines()[0])
    row["eval"]["val"]["loss"] = 5.0  # its ppl no longer exp(loss): a row the readers refuse
    with results.open("a") as f:
        f.write(json.dumps(row) + "\n")
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 0, done.stderr
    assert f"skipped, the sound row of its run {row['name']!r} (line 1) is copied instead; delete this line" \
        in done.stderr, done.stderr
    assert "the sweep trains it again" not in done.stderr, done.stderr
    copied = (tmp_path / "res" / "g" / "results.jsonl").read_text().splitlines()
    assert len(copied) == 1 and json.loads(copied[0])["eval"]["val"]["loss"] != 5.0


def test_a_damaged_row_of_a_run_without_another_still_says_it_is_trained_again(swept, tmp_path):
    sweep = Path(shutil.copytree(swept, tmp_path / "sw"))
    results = sweep / "results.jsonl"
    row = json.loads(results.read_text().splitlines()[0])
    row["eval"]["val"]["loss"] = 5.0
    results.write_text(json.dumps(row) + "\n")
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    assert "skipped, not copied (its run has no row: the sweep trains it again)" in done.stderr, done.stderr
