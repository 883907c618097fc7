"""Nothing is written into a new folder among a sweep's run folders, at any depth (issue 30 round 23, U283, U290).

``append_result('S/runs/x/results.jsonl', row)`` made x/ beside the sweep's runs, exit 0 (U290; through a symbolic
link to the sweep, U283), while ``report --out S/runs/y`` and ``collect_results.py --dest S/runs/x`` were refused:
``ownership.check_not_inside`` refused the runs/ container and a new folder directly in it, and judged anything
deeper by a run's marker, which a new folder has none of. What lies in a folder of runs/ that is no run is refused
too (the same line names ``report --out S/runs/y/z``, which wrote a report there).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run evaluated sweep)

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.mark.parametrize("through_link", [False, True])
def test_append_result_into_a_new_folder_among_the_runs_is_refused(swept, tmp_path, through_link):
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import append_result, read_results

    copy = Path(shutil.copytree(swept, tmp_path / "sw"))
    named = copy
    if through_link:
        named = tmp_path / "link"
        os.symlink(copy, named)
    runs = sorted(p.name for p in (copy / "runs").iterdir())
    with pytest.raises(UserError, match=r"lies inside .*the output of `leviathan sweep`.*choose another"):
        append_result(named / "runs" / "x" / "results.jsonl", read_results(swept)[0])
    assert sorted(p.name for p in (copy / "runs").iterdir()) == runs


def test_report_out_two_levels_into_the_runs_is_refused(swept, tmp_path):
    copy = Path(shutil.copytree(swept, tmp_path / "sw"))
    line = cli_error(["report", swept, "--out", copy / "runs" / "y" / "z"])
    assert f"--out '{copy / 'runs' / 'y' / 'z'}' lies inside '{copy}', the output of `leviathan sweep`" in line, line
    assert not (copy / "runs" / "y").exists()
