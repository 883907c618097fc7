"""A sweep's run folder that trained on other data than the grid's is refused, not evaluated as the grid's run
(issue 30 round 20, K139; ``experiments.machinery.drift``).

A finished run folder of a sweep of another corpus (the same grid name, run and settings), copied into a sweep
without its row, was "trained already, evaluating": the new row recorded the grid's data and fingerprint while its
checkpoint's state.json said another, and report, analyze and collect_results then took it without a word.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, tree_hashes, write_corpus  # noqa: E402
from test_row_identity import grid_file  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def test_a_run_folder_trained_on_another_corpus_is_refused(data, tmp_path):
    from leviathan.cli import main
    from leviathan.data.prepare import prepare

    other = tmp_path / "data2"
    prepare(str(write_corpus(tmp_path / "corpus2", seed=5)), other, tokenizer="bpe:300", val_fraction=0.2,
            progress=False, log=lambda msg: None)
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    assert main(["sweep", "--grid", str(grid_file(tmp_path / "one", data)), "--out", str(tmp_path / "sw")]) == 0
    assert main(["sweep", "--grid", str(grid_file(tmp_path / "two", other)), "--out", str(tmp_path / "sw2"),
                 "--only", "a-dense_tied-s0"]) == 0
    swc = tmp_path / "sw"  # its a-dense_tied-s0 swapped for the other corpus's, its row removed (K139)
    rows = (swc / "results.jsonl").read_text().splitlines()
    (swc / "results.jsonl").write_text("".join(r + "\n" for r in rows if json.loads(r)["name"] != "a-dense_tied-s0"))
    shutil.rmtree(swc / "runs" / "a-dense_tied-s0")
    shutil.copytree(tmp_path / "sw2" / "runs" / "a-dense_tied-s0", swc / "runs" / "a-dense_tied-s0")
    before = tree_hashes(swc)
    line = cli_error(["sweep", "--grid", tmp_path / "one" / "grid.yaml", "--out", swc])
    assert f"run folder {str(swc / 'runs' / 'a-dense_tied-s0')!r}" in line, line
    assert "the run folder trained on another" in line and "records data it did not train on" in line, line
    assert tree_hashes(swc) == before
