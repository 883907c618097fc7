"""An option that names a FILE to write, typed with a trailing '/', is refused in one line (issue 30 round 26, P3,
P53).

``Path('bx/')`` is ``Path('bx')``: ``leviathan bench --json bx/``, ``analyze embeddings r1 --out ae/``,
``gpu_check.py env --json newdir/`` and ``bench_corpus_softmax.py ... --json bcs/`` each wrote a FILE named bx / ae /
newdir / bcs, exit 0, where the user typed a folder. The shared checkers (``result_json.check_target``,
``embedding_files.check_record_target``) now refuse the value as typed (``empty_paths.refuse_folder_spelling``), before
any work, with a file name to give instead; nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error, script  # noqa: E402

from leviathan.empty_paths import refuse_folder_spelling  # noqa: E402
from leviathan.errors import UserError  # noqa: E402


@pytest.mark.parametrize("argv, shown, example", [
    (["bench", "--quick", "--only", "generator", "--json", "bx/"], "--json 'bx/'", "bx/bench.json"),
    (["analyze", "embeddings", "r1", "--out", "ae/"], "--out 'ae/'", "ae/record.json"),
])
def test_verbs_refuse_a_file_option_typed_as_a_folder(tmp_path, argv, shown, example):
    proc = cli(argv, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert shown in line and "names a folder" in line and example in line, line
    assert list(tmp_path.iterdir()) == []  # no FILE named bx / ae


@pytest.mark.parametrize("name, argv, example", [
    ("gpu_check.py", ["env", "--device", "cpu", "--json", "newdir/"], "newdir/gpu_check.json"),
    ("bench_corpus_softmax.py", ["data", "--config", "tiny", "--json", "bcs/"], "bcs/result.json"),
])
def test_scripts_refuse_a_file_option_typed_as_a_folder(tmp_path, name, argv, example):
    (tmp_path / "data").mkdir()
    proc = script(name, argv, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert "ends in '/', which names a folder" in line and example in line, line
    assert [p.name for p in tmp_path.iterdir()] == ["data"]


def test_the_rule_names_what_was_typed():
    for value in ("bx/", "bx//", "bx/.", "a/b/"):
        with pytest.raises(UserError, match="which names a folder; give a file name"):
            refuse_folder_spelling(value, "--json", "bench.json")
    for value in ("bx", "bx/x.json", Path("bx"), None):  # a file's name, or a path object (no slash to read)
        refuse_folder_spelling(value, "--json", "bench.json")
