"""A grid.json edited apart from its rows is named as such by report, analyze and collect_results (issue 30 round
20; ``experiments.machinery.grid_agreement``).

- K168, K170, M210: grid.json's data_fingerprint edited to another corpus's: report and collect blamed the data
  folder's place ("not found from here") and collect stored the edited grid.json, exit 0; analyze compare said
  nothing. Now the fingerprint that differs from the rows' is named and nothing is written.
- K169, K171: grid.json's base_overrides with ``max_steps=2`` deleted (the rows trained 2 steps): no word at all.
  Now a compared setting grid.json leaves at its default is compared with the rows' as that default.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error  # noqa: E402
from test_grid_json_notes import _edited, swept  # noqa: E402,F401  (swept: the fixture, a real two-run sweep)
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _other_fingerprint(grid: dict) -> None:
    grid["data_fingerprint"] = "330f7fc07eb0f53b3eb6a21dff617436998ef23ae9dd6ebe0175c64ae59806df"


def _no_max_steps(grid: dict) -> None:
    grid["base_overrides"] = [o for o in grid["base_overrides"] if not o.startswith("max_steps")]


@pytest.mark.parametrize("change, said", [
    (_other_fingerprint, "data fingerprint: "),
    (_no_max_steps, "max_steps: 2 in the row, not set in grid.json"),
], ids=["K168-K170-fingerprint", "K169-K171-max_steps"])
def test_an_edited_grid_json_is_named_by_report_analyze_and_collect(swept, tmp_path, change, said):
    sweep = _edited(swept, tmp_path / "sw", change)
    for argv in (["report", sweep, "--out", tmp_path / "rep", "--bootstrap", "5"], ["analyze", "compare", sweep]):
        done = cli(argv)
        assert done.returncode == 2, done.stdout + done.stderr
        line = one_error(done.stderr)
        assert "grid.json does not describe the rows" in line and said in line, line
    assert not (tmp_path / "rep").exists()
    done = _collect_results(sweep, "--dest", tmp_path / "res")
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in one_error(done.stderr) and not (tmp_path / "res").exists()


def test_write_report_names_an_edited_fingerprint_not_the_folder(swept, tmp_path):
    """M210: the Python API, as the CLI."""
    from leviathan.errors import UserError
    from leviathan.experiments.report import write_report

    sweep = _edited(swept, tmp_path / "sw", lambda g: g.update(data_fingerprint="0" * 64))
    with pytest.raises(UserError, match="data fingerprint: .* in grid.json"):
        write_report(sweep, tmp_path / "rep", num_bootstrap=5)
    assert not (tmp_path / "rep").exists()


def test_the_sweeps_own_grid_json_still_passes(swept):
    done = cli(["analyze", "compare", swept])
    assert done.returncode == 0 and "reduction" in done.stdout, done.stderr
