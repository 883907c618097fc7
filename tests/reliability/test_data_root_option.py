"""``--data-root`` names a folder: a file or a missing path is refused, saying which (issue 30 round 20, K133, K217).

``sweep --data-root afile`` (or ``/nonexistent``) was accepted without a word and trained (a grid with no text eval
set never reads it), and ``lm-eval --data-root afile`` said "data folder ... does not exist" of a file that exists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error  # noqa: E402


@pytest.mark.parametrize("verb", [["sweep", "--grid", "cpu", "--out", "sw"], ["lm-eval", "run", "--tasks", "piqa"]])
@pytest.mark.parametrize("kind", ["file", "missing"])
def test_a_data_root_that_is_no_folder_is_refused_naming_what_it_is(tmp_path, verb, kind):
    given = tmp_path / "afile"
    if kind == "file":
        given.write_text("x\n")
    done = cli([*verb, "--data-root", given], cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert "--data-root" in line and ("is a file, not a folder" if kind == "file" else "does not exist") in line
    assert not (tmp_path / "sw").exists()


def test_a_task_data_root_from_the_environment_that_is_a_file_is_called_a_file(tmp_path, monkeypatch):
    from leviathan.errors import UserError
    from leviathan.eval.tasks import task_data_root

    (tmp_path / "afile").write_text("x\n")
    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path / "afile"))
    with pytest.raises(UserError, match=r"named by \$LEVIATHAN_DATA\) is a file, not a folder"):
        task_data_root(None)
