"""append_result refuses a row evaluated otherwise than the rows already in the file (issue 30 round 20, M71): a row
of eval max_tokens 256 was appended beside rows of 512 without a word, and ``report`` then refused the whole file
("the rows of ... were evaluated differently"). Nothing is written; a row evaluated as the others still appends.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)

pytestmark = [pytest.mark.reliability]


def test_a_row_evaluated_otherwise_is_not_appended_and_the_report_still_reads_the_file(swept, tmp_path):
    from leviathan.experiments.machinery.results import append_result

    folder = Path(shutil.copytree(swept, tmp_path / "s71"))
    first, second = (swept / "results.jsonl").read_text().splitlines()[:2]
    (folder / "results.jsonl").write_text(first + "\n")
    before = (folder / "results.jsonl").read_bytes()
    row = json.loads(second)
    shown = row["evaluation"]["options"]["max_tokens"]
    row["evaluation"]["options"]["max_tokens"] = shown * 2  # a larger cap: a row scoring past its own is impossible
    with pytest.raises(UserError, match=rf"append_result: in .*, the row {row['name']!r} was evaluated otherwise "
                                        rf"than the rows there \(eval.max_tokens: {shown} in line 1, {shown * 2} in "
                                        rf"the row appended\); nothing was written"):
        append_result(folder / "results.jsonl", row)
    assert (folder / "results.jsonl").read_bytes() == before
    append_result(folder / "results.jsonl", json.loads(second))
    done = cli(["report", folder, "--out", tmp_path / "rp71"])
    assert done.returncode == 0, done.stderr
