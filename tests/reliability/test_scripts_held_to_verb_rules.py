"""The repository's scripts are held to the verbs' rules (issue 30 round 24): every refusal is one line ``error: ...``
or argparse's usage error, exit 2, before any work, and nothing of the user's is written over.

scripts/bench_corpus_softmax.py: a user's myb.json written over by the benchmark JSON (V40); --repeats 0 / -3 a
KeyError traceback (V41); --batch 0 timed as "0 tok/s" (V42); a run folder or a missing folder as the data, the right
line raised as a traceback (V43, V124); o200k's head timed against a BPE-300 folder's ids and reported as a saving
(V44); --json under a regular file a NotADirectoryError traceback after the timing (V123).
scripts/same_numbers.py: a CalledProcessError traceback outside a git checkout (V32) and for a commit git does not
know, and --steps -1 not refused (V33).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, make_data, one_error, script  # noqa: E402

from leviathan.result_json import check_json_target  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _refused(name: str, argv: list, cwd: Path | None = None) -> str:
    done = script(name, argv, cwd)
    assert done.returncode == 2, done.stderr
    return one_error(done.stderr)


@pytest.fixture(scope="module")
def bench_script(script_module):
    """scripts/bench_corpus_softmax.py as a module: its refusals in this process, past torch's import (a real
    process per case took 12 s each on a loaded machine); one case of each kind runs as a real process too."""
    return script_module("bench_corpus_softmax.py")


def _bench_refused(bench_script, capsys, argv: list) -> str:
    """The one error line of the script's ``main(argv)`` in this process (exit status 2, its own or argparse's)."""
    try:
        status = bench_script.main([str(a) for a in argv])
    except SystemExit as e:
        status = e.code
    assert status == 2
    return one_error(capsys.readouterr().err)


@pytest.fixture(scope="module")
def data512(tmp_path_factory) -> Path:
    """Prepared data of the ``tiny`` benchmark configuration's tokenizer (bpe:512)."""
    return make_data(tmp_path_factory.mktemp("bench-corpus-data"), vocab=512)


def test_bench_corpus_softmax_refuses_a_users_file_at_json(data512, tmp_path):
    """V40, in a real process: the user's file is kept."""
    mine = tmp_path / "myb.json"
    mine.write_text('{"mine": true}')
    line = _refused("bench_corpus_softmax.py", [data512, "--config", "tiny", "--repeats", "1", "--batch", "2",
                                                "--json", mine])
    assert "--json" in line and "myb.json" in line and "is not an earlier" in line, line
    assert mine.read_text() == '{"mine": true}'


def test_bench_corpus_softmax_writes_and_then_rewrites_its_own_result(bench_script, data512, tmp_path, capsys):
    """What the rule lets through: a free --json path, and then its own earlier result."""
    ours = tmp_path / "ours.json"
    assert bench_script.main([str(data512), "--config", "tiny", "--repeats", "1", "--batch", "1", "--json",
                              str(ours)]) == 0
    assert "full / corpus step time" in capsys.readouterr().out
    check_json_target(ours, "--json", bench_script._is_result, "the script's", by="the script")


@pytest.mark.parametrize("option, value", [("--repeats", "0"), ("--repeats", "-3"), ("--batch", "0")])
def test_bench_corpus_softmax_refuses_counts_below_one(bench_script, data512, capsys, option, value):
    """V41, V42: at the command line, naming the option."""
    line = _bench_refused(bench_script, capsys, [data512, "--config", "tiny", option, value])
    assert f"argument {option}: must be a positive integer, got {value}" in line, line


def test_bench_corpus_softmax_says_a_data_folder_that_is_none_in_one_line(bench_script, tmp_path, capsys):
    """V43 (a run folder, in a real process), V124 (no folder): the product's line, without its traceback."""
    (tmp_path / "r1" / "checkpoints").mkdir(parents=True)
    assert "is a run folder" in _refused("bench_corpus_softmax.py", [tmp_path / "r1", "--config", "tiny"])
    line = _bench_refused(bench_script, capsys, [tmp_path / "nonexist", "--config", "tiny"])
    assert "does not exist" in line, line


