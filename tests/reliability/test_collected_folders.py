"""A results folder scripts/collect_results.py wrote (no marker: its grid.json holds the unigram_entropy collect adds)
refuses outputs of other verbs inside it and is not read as a corpus (issue 30 round 20, K148, K125); given where a
sweep's folder is expected, its grid subfolder is named (round 21, P564)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides, tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability]

COLLECTED = "a results folder scripts/collect_results.py wrote (its grid.json records the unigram_entropy"


def collected(root: Path) -> Path:
    """``root/res`` holding one grid's collected folder ``g1`` (grid.json with unigram_entropy, a results row)."""
    grid = root / "res" / "g1"
    grid.mkdir(parents=True)
    (grid / "grid.json").write_text(json.dumps({"name": "g1", "runs": [], "base_overrides": [], "eval_options": {},
                                                "unigram_entropy": 5.25}))
    (grid / "results.jsonl").write_text(json.dumps({"name": "a-leviathan-s0", "regime": "iso_body"}) + "\n")
    return grid


def test_export_and_train_refuse_a_folder_inside_a_collected_results_folder(finished_run, data, tmp_path):
    """K148: `export RUN RES/g1/e` and `train --run-dir RES/g1/r` were accepted, exit 0, while every verb's own output
    folder refuses outputs inside it."""
    grid = collected(tmp_path)
    before = tree_hashes(grid)
    line = cli_error(["export", finished_run, grid / "e"])
    assert f"lies inside '{grid}', {COLLECTED}" in line and "choose another out_dir outside it" in line, line
    line = cli_error(["train", *run_overrides(data), "--run-dir", grid / "r"])
    assert f"--run-dir '{grid / 'r'}' lies inside '{grid}', {COLLECTED}" in line, line
    assert tree_hashes(grid) == before and sorted(p.name for p in grid.iterdir()) == ["grid.json", "results.jsonl"]


def test_prepare_of_a_collected_results_folder_is_refused_before_a_tokenizer_is_trained(tmp_path):
    """K125: `prepare RES --tokenizer bpe:300` trained a BPE, then said its results.jsonl has "no 'text' field; pass
    --text-field NAME": the rows were taken for a corpus."""
    grid = collected(tmp_path)
    line = cli_error(["prepare", grid.parent, "--out", tmp_path / "pd", "--tokenizer", "bpe:300"])
    assert f"'{grid}' in the corpus folder '{grid.parent}' is {COLLECTED}" in line, line
    assert "--text-field" not in line
    line = cli_error(["prepare", grid, "--out", tmp_path / "pd", "--tokenizer", "bpe:300"])
    assert f"source '{grid}' is {COLLECTED}" in line, line
    assert not (tmp_path / "pd").exists()


def test_report_of_a_collected_dest_names_the_grid_subfolder_to_pass(tmp_path):
    """P564: `leviathan report RES` (the --dest of collect_results.py, rows in RES/g1) said "no result rows in 'res';
    pass a sweep output dir", true but not where the rows are; it now names RES/g1, as `sweep --reuse RES` does."""
    grid = collected(tmp_path)
    line = cli_error(["report", grid.parent, "--out", tmp_path / "rp"])
    assert (f"no result rows in '{grid.parent}', which holds no results.jsonl itself, but its subfolders do ({grid}: "
            f"the layout of scripts/collect_results.py's --dest, a folder per grid); pass '{grid}'") in line, line
    assert not (tmp_path / "rp").exists()
