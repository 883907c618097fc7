"""`leviathan sweep --reuse SRC` reuses only rows of the sweep's own kind: evaluated rows for a sweep that evaluates,
--skip-eval rows for one that skips evaluation (issue 30 round 23, T58).

A --reuse folder holding a --skip-eval row beside an evaluated row had both copied into the new --out's
results.jsonl ("taken as written"); the sweep then refused, naming that new file ("sr/results.jsonl holds rows
trained with --skip-eval ... delete those rows from sr/results.jsonl"), not the source, and left it holding both. A
row of the other kind now differs from its run (``reuse._kind_difference``): it is not reused, the sweep says so and
trains that run.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli  # noqa: E402
from test_collect_rows_a_report_refuses import shards  # noqa: E402,F401  (the fixture: a --skip-eval and an
# evaluated shard of grid 'tiny')
from test_row_identity import grid_file  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.mark.parametrize("skip_eval", [False, True])
def test_a_reuse_source_mixing_both_kinds_gives_only_rows_of_the_sweeps_kind(shards, data, tmp_path, skip_eval):
    sh1, sh2 = shards  # a-dense_tied-s0 with --skip-eval, a-dense_untied-s0 evaluated
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copyfile(sh2 / "grid.json", mixed / "grid.json")
    (mixed / "results.jsonl").write_text((sh1 / "results.jsonl").read_text() + (sh2 / "results.jsonl").read_text())
    done = cli(["sweep", "--grid", grid_file(tmp_path, data), "--out", tmp_path / "sr", "--reuse", mixed,
                *(["--skip-eval"] if skip_eval else [])])
    assert done.returncode == 0, done.stderr
    reused, other = ("a-dense_tied-s0", "a-dense_untied-s0") if skip_eval else ("a-dense_untied-s0", "a-dense_tied-s0")
    said = ("it is evaluated, and this sweep skips evaluation (--skip-eval)" if skip_eval else
            "it holds no eval numbers (trained with --skip-eval), and this sweep evaluates its runs")
    assert f"{reused}: this grid's own row in {mixed}, taken as written" in done.stdout, done.stdout
    assert f"--reuse {mixed}: {other} not reused: its row {other} differs ({said}); it trains here" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "sr" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["name"] for r in rows) == ["a-dense_tied-s0", "a-dense_untied-s0"]
    assert all(bool(r.get("eval")) != skip_eval for r in rows), rows
