"""A report rerun into its folder refuses a file the user edited since it wrote it (issue 30 round 29, W651).

``write_report`` into its earlier report folder whose report.md the user had edited replaced the edits without a
word, where ``export`` and ``bake_adopted`` refuse to overwrite a file whose sha256 changed since they wrote it
(round 28, U249). The report's marker now records each file's sha256 with the swap that puts the files in place
(``staged.staged_output``, shared with ``report --ablation``), and a rerun refuses a file changed since
(``ownership.refuse_edited``), naming it, before anything is staged. A plain rerun over its own unedited files still
replaces them (U690, U691, W649), and so does a rerun once the edited file is moved away.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, cli, one_error, tree_hashes  # noqa: E402

from leviathan.errors import UserError
from leviathan.experiments.report import write_report
from leviathan.ownership import MARKER

pytestmark = [pytest.mark.reliability]

SWEEP = REPO / "results" / "cpu"  # a committed sweep, read only


def test_a_rerun_refuses_a_report_md_the_user_edited(tmp_path):
    out = tmp_path / "rep"
    write_report(SWEEP, out, num_bootstrap=0)
    recorded = json.loads((out / MARKER).read_text())["sha256"]
    assert {"report.md", "analysis.json"} <= set(recorded)
    write_report(SWEEP, out, num_bootstrap=0)  # its own files, unedited: replaced as before
    report = out / "report.md"
    report.write_text(report.read_text() + "\nmy notes on the run\n")
    before = tree_hashes(out)
    with pytest.raises(UserError, match=rf"^'{out}' holds report\.md changed since `leviathan report` wrote it \(its "
                                        rf"sha256 is not the one its {MARKER} records\): rewriting the folder would "
                                        r"replace those edits; nothing was written; move the edited file out of the "
                                        r"folder"):
        write_report(SWEEP, out, num_bootstrap=0)
    assert tree_hashes(out) == before and report.read_text().endswith("my notes on the run\n")
    report.rename(tmp_path / "my-report.md")  # the fix the line gives
    write_report(SWEEP, out, num_bootstrap=0)
    assert "my notes" not in report.read_text()


def test_the_report_verb_refuses_it_in_one_line(tmp_path):
    out = tmp_path / "rep"
    assert cli(["report", str(SWEEP), "--out", str(out), "--bootstrap", "0"]).returncode == 0
    (out / "analysis.json").write_text("{}")
    done = cli(["report", str(SWEEP), "--out", str(out), "--bootstrap", "0"])
    assert done.returncode == 2, done.stderr
    assert one_error(done.stderr).startswith(f"error: '{out}' holds analysis.json changed since `leviathan report` "
                                             f"wrote it"), done.stderr
    assert (out / "analysis.json").read_text() == "{}"
