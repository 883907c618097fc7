"""Lines that named the problem but no fix (issue 30 round 15): eval of a data folder whose validation split is empty
(A54) and a sweep selection that matches no run (A103)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, one_run_grid  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_eval_of_an_empty_validation_split_names_the_way_out(data, finished_run, tmp_path):
    """A54: "pp/o10:val has fewer than 2 tokens; nothing to evaluate" and no fix."""
    pp = tmp_path / "pp"
    proc = cli(["prepare", data.parent / "corpus", "--out", pp, "--tokenizer", data, "--val-fraction", "0"])
    assert proc.returncode == 0, proc.stderr
    line = cli_error(["eval", finished_run, "--data", pp])
    assert "nothing to evaluate: prepare the data with a validation split (leviathan prepare ... " in line, line
    assert "--val-fraction" in line and "--split train" in line, line


def test_a_sweep_selection_of_no_run_lists_the_runs_and_list(data, tmp_path):
    """A103: "no run of grid 'g' matches the selection" and no fix."""
    grid = one_run_grid(data, tmp_path)
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "s", "--only", "zzz*"])
    assert "no run of grid 'g' matches the selection (--only 'zzz*'); its runs are " in line, line
    assert "`leviathan sweep --grid GRID --list`" in line and not (tmp_path / "s").exists()


@pytest.mark.parametrize("shown", ["--list", "--commands"])
def test_a_listing_of_a_selection_of_no_run_says_so_as_the_sweep_does(data, tmp_path, shown):
    """Round 16 (C218): ``sweep --only '[' --list`` printed an empty table, exit 0, with no word that nothing matched,
    while the same selection without --list is refused; --list and --commands refuse it with the sweep's line."""
    grid = one_run_grid(data, tmp_path)
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "s", "--only", "[", shown])
    assert "no run of grid 'g' matches the selection (--only '['); its runs are a-dense_tied-s0" in line, line
    assert not (tmp_path / "s").exists()


def test_a_size_name_too_long_for_a_run_folder_is_refused_when_the_grid_is_read(data, tmp_path):
    """A145: a 245-letter size name failed when the sweep made the run's folder, the fix pointing at --out."""
    size = "z" * 245
    grid = tmp_path / "glong.yaml"
    grid.write_text(yaml.safe_dump({"name": "g", "data": {"dir": str(data)}, "seeds": [0],
                                    "base": {"max_steps": 1, "data": {"seq_len": 32}},
                                    "sizes": {size: "cpu-tiny"},
                                    "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": [size]}}}))
    line = cli_error(["sweep", "--grid", grid, "--out", tmp_path / "gl"])
    assert "past the 255 a file name may have" in line and "give that size a shorter name under sizes:" in line, line
    assert "--out" not in line and not (tmp_path / "gl").exists()
