"""A folder given where a file is read or appended names the file to give (issue 30 round 29, W300, W275).

- W300: ``append_result(a sweep folder, row)`` said "a folder is in the way where a file is expected; move that
  folder away, or name a file path instead": the first fix moves the user's sweep away. ``read_results`` takes the
  folder, ``append_result`` only the file: the refusal now names the folder's results.jsonl, nothing written.
- W275: ``config.load_yaml('run1/')``, a run folder, said "config file 'run1' does not exist"; it exists, as a folder.
  The refusal says so and names the folder's config.yaml where it has one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, tree_hashes  # noqa: E402

from leviathan.errors import ConfigError, UserError

pytestmark = [pytest.mark.reliability]


def test_append_result_given_a_sweep_folder_names_its_results_file(tmp_path):
    import shutil

    from leviathan.experiments.machinery.results import append_result, read_results

    sweep = tmp_path / "sweep"  # a sweep folder: a committed sweep's results.jsonl and nothing else needed
    sweep.mkdir()
    shutil.copy(REPO / "results" / "cpu" / "results.jsonl", sweep / "results.jsonl")
    row = read_results(sweep)[0]
    before = tree_hashes(sweep)
    with pytest.raises(UserError, match=rf"^append_result: path '{sweep}' is a folder, not a results file "
                                        r"\(read_results takes a sweep folder, append_result the file itself\); "
                                        rf"nothing was written; pass the file to append to, e\.g\. "
                                        rf"'{sweep}/results\.jsonl'$"):
        append_result(sweep, row)
    assert tree_hashes(sweep) == before


def test_load_yaml_given_a_folder_says_it_is_one_and_names_its_config(tmp_path):
    from leviathan.config import load_yaml

    run, other = tmp_path / "run1", tmp_path / "other"
    run.mkdir(), other.mkdir()
    (run / "config.yaml").write_text("max_steps: 1\n")
    for typed in (f"{run}/", run):
        with pytest.raises(ConfigError, match=rf"^config file '{run}' is a folder, not a YAML file; pass the file in "
                                              rf"it, '{run}/config\.yaml'$"):
            load_yaml(typed)
    with pytest.raises(ConfigError, match=rf"^config file '{other}' is a folder, not a YAML file; pass the path of a "
                                          r"YAML file \(a run folder's config\.yaml, a grid file\)$"):
        load_yaml(other)
    assert load_yaml(run / "config.yaml") == {"max_steps": 1}
