"""append_result respects the write lock of the folder it appends in (issue 30 round 20, M282): a row appended into
the results.jsonl of a running sweep (its ``OUT/.lock`` held) was written without a word, and one landing before the
sweep's own row would be taken as that run's. While a live process holds the lock, nothing is written and the holder
is named; the lock's own holder (the sweep's appends) and a folder no one holds still append.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from test_grid_json_notes import swept  # noqa: E402,F401  (the fixture: a real two-run sweep)
from test_one_writer import hold_lock, stop  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize("beside", [False, True], ids=["inside", "beside"])
def test_a_row_is_not_appended_into_a_folder_a_live_process_writes(swept, tmp_path, beside):
    from leviathan.experiments.machinery.results import append_result
    from leviathan.locking import folder_lock

    folder = Path(shutil.copytree(swept, tmp_path / "sw282"))
    first, second = (folder / "results.jsonl").read_text().splitlines()[:2]
    (folder / "results.jsonl").write_text(first + "\n")
    before = (folder / "results.jsonl").read_bytes()
    proc = hold_lock(folder, tmp_path / "held", beside)
    try:
        with pytest.raises(UserError, match=rf"append_result: process {proc.pid} .* is writing into .*sw282.* "
                                            r"nothing was written; wait for it to finish"):
            append_result(folder / "results.jsonl", json.loads(second))
    finally:
        stop(proc)
    assert (folder / "results.jsonl").read_bytes() == before
    with folder_lock(folder, "sweep"):  # the sweep's own append, under the lock it holds
        append_result(folder / "results.jsonl", json.loads(second))
    assert (folder / "results.jsonl").read_text().splitlines() == [first, second]
