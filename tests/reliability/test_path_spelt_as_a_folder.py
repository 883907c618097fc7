"""A path whose spelling names a folder where a file is meant is refused in one line, naming the spelling (issue 30
round 27, R1-R4).

- R3, R4: an output FILE path whose last part is '..' (``analyze embeddings r1 --out ae/..``, ``gpu_check.py env
  --json gq/..``) with no folder ae: the verb made ae, computed, and the rename onto 'ae/..' failed with EBUSY, a
  traceback, leaving ae. ``empty_paths.refuse_folder_spelling`` (round 26's rule for a trailing '/') now refuses a
  last '.' or '..' too, for a ``Path`` as well, before anything is made; the atomic writers ask it as well.
- R1, R2: an existing FILE typed with a trailing '/' (``eval --text b1.txt/`` said "does not exist"; ``prepare
  --val-source c5.txt/``, ``prepare --tokenizer tok.json/``, ``sweep --grid g.yaml/``, ``train --config g.yaml/`` read
  the file without a word). ``empty_paths.refuse_file_typed_as_folder``, asked for every path option of every verb
  and script (``refuse_empty_path``), names the slash as the fault.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, one_error, script  # noqa: E402

from leviathan import io  # noqa: E402
from leviathan.empty_paths import refuse_folder_spelling  # noqa: E402
from leviathan.errors import UserError  # noqa: E402


def test_analyze_refuses_an_out_file_ending_in_dot_dot_before_making_anything(tmp_path):
    proc = cli(["analyze", "embeddings", "r1", "--out", "ae/.."], cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert "--out 'ae/..' ends in '..', which names a folder; give a file name, e.g. ae/../record.json" in line, line
    assert list(tmp_path.iterdir()) == []  # no folder ae left behind


def test_gpu_check_refuses_a_json_file_ending_in_dot_dot(tmp_path):
    proc = script("gpu_check.py", ["env", "--device", "cpu", "--json", "gq/.."], cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "--json 'gq/..' ends in '..', which names a folder" in one_error(proc.stderr)
    assert list(tmp_path.iterdir()) == []


def test_the_writers_refuse_a_last_dot_or_dot_dot_as_typed_or_as_a_path(tmp_path):
    for value in (tmp_path / "w" / "..", str(tmp_path / "w") + "/..", str(tmp_path / "w") + "/", Path(".")):
        with pytest.raises(UserError, match=r"atomic_write_text: path .* which names a folder; give a file name"):
            io.atomic_write_text(value, "x")
    assert list(tmp_path.iterdir()) == []
    for value in ("..", ".", "a/..", Path("a/.."), Path("..")):
        with pytest.raises(UserError, match=r"ends in '\.\.?', which names a folder; give a file name, e\.g\. "):
            refuse_folder_spelling(value, "--out", "record.json")
    for value in ("a/../x.json", Path("a/../x.json"), "x..", "a/.b"):  # a name, not a folder
        refuse_folder_spelling(value, "--out", "record.json")


@pytest.mark.parametrize("argv, option", [
    (["eval", "r1", "--text", "corpus/b1.txt/"], "--text 'corpus/b1.txt/'"),
    (["prepare", "corpus", "--out", "dx1", "--tokenizer", "bpe:300", "--val-source", "corpus/b1.txt/"],
     "--val-source 'corpus/b1.txt/'"),
    (["prepare", "corpus", "--out", "dx2", "--tokenizer", "g.yaml/"], "--tokenizer 'g.yaml/'"),
    (["sweep", "--grid", "g.yaml/", "--out", "sx1", "--list"], "--grid 'g.yaml/'"),
    (["train", "--config", "g.yaml/."], "--config 'g.yaml/.'"),
])
def test_verbs_refuse_an_input_file_typed_with_a_slash(tmp_path, argv, option):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "b1.txt").write_text("some text\n")
    (tmp_path / "g.yaml").write_text("name: g\n")
    proc = cli(argv, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert f"{option} ends in " in line and ", which names a folder, but " in line and "is a file; drop the" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "g.yaml"]  # nothing read into an output


def test_same_numbers_refuses_a_grid_file_typed_with_a_slash(tmp_path):
    (tmp_path / "g.yaml").write_text("name: g\n")
    proc = script("same_numbers.py", ["HEAD", "HEAD", "--grid", "g.yaml/", "--data-dir", "d", "--run", "a"],
                  cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "--grid 'g.yaml/' ends in '/', which names a folder, but 'g.yaml' is a file" in one_error(proc.stderr)


def test_the_input_rule_leaves_folders_and_paths_that_name_nothing(tmp_path):
    from leviathan.empty_paths import refuse_file_typed_as_folder

    (tmp_path / "f.txt").write_text("x")
    (tmp_path / "d").mkdir()
    for value in (f"{tmp_path}/f.txt/", f"{tmp_path}/f.txt//", f"{tmp_path}/f.txt/./"):
        with pytest.raises(UserError, match=r"which names a folder, but '.*f\.txt' is a file; drop the '/\.?/?'"):
            refuse_file_typed_as_folder(value, "--text")
    for value in (f"{tmp_path}/d/", f"{tmp_path}/new/", f"{tmp_path}/f.txt", "/", "./", Path(tmp_path / "f.txt")):
        refuse_file_typed_as_folder(value, "--text")
