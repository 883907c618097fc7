"""scripts/collect_results.py writes no results folder that `leviathan report` then refuses, and names the files it
read, not its staging copy (issue 30 round 23, T48, T89, T90, T92, T113, T114).

A --skip-eval shard collected beside an evaluated shard was merged, exit 0 (T48), and so were a sweep's rows beside
a kept row of no eval numbers and no variant (T89) or an unknown one (T114): every report of the folder then refused
it. A kept row
the readers skip (params 'x', seed 'x') made the staged copy hold "no result rows", named by its path under /tmp
(T90, T113), and so did an empty sweep collected first (T92). The merged rows are now checked as the report checks
one folder (``check_merged_rows``), a --dest's rows as the readers check a line (``_check_kept_rows``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error, tree_hashes  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run evaluated sweep, grid 'tiny')
from test_row_identity import _collect_results, grid_file  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def shards(data, tmp_path_factory) -> tuple[Path, Path]:
    """The two shards of grid 'tiny': the first swept with --skip-eval, the second evaluated (T48)."""
    from leviathan.cli import main

    root = tmp_path_factory.mktemp("two-shards")
    grid = grid_file(root, data)
    assert main(["sweep", "--grid", str(grid), "--shard", "1/2", "--out", str(root / "sh1"), "--skip-eval"]) == 0
    assert main(["sweep", "--grid", str(grid), "--shard", "2/2", "--out", str(root / "sh2")]) == 0
    return root / "sh1", root / "sh2"


def _refused(done) -> str:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stdout + done.stderr
    line = one_error(done.stderr)
    assert re.search(r"/collect-[0-9a-f]{8}/", line) is None, line  # the staging copy is never named
    return line


def test_a_skip_eval_shard_and_an_evaluated_shard_are_not_merged(shards, tmp_path):
    """T48: `collect_results.py sh1 sh2 --dest csh` wrote both rows, exit 0; `report csh/tiny` then refused them."""
    sh1, sh2 = shards
    done = _collect_results(sh1, sh2, "--dest", tmp_path / "csh")
    line = _refused(done)
    assert f"the rows of {sh1} and {sh2} together were not all evaluated: a-dense_tied-s0 hold no eval numbers" in line
    assert f"collect {sh2} into another --dest to keep both" in line, line
    assert not (tmp_path / "csh").exists()


def test_a_shard_collected_into_a_folder_holding_the_other_kind_is_refused(shards, tmp_path):
    """T48 in two calls: the evaluated shard first, then the --skip-eval one into the same --dest."""
    sh1, sh2 = shards
    assert _collect_results(sh2, "--dest", tmp_path / "csh").returncode == 0
    before = tree_hashes(tmp_path / "csh")
    line = _refused(_collect_results(sh1, "--dest", tmp_path / "csh"))
    assert f"the rows of {tmp_path / 'csh' / 'tiny'} and {sh1} together were not all evaluated" in line, line
    assert tree_hashes(tmp_path / "csh") == before


def _dest_holding(swept: Path, tmp_path: Path, row: dict) -> Path:
    """A results folder collected from ``swept`` whose results.jsonl is then the one hand-written ``row``."""
    dest = tmp_path / "res"
    assert _collect_results(swept, "--dest", dest).returncode == 0
    (dest / "tiny" / "results.jsonl").write_text(json.dumps(row) + "\n")
    return dest


@pytest.mark.parametrize("row, said", [
    ({"name": "a-dense_tied-s0", "params": "x", "variant": 5}, "the row 'a-dense_tied-s0' has variant 5, not a name"),
    ({"name": "a-dense_tied-s0", "variant": "dense_tied", "seed": "x"}, "the row 'a-dense_tied-s0' has seed 'x', "
                                                                         "not a whole"),  # T113
])
def test_a_kept_row_the_readers_refuse_is_named_with_its_line(swept, tmp_path, row, said):
    """T90, T113 (the staging path named): the --dest's own line is named, and nothing is written."""
    dest = _dest_holding(swept, tmp_path, row)
    before = tree_hashes(dest)
    line = _refused(_collect_results(swept, "--dest", dest))
    assert f"'{dest / 'tiny' / 'results.jsonl'}' line 1: {said}" in line, line
    assert "correct or delete that line, or choose another --dest" in line, line
    assert tree_hashes(dest) == before


@pytest.mark.parametrize("row", [{"name": "zz", "variant": "nope", "seed": 0}, {"name": "zz"}])  # T114, T89
def test_a_kept_row_without_eval_numbers_is_not_merged_with_evaluated_rows(swept, tmp_path, row):
    """T89, T114: a kept row of no variant, or of an unknown one, and no eval numbers had the sweep's rows added
    beside it, exit 0, and `report` then refused the folder."""
    dest = _dest_holding(swept, tmp_path, row)
    before = tree_hashes(dest)
    line = _refused(_collect_results(swept, "--dest", dest))
    assert f"the rows of {dest / 'tiny'} and {swept} together were not all evaluated: zz hold no eval numbers" in line
    assert tree_hashes(dest) == before


@pytest.mark.parametrize("order", ["empty first", "empty last"])
def test_an_empty_sweep_collected_beside_another_adds_no_rows_in_either_order(swept, tmp_path, order):
    """T92: `collect_results.py s9 s1` (s9's results.jsonl empty) named '/tmp/collect-XXXX/0/results.jsonl'; `s1 s9`
    named s9's file, while `s9` alone collects 0 rows. Both orders now collect s1's rows."""
    empty = Path(shutil.copytree(swept, tmp_path / "s9"))
    (empty / "results.jsonl").write_text("")
    sweeps = [empty, swept] if order == "empty first" else [swept, empty]
    done = _collect_results(*sweeps, "--dest", tmp_path / "res")
    assert done.returncode == 0, done.stderr
    assert f"{empty} -> {tmp_path / 'res' / 'tiny'} (0 rows)" in done.stdout, done.stdout
    assert len((tmp_path / "res" / "tiny" / "results.jsonl").read_text().splitlines()) == 2
