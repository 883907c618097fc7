"""``leviathan bench``'s lists and its --cache-dir are refused as its sibling options are (issue 30 round 28: T12,
"silent").

``--only 'generator,'`` (an empty item), ``--only generator,generator`` (a section twice), ``--cache-dir`` a named
pipe or a user's file, and ``--cache-dir`` where no chosen section trains a BPE were all taken without a word, exit
0, while lm-eval's --tasks refuses an empty item, bench's --config a name given twice, and round 27 (R36) refused
--config and --decode-tokens that no chosen section uses. Each is now one line, exit 2, before any timing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402


@pytest.mark.parametrize("argv, says", [
    (["--only", "generator,"], "error: an empty item in --only 'generator,'; give comma-separated names"),
    (["--only", "train,,modes", "--config", "tiny"], "error: an empty item in --only 'train,,modes'"),
    (["--only", "train", "--config", "tiny,"], "error: an empty item in --config 'tiny,'"),
    (["--only", "generator,generator"], "error: --only names the section 'generator' twice; name each section once"),
], ids=["only-trailing", "only-between", "config-trailing", "only-twice"])
def test_a_list_with_an_empty_item_or_a_section_twice_is_refused(tmp_path, argv, says):
    line = cli_error(["bench", "--quick", *argv], cwd=tmp_path)
    assert line.startswith(says), line
    assert list(tmp_path.iterdir()) == []


def test_a_pipe_or_a_file_as_the_cache_folder_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo1")
    (tmp_path / "ufile").write_text("mine\n")
    line = cli_error(["bench", "--quick", "--only", "train", "--config", "tiny", "--cache-dir", "fifo1"], cwd=tmp_path)
    assert line.startswith("error: --cache-dir 'fifo1' is a named pipe (FIFO), not a folder; give a folder"), line
    line = cli_error(["bench", "--quick", "--only", "memory", "--cache-dir", "ufile"], cwd=tmp_path)
    assert line.startswith("error: --cache-dir 'ufile' is a file, not a folder; give a folder"), line
    line = cli_error(["bench", "--quick", "--only", "train", "--config", "tiny", "--cache-dir", "ufile/c"], cwd=tmp_path)
    assert line.startswith("error: --cache-dir 'ufile/c' cannot be made: 'ufile' is a file, not a folder"), line
    assert (tmp_path / "ufile").read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == ["fifo1",
                                                                                                            "ufile"]


@pytest.mark.parametrize("argv", [["--only", "generator"], ["--only", "memory,generator"],
                                  ["--only", "train", "--config", "paper"]], ids=["generator", "memory", "o200k"])
def test_a_cache_folder_no_chosen_section_uses_is_refused(tmp_path, argv):
    line = cli_error(["bench", "--quick", *argv, "--cache-dir", "bc"], cwd=tmp_path)
    assert line.startswith("error: --cache-dir 'bc' is not used by the section(s) "), line
    assert line.endswith("; drop --cache-dir"), line
    assert list(tmp_path.iterdir()) == []
