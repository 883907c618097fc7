"""One sweep folder named twice among the shards to merge is refused, naming both (issue 30 round 30, Y379, Y380,
Y393; ``shards._check_named_once``).

``merge_sweeps([sw1, sw1])`` (Y379), ``merge_sweeps([sw1, a symbolic link to sw1])`` (Y380) and
``write_report([sw1, sw1], out)`` (Y393) merged the folder with itself without a word, so a shard folder mistyped
for another went unnoticed; ``report --ablation`` and ``prepare`` (Y209) already refused a folder given twice. The
folder and its own results.jsonl are the same folder too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, copied_sweep  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.fixture(scope="module")
def sweep(one_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(one_run_sweep, tmp_path_factory, "named-twice")


def _twice(sweep: Path, tmp_path: Path, how: str) -> list[str]:
    if how == "link":
        (tmp_path / "link").symlink_to(sweep, target_is_directory=True)
        return [str(sweep), str(tmp_path / "link")]
    if how == "results":
        return [str(sweep), str(sweep / "results.jsonl")]
    return [str(sweep), str(sweep)]


@pytest.mark.parametrize("how", ["same", "link", "results"], ids=["Y379-same-name", "Y380-symlink", "its-results"])
def test_merge_sweeps_refuses_one_folder_twice_naming_both(sweep, tmp_path, how):
    from leviathan.experiments.machinery.shards import merge_sweeps

    paths = _twice(sweep, tmp_path, how)
    with pytest.raises(UserError) as caught:
        merge_sweeps(paths, report=lambda message: None)
    said = str(caught.value)
    assert said.startswith(f"{paths[1]!r} is the sweep folder {paths[0]!r} again ("), said
    assert said.endswith("its rows would be merged with themselves; give each shard's sweep folder once"), said


def test_write_report_refuses_one_folder_twice_and_writes_nothing(sweep, tmp_path):
    """Y393: the report of the folder merged with itself was written."""
    from leviathan.experiments.report import write_report

    with pytest.raises(UserError, match=r"is the sweep folder .* again .*give each shard's sweep folder once"):
        write_report([sweep, sweep], tmp_path / "rep")
    assert not (tmp_path / "rep").exists()


def test_report_command_refuses_one_folder_twice_in_one_line(sweep, tmp_path):
    (tmp_path / "link").symlink_to(sweep, target_is_directory=True)
    line = cli_error(["report", sweep, tmp_path / "link", "--out", tmp_path / "rep"])
    assert "is the sweep folder" in line and "give each shard's sweep folder once" in line, line
    assert not (tmp_path / "rep").exists()


def test_two_shards_of_one_grid_still_merge(sweep, tmp_path):
    import shutil

    from leviathan.experiments.machinery.shards import merge_sweeps

    other = Path(shutil.copytree(sweep, sweep.parent / "other-shard"))
    rows, grid = merge_sweeps([sweep, other], report=lambda message: None)
    assert len(rows) == 1 and grid.name == "g"
