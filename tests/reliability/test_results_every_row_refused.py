"""A sweep's own results.jsonl whose every row is refused is named as that, with each row's problem (issue 30 round
23, U103).

A sweep copy whose rows all had evaluation.options.max_tokens edited below the tokens they measured was "no result
rows in 'u/results.jsonl', which is not a results file: it is a sweep's results.jsonl ...; pass a sweep output dir":
it is the sweep's results.jsonl, and the cause (each row's fields edited apart, named per line when one row is bad,
U104) was not said. ``not_results.other_file`` no longer calls a results file another file, and ``load_results``
says that none of the file's lines is a row, beside the warnings naming each.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run evaluated sweep)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture
def edited(swept, tmp_path) -> Path:
    """A copy of ``swept`` whose every row says max_tokens 200 while it measured 400 tokens."""
    copy = Path(shutil.copytree(swept, tmp_path / "u"))
    rows = [json.loads(line) for line in (copy / "results.jsonl").read_text().splitlines()]
    for row in rows:
        row["evaluation"]["options"]["max_tokens"] = 200
    (copy / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return copy


def test_read_results_warns_of_each_row_and_returns_none(edited):
    from leviathan.experiments.machinery.results import read_results

    said: list[str] = []
    assert read_results(edited, said.append) == []
    assert len(said) == 2 and all("more than its evaluation.options.max_tokens 200 allows" in s for s in said), said


def test_report_names_the_rows_refused_not_another_kind_of_file(edited, tmp_path):
    line = cli_error(["report", edited, "--out", tmp_path / "rep"])
    assert "not a results file" not in line, line
    assert (f"no result rows in '{edited}': none of its 2 line(s) is a row the readers take (each is named in a "
            f"warning with its problem); correct or delete those lines") in line, line
    assert not (tmp_path / "rep").exists()
