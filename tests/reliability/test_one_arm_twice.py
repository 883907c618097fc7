"""One arm (a variant at a size and seed in a regime) held twice under two names is refused by the one results reader,
in every verb that reads rows, before any output is made (issue 30 round 19, J88-J95).

A results.jsonl with row 1 copied and renamed ('a-dense_tied-s0-copy') made ``leviathan report`` end in
``paired_comparisons``' ValueError traceback, exit 1, its --out left holding only its marker (J88, J93);
``analyze compare`` and ``analyze efficiency`` paired with whichever row came last (J89, J90), collect_results
copied both (J92) and a sweep rerun said the folder was done (J95), all exit 0 without a word.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _one_arm_twice(swept: Path, folder: Path) -> Path:
    sweep = Path(shutil.copytree(swept, folder))
    first = json.loads((sweep / "results.jsonl").read_text().splitlines()[0])
    with open(sweep / "results.jsonl", "a") as f:
        f.write(json.dumps(dict(first, name=first["name"] + "-copy")) + "\n")
    return sweep


@pytest.mark.parametrize("argv", [
    ["report", "SW", "--out", "OUT", "--bootstrap", "5"],
    ["analyze", "compare", "SW"],
    ["analyze", "efficiency", "SW"],
    ["sweep", "--grid", "GRID", "--out", "SW"],
    ["collect"],
], ids=["J88-report", "J89-compare", "J90-efficiency", "J95-sweep-rerun", "J92-collect_results"])
def test_one_arm_under_two_names_is_one_error_naming_both_rows_and_nothing_is_made(swept, tmp_path, argv):
    sweep = _one_arm_twice(swept, tmp_path / "sw")
    before = (sweep / "results.jsonl").read_text()
    if argv == ["collect"]:
        done = _collect_results(sweep, "--dest", tmp_path / "OUT")
    else:
        done = cli([{"SW": sweep, "OUT": tmp_path / "OUT", "GRID": swept.parent / "grid.yaml"}.get(a, a) for a in argv])
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert line == (f"error: results '{sweep / 'results.jsonl'}': line 3 ('a-dense_tied-s0-copy') and line 1 "
                    f"('a-dense_tied-s0') are both variant 'dense_tied' of size 'a', seed 0 in regime 'iso_body': one "
                    f"would hide the other; delete the line of the row you do not trust, or correct its variant, "
                    f"size or seed"), line
    assert not (tmp_path / "OUT").exists()  # J88: --out held its marker only
    assert (sweep / "results.jsonl").read_text() == before


def test_a_collected_folder_of_one_arm_twice_is_refused_by_report(swept, tmp_path):
    """J93: the folder collect_results made before (its rows copied as they were) is refused the same way."""
    collected = _one_arm_twice(swept, tmp_path / "res" / "tiny")
    done = cli(["report", collected, "--out", tmp_path / "rep", "--bootstrap", "5"])
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "are both variant 'dense_tied' of size 'a', seed 0" in one_error(done.stderr)
    assert not (tmp_path / "rep").exists()


def test_one_arm_in_two_shards_under_two_names_is_refused(swept, tmp_path):
    """The same kind across the folders of one grid merged as shards (``shards.merge_sweeps``)."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.shards import merge_sweeps

    other = Path(shutil.copytree(swept, tmp_path / "shard2"))
    rows = [json.loads(line) for line in (other / "results.jsonl").read_text().splitlines()]
    (other / "results.jsonl").write_text(json.dumps(dict(rows[0], name=rows[0]["name"] + "-copy")) + "\n")
    with pytest.raises(UserError, match=r"these shards hold one arm twice: .*\('a-dense_tied-s0-copy'\) and "
                                        r".*\('a-dense_tied-s0'\) are both variant 'dense_tied'"):
        merge_sweeps([swept, other], report=lambda message: None)


def test_collecting_a_sweep_whose_rows_name_an_arm_the_destination_holds_otherwise_is_refused(swept, tmp_path):
    """J92, J93 across two collections: each folder passes alone, but the merged results file would hold the arm twice
    and every reader would refuse it once committed; the second collection is refused and the first stays whole."""
    done = _collect_results(swept, "--dest", tmp_path / "res")
    assert done.returncode == 0, done.stderr
    before = (tmp_path / "res" / "tiny" / "results.jsonl").read_bytes()
    renamed = Path(shutil.copytree(swept, tmp_path / "sw2"))
    rows = [json.loads(line) for line in (renamed / "results.jsonl").read_text().splitlines()]
    (renamed / "results.jsonl").write_text(json.dumps(dict(rows[0], name=rows[0]["name"] + "-copy")) + "\n")
    done = _collect_results(renamed, "--dest", tmp_path / "res")
    assert done.returncode == 2, done.stderr
    assert f"would hold one arm twice: a row of {renamed} ('a-dense_tied-s0-copy') and a row of " \
           f"{tmp_path / 'res' / 'tiny'} ('a-dense_tied-s0') are both variant" in one_error(done.stderr), done.stderr
    assert (tmp_path / "res" / "tiny" / "results.jsonl").read_bytes() == before
