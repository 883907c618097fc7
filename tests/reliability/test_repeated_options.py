"""An option given twice on the command line is refused naming it, exit 2, nothing done (issue 30 round 24, V130):
``leviathan report s1 --out ra --out rb`` wrote only rb and ``eval r1 --max-tokens 100 --max-tokens 200`` scored 200
tokens, without a word, where a key given twice in the overrides is refused. One rule, ``leviathan.once_options``,
applied where the verbs' parsers are built (``cli._start_verb``) and by each script on its own parser."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, one_error, script  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_verbs_option_given_twice_is_one_line_and_nothing_is_written(tmp_path):
    line = cli_error(["report", tmp_path, "--out", tmp_path / "ra", "--out", tmp_path / "rb"])
    assert "argument --out: given twice" in line and "give --out once" in line, line
    assert not (tmp_path / "ra").exists() and not (tmp_path / "rb").exists()


def test_both_values_are_named(tmp_path):
    line = cli_error(["params", "--preset", "cpu-tiny", "--json", "--preset", "cpu-small"])
    assert "argument --preset: given twice (--preset 'cpu-tiny', then --preset 'cpu-small')" in line, line


@pytest.mark.parametrize("name, argv", [
    ("bench_corpus_softmax.py", ["d", "--repeats", "1", "--repeats", "2"]),
    ("same_numbers.py", ["--grid", "g", "--run", "x", "--data-dir", "d", "--steps", "1", "--steps", "2", "A", "B"]),
    ("gpu_check.py", ["report", "--work", "w1", "--work", "w2"]),
    ("collect_results.py", ["s1", "--dest", "cW", "--dest", "cW2"]),
])
def test_a_scripts_option_given_twice_is_refused(tmp_path, name, argv):
    """The scripts' parsers take the same rule (gpu_check.py on its top parser, which covers its
    stages; collect_results.py)."""
    done = script(name, argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "given twice" in one_error(done.stderr)


def test_an_option_made_to_repeat_still_repeats(tmp_path):
    """same_numbers.py's --run is taken once per run: two are two runs, not a refusal (it goes on to the data)."""
    done = script("same_numbers.py", ["--grid", "g", "--run", "x", "--run", "y", "--data-dir", tmp_path / "nodata",
                                      "A", "B"], cwd=tmp_path)
    assert done.returncode == 2 and "nodata does not exist" in one_error(done.stderr), done.stderr
