"""A results folder scripts/collect_results.py wrote (no marker: its grid.json holds the unigram_entropy collect adds)
refuses outputs of other verbs inside it and is not read as a corpus (issue 30 round 20, K148, K125), and takes its
report and embeddings records beside its collected files (round 21, N345, N346); given where a sweep's folder is
expected, its grid subfolder is named (round 21, P564)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, run_overrides, tree_hashes  # noqa: E402

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


@pytest.fixture(scope="module")
def tiny_sweep(data, tmp_path_factory) -> Path:
    """A finished, evaluated sweep of ``test_row_identity.grid_file``'s two tiny runs."""
    from test_row_identity import grid_file

    root = tmp_path_factory.mktemp("collected-sweep")
    proc = cli(["sweep", "--grid", grid_file(root, data), "--out", root / "sweep"])
    assert proc.returncode == 0, proc.stderr
    return root / "sweep"


def test_a_fresh_collect_takes_its_report_and_records_as_the_readme_says(tiny_sweep, tmp_path):
    """N345, N346 (round 21): README's `leviathan report results/cpu-bpe32k --out results/cpu-bpe32k` on a freshly
    collected folder was refused: "would write its output among files it did not write ... (grid.json,
    results.jsonl)". The files collect_results wrote (and the embeddings records beside them) are welcome; a user's
    own file there is still refused."""
    from test_row_identity import _collect_results

    assert _collect_results(tiny_sweep, "--dest", tmp_path / "res").returncode == 0
    grid = tmp_path / "res" / "tiny"
    done = cli(["analyze", "embeddings", "--sweep", tiny_sweep, "--dest", grid, "--probes", "2"])
    assert done.returncode == 0, done.stderr
    done = cli(["report", grid, "--out", grid, "--bootstrap", "5"])
    assert done.returncode == 0, done.stderr
    assert "(2 runs)" in (grid / "report.md").read_text()
    # the records remade beside the report (its marker was "the output of `leviathan report`" to them), then the
    # report again over its own files, and the sweep collected again
    done = cli(["analyze", "embeddings", "--sweep", tiny_sweep, "--dest", grid, "--probes", "2", "--redo"])
    assert done.returncode == 0 and "2 record(s) written" in done.stdout, done.stderr
    done = cli(["report", grid, "--out", grid, "--bootstrap", "5"])
    assert done.returncode == 0, done.stderr
    assert _collect_results(tiny_sweep, "--dest", tmp_path / "res").returncode == 0
    from leviathan.experiments.ablation import ABLATION_FILES
    from leviathan.ownership import check_claim

    check_claim(tmp_path / "res", "report --ablation", ABLATION_FILES, "x", alone=True)  # DEST of collected grids
    other = tmp_path / "other"
    assert _collect_results(tiny_sweep, "--dest", other).returncode == 0
    grid_json = json.loads((other / "tiny" / "grid.json").read_text())  # as collect stores it where the sweep's
    (other / "tiny" / "grid.json").write_text(json.dumps({**grid_json, "unigram_entropy": None}))  # data is not found
    (other / "tiny" / "notes.txt").write_text("mine\n")
    before = tree_hashes(other)
    line = cli_error(["report", other / "tiny", "--out", other / "tiny", "--bootstrap", "5"])
    assert "would write its output among files it did not write" in line and "(notes.txt)" in line, line
    line = cli_error(["sweep", "--grid", tiny_sweep.parent / "grid.yaml", "--out", other / "tiny"])
    assert f"'{other / 'tiny'}' is a results folder scripts/collect_results.py wrote" in line, line
    assert tree_hashes(other) == before
    (other / "tiny" / "notes.txt").unlink()
    done = cli(["report", other / "tiny", "--out", other / "tiny", "--bootstrap", "5"])
    assert done.returncode == 0, done.stderr
