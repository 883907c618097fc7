"""A run's data is the data it trained on (issue 30 round 15, A124, A123): every state.json records the data
folder's fingerprint. A data folder prepared again under the same name from a changed corpus was resumed onto with
the saved loader position (the number of windows equal), and ``eval RUN`` scored the other corpus as the run's
validation split, both exit 0 without a word. Now the resume is refused and eval without --data too, each naming
both fingerprints and the fix."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, run_overrides  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.fixture
def run_on_changed_data(data, tmp_path):
    """(run, its data folder): a 2-step run on a copy of the data, then that copy prepared again with the same
    tokenizer from the corpus with one word of one document changed."""
    own = tmp_path / "data"
    shutil.copytree(data, own)
    run = tmp_path / "run"
    assert cli(["train", *run_overrides(own, max_steps=2), "--run-dir", run, "--quiet"]).returncode == 0
    corpus = tmp_path / "corpus"
    shutil.copytree(data.parent / "corpus", corpus)
    doc = sorted(corpus.iterdir())[0]
    words = doc.read_text().split(" ")
    words[1] = "zebra" if words[1] != "zebra" else "yak"
    doc.write_text(" ".join(words))
    proc = cli(["prepare", corpus, "--out", own, "--tokenizer", data, "--val-fraction", "0.2", "--overwrite"])
    assert proc.returncode == 0, proc.stderr
    return run, own


def test_resume_onto_data_prepared_again_from_another_corpus_is_refused(run_on_changed_data):
    """A124."""
    run, own = run_on_changed_data
    line = cli_error(["train", *run_overrides(own, max_steps=4), "--run-dir", run, "--resume", "auto", "--quiet"])
    assert "cannot resume" in line and "the run trained on data of fingerprint" in line, line
    assert f"but {str(own)!r} now holds data of fingerprint" in line and "--run-dir NEW" in line, line
    assert [p.name for p in sorted((run / "checkpoints").iterdir())] == ["step-00000002"]


def test_eval_of_a_run_on_its_changed_data_folder_is_refused_unless_named(run_on_changed_data):
    """A123: without --data the run's own data path is taken as the run's data; named with --data it is scored."""
    run, own = run_on_changed_data
    line = cli_error(["eval", run, "--max-tokens", "256"])
    assert "the run trained on data of fingerprint" in line and f"--data {own}" in line, line
    proc = cli(["eval", run, "--data", own, "--max-tokens", "256"])
    assert proc.returncode == 0, proc.stderr


def test_a_data_fingerprint_of_the_wrong_type_is_refused_as_a_damaged_field(data, run_copy, tmp_path):
    """C189, C190 (round 16): state.json's data_fingerprint edited to an integer was taken as no fingerprint, so eval
    and a resume, even onto other data (another split of the same corpus), went on without a word, exit 0. Now the
    field is named as damaged in state.json, like run_id (C191), and nothing is written."""
    import json

    from reliability_support import tree_hashes

    state = run_copy / "checkpoints" / "step-00000004" / "state.json"
    saved = json.loads(state.read_text())
    assert isinstance(saved["data_fingerprint"], str)  # the fixture run records one
    state.write_text(json.dumps({**saved, "data_fingerprint": 12345}))
    before = tree_hashes(run_copy)
    line = cli_error(["eval", run_copy, "--max-tokens", "256"])
    assert "state.json': field 'data_fingerprint' is 12345" in line and "restore the file" in line, line
    other = tmp_path / "other"  # another split of the same corpus: another token stream
    proc = cli(["prepare", data.parent / "corpus", "--out", other, "--tokenizer", data, "--val-fraction", "0.4"])
    assert proc.returncode == 0, proc.stderr
    line = cli_error(["train", *run_overrides(other, max_steps=6), "--run-dir", run_copy, "--resume", "auto",
                      "--quiet"])
    assert "field 'data_fingerprint' is 12345" in line and "the run trained on data" not in line, line
    assert tree_hashes(run_copy) == before


def test_an_edited_data_fingerprint_names_the_step_not_the_data(data, run_copy):
    """K8, K9 (round 20): step 4's data_fingerprint edited to another well-formed one blamed the untouched data
    folder ("now holds data of fingerprint ...; restore it") in train --resume and eval. Step 2 of the same run
    records the data's fingerprint as it is, so the edited state.json is named as damaged; nothing is written."""
    import json

    from reliability_support import tree_hashes

    state = run_copy / "checkpoints" / "step-00000004" / "state.json"
    state.write_text(json.dumps({**json.loads(state.read_text()), "data_fingerprint": "0" * 64}))
    before = tree_hashes(run_copy)
    for argv in (["eval", run_copy, "--max-tokens", "256"],
                 ["train", *run_overrides(data, max_steps=6), "--run-dir", run_copy, "--resume", "auto", "--quiet"]):
        line = cli_error(argv)
        assert "step-00000004/state.json': field 'data_fingerprint' is 000000000000" in line, line
        assert "step-00000002 records" in line and "now holds data" not in line, line
    assert tree_hashes(run_copy) == before
