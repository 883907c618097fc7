"""A field of a results row that no reader knows is named, not copied and read without a word (issue 30 round 25,
X43: an "extra_key" added to a row was copied by collect_results.py into the results folder and taken by report and
analyze, exit 0 each). The rows are kept, as a later leviathan's fields must survive a copy."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_run_grid, script, swept_grid  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.fixture(scope="module")
def swept(data, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("unknown-row-fields")
    return swept_grid(one_run_grid(data, root), root)


def _with_extra_key(swept: Path, where: Path) -> Path:
    shutil.copytree(swept, where)
    rows = [json.loads(line) for line in (where / "results.jsonl").read_text().splitlines() if line.strip()]
    rows[0]["extra_key"] = {"x": 1}
    rows[0]["eval"]["val"]["bpb_typo"] = 1.0
    (where / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return where


def test_readers_name_a_rows_unknown_fields(swept, tmp_path):
    from leviathan.experiments.machinery.results import load_results, read_results

    sn3 = _with_extra_key(swept, tmp_path / "sn3")
    said: list[str] = []
    rows = load_results(sn3, report=said.append)
    assert len(rows) == 1 and rows[0].to_dict()["extra_key"] == {"x": 1}  # kept as written
    assert [n for n in said if "'extra_key'" in n and "'eval.val.bpb_typo'" in n and "line 1" in n], said
    said.clear()
    read_results(swept, report=said.append)
    assert not [n for n in said if "no reader of this version knows" in n], said  # the sweep's own rows: no note


def test_collect_results_names_the_field_it_copies(swept, tmp_path):
    sn3 = _with_extra_key(swept, tmp_path / "sn3")
    done = script("collect_results.py", [sn3, "--dest", tmp_path / "cn3"])
    assert done.returncode == 0, done.stderr
    assert "'extra_key'" in done.stderr and "no reader of this version knows" in done.stderr, done.stderr