def test_bench_corpus_softmax_refuses_a_batch_the_data_cannot_fill(bench_script, data512, capsys):
    """Found beside V42: a --batch past the training split was view()'s RuntimeError traceback."""
    line = _bench_refused(bench_script, capsys, [data512, "--config", "tiny", "--batch", "100000"])
    assert "fewer than the 2 batches of 100000 x 65" in line and "pass a smaller --batch (at most" in line, line


def test_bench_corpus_softmax_refuses_an_empty_path(bench_script, data512, capsys):
    """Found beside V40: --json "" wrote no JSON without a word, as the verbs refuse (round 15, B186)."""
    line = _bench_refused(bench_script, capsys, [data512, "--config", "tiny", "--json", ""])
    assert "--json is an empty path" in line, line


def test_bench_corpus_softmax_refuses_data_of_another_vocabulary(bench_script, data, data512, capsys):
    """V44: the configuration's tokenizer against the data's, both named, before any timing."""
    line = _bench_refused(bench_script, capsys, [data, "--config", "o200k-d64", "--repeats", "1", "--batch", "1"])
    assert "'bpe:300' (300 ids)" in line and "o200k_base (200,019 ids)" in line, line
    line = _bench_refused(bench_script, capsys, [data, "--config", "tiny"])
    assert "'bpe:300'" in line and "--config tiny is bpe:512" in line, line


def test_bench_corpus_softmax_json_under_a_file_or_read_only_is_one_line(bench_script, data512, tmp_path, tmpfs,
                                                                         capsys):
    """V123: a regular file on the way, and a read-only folder (the write's OSError), both before the timing."""
    (tmp_path / "afile").write_text("x")
    line = _bench_refused(bench_script, capsys, [data512, "--config", "tiny", "--json", tmp_path / "afile" / "x.json"])
    assert "is a file, not a folder" in line, line
    read_only = tmpfs("size=100k,ro")
    line = _bench_refused(bench_script, capsys, [data512, "--config", "tiny", "--json", read_only / "x.json"])
    assert "read-only" in line and "--json" in line, line


def test_same_numbers_outside_a_git_checkout_is_one_line(data, tmp_path):
    """V32: a copy of the script in a folder that is no checkout (its repository is its own checkout, wherever it is
    typed from)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "same_numbers.py", tmp_path / "scripts" / "same_numbers.py")
    env_argv = [sys.executable, str(tmp_path / "scripts" / "same_numbers.py"), "--grid", "g", "--run", "x",
                "--data-dir", str(data), "HEAD", "HEAD"]
    done = subprocess.run(env_argv, cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert done.returncode == 2, done.stderr
    line = one_error(done.stderr)
    assert "rev-parse --show-toplevel" in line and "git checkout" in line, line


def test_same_numbers_refuses_an_unknown_commit_before_any_worktree(data, tmp_path):
    """V33: one line naming the commit; no worktree was added."""
    before = subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout
    line = _refused("same_numbers.py", ["--grid", "g", "--run", "x", "--data-dir", data, "nonexistentcommit0", "HEAD"],
                    cwd=tmp_path)
    assert "commit 'nonexistentcommit0' is not a commit of" in line, line
    assert subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout == before


def test_same_numbers_refuses_an_empty_data_dir(tmp_path):
    """Found beside V33: --data-dir "" was made the current folder."""
    line = _refused("same_numbers.py", ["--grid", "g", "--run", "x", "--data-dir", "", "HEAD", "HEAD"], cwd=tmp_path)
    assert "--data-dir is an empty path" in line, line


@pytest.mark.parametrize("option, value", [("--steps", "-1"), ("--steps", "0")])
def test_same_numbers_refuses_counts_below_one(data, option, value):
    """V33: --steps -1 at the command line."""
    line = _refused("same_numbers.py", ["--grid", "g", "--run", "x", "--data-dir", data, option, value, "HEAD", "HEAD"])
    assert f"argument {option}: must be a positive integer, got {value}" in line, line
