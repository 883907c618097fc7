"""The shared error lines name the option and the program of their caller (issue 30 round 24).

- V98: `collect_results.py SWEEP --dest LINK` (a link to nothing) ended "or choose another location (--run-dir /
  --out)", options the script does not have: the dead-link line skipped the per-verb option (``errors._verbs_fix``).
- V115: `collect_results.py SWEEP --dest <250-byte name>` called itself "`leviathan collect results`", a command that
  does not exist: ``locking.folder_lock`` takes the caller's name (``who``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, copied_sweep, one_error  # noqa: E402
from test_row_identity import _collect_results  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture(scope="module")
def swept(one_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(one_run_sweep, tmp_path_factory, "callers-option")


def test_a_dest_linked_to_nothing_names_dest(swept, tmp_path):
    os.symlink("nonexist_target", tmp_path / "dlink")
    done = _collect_results(swept, "--dest", tmp_path / "dlink")
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert "is a symbolic link to 'nonexist_target', which does not exist" in line, line
    assert line.endswith("or choose another location (--dest)") and "--run-dir" not in line, line


def test_a_verbs_dead_link_line_names_its_own_option(swept, tmp_path):
    os.symlink("nonexist_target", tmp_path / "rlink")
    line = cli_error(["report", swept, "--out", tmp_path / "rlink"])
    assert line.endswith("or choose another location (--out)") and "--run-dir" not in line, line


def test_a_dest_name_too_long_names_the_script(swept, tmp_path):
    done = _collect_results(swept, "--dest", tmp_path / ("x" * 250))
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert "the output folder's name is 250 bytes long" in line, line
    assert "`python scripts/collect_results.py`" in line and "leviathan collect" not in line, line
