"""One collection at a time into a --dest (issue 30 round 18, F140): two ``collect_results.py`` at once into one
--dest each merged its rows with what was there before either wrote, and the one renamed last dropped the other's
rows, both exit 0. The script holds --dest's lock (beside it) from staging to the last rename."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "collect_results.py"


def _script(*argv) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1] / "src")}
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, argv)], capture_output=True, text=True, env=env,
                          timeout=120)


def test_a_second_collection_into_one_dest_is_refused_while_the_first_writes(tmp_path):
    from leviathan.locking import folder_lock

    sweep = tmp_path / "sw"
    sweep.mkdir()
    (sweep / "grid.json").write_text(json.dumps({"name": "g", "runs": []}))
    (sweep / "results.jsonl").write_text(json.dumps({"name": "r0", "loss": 1.0}) + "\n")
    dest = tmp_path / "results"
    with folder_lock(dest, "collect results", beside=True):  # another collection at work
        done = _script(sweep, "--dest", dest)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"cannot collect results into '{dest}'" in done.stderr and "is writing there" in done.stderr
    assert not dest.exists()
    done = _script(sweep, "--dest", dest)
    assert done.returncode == 0, done.stderr
    assert (dest / "g" / "results.jsonl").is_file() and sorted(os.listdir(tmp_path)) == ["results", "sw"]
