"""The API's writers stay out of folders that are not theirs (issue 30 round 18): ``Tokenizer.save`` and
``save_pretrained`` into (or inside) another verb's output (G47, G54-G59, G244-G249), ``append_result`` onto any file
(G120, G121, G127) or onto a results file hard-linked with another copy (F125), and the verbs that mark their folder
(report, sweep, train) among a user's own files (G133, G134, G157, G291)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, one_run_grid, tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _adopted():
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import adopt

    return adopt(LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                              num_attention_heads=2, num_key_value_heads=2)),
                 seed_dim=8, modes=2, knots=8, rank=4)


@pytest.fixture(scope="module")
def sweep(data, tmp_path_factory) -> Path:
    """A finished one-run sweep (``one_run_grid``)."""
    root = tmp_path_factory.mktemp("others-sweep")
    proc = cli(["sweep", "--grid", one_run_grid(data, root), "--out", root / "sw", "--skip-eval"])
    assert proc.returncode == 0, proc.stderr
    return root / "sw"


def _targets(data, run_copy, exported, sweep, tmp_path) -> dict[str, Path]:
    ex = Path(shutil.copytree(exported, tmp_path / "ex"))
    dd = Path(shutil.copytree(data, tmp_path / "dd"))
    sw = Path(shutil.copytree(sweep, tmp_path / "sw"))
    return {"step": run_copy / "checkpoints" / "step-00000004", "checkpoints": run_copy / "checkpoints",
            "tensorboard": run_copy / "tensorboard", "export/sub": ex / "sub", "data/sub": dd / "sub",
            "sweep/sub": sw / "report2", "sweep": sw, "export": ex, "data": dd}


def test_tokenizer_save_never_writes_into_another_verbs_output(data, run_copy, exported, sweep, tmp_path):
    """G47, G54-G59: a step folder's tokenizer was replaced (eval then refused the checkpoint), and tokenizer files
    were mixed into a run's checkpoints/ and tensorboard/, inside an export, a data folder and a sweep, no word."""
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.errors import UserError

    tok = load_tokenizer(str(data))
    for name, target in _targets(data, run_copy, exported, sweep, tmp_path).items():
        owner = target if name in ("sweep", "export", "data") else target.parent
        while not (owner / "leviathan_output.json").is_file():
            owner = owner.parent
        before = tree_hashes(owner)
        with pytest.raises(UserError, match="is the output of `leviathan (train|export|prepare|sweep)`"):
            tok.save(target)
        assert tree_hashes(owner) == before, name
    proc = cli(["eval", run_copy, "--max-tokens", "256"])
    assert proc.returncode == 0, proc.stderr  # the checkpoint is as it was
    tok.save(tmp_path / "mine")  # a folder of its own
    assert load_tokenizer(str(tmp_path / "mine")).vocab_size == tok.vocab_size


def test_save_pretrained_never_writes_into_an_output_or_over_a_users_config(data, finished_run, run_copy, exported,
                                                                            sweep, tmp_path):
    """G244-G249: an adopted model's ``save_pretrained`` and ``from_native(...).save_pretrained`` wrote over an
    export's files and a run's checkpoint weights (eval then refused them), mixed model files into a data and a sweep
    folder, and replaced a user's config.json, no word. Saving again into its own earlier save goes on."""
    from leviathan.checkpoint.read import load_model
    from leviathan.errors import UserError
    from leviathan.hf.export import from_native

    adopted, native = _adopted(), from_native(load_model(str(finished_run))[0])
    targets = _targets(data, run_copy, exported, sweep, tmp_path)
    for model in (adopted, native):
        for name in ("export", "data", "step", "sweep"):
            before = tree_hashes(targets[name])
            with pytest.raises(UserError, match="is the output of `leviathan (train|export|prepare|sweep)`"):
                model.save_pretrained(targets[name])
            assert tree_hashes(targets[name]) == before, name
    users = tmp_path / "u"
    users.mkdir()
    (users / "config.json").write_text('{"mine": 1}\n')
    with pytest.raises(UserError, match="save_pretrained would write over config.json"):
        adopted.save_pretrained(users)
    assert (users / "config.json").read_text() == '{"mine": 1}\n'
    adopted.save_pretrained(tmp_path / "ad")
    adopted.save_pretrained(tmp_path / "ad")  # its own earlier save
    native.save_pretrained(tmp_path / "nat")
    proc = cli(["eval", run_copy, "--max-tokens", "256"])
    assert proc.returncode == 0, proc.stderr  # the checkpoint is as it was


def test_append_result_appends_only_to_a_results_file(data, finished_run, sweep, tmp_path):
    """G120, G121, G127: a row appended to a user's notes, to a run's config.yaml, and into a data folder."""
    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import append_result, read_results

    row = read_results(sweep)[0]
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    dd = Path(shutil.copytree(data, tmp_path / "dd"))
    for path, shown in [(notes, "holds no results row"), (run / "config.yaml", "the output of `leviathan train`"),
                        (dd / "results.jsonl", "the output of `leviathan prepare`")]:
        before = path.read_bytes() if path.exists() else None
        with pytest.raises(UserError, match=shown):
            append_result(path, row)
        assert (path.read_bytes() if path.exists() else None) == before
    append_result(tmp_path / "mine.jsonl", row)  # a new file, then a results file
    append_result(tmp_path / "mine.jsonl", row)
    assert len((tmp_path / "mine.jsonl").read_text().splitlines()) == 2


def test_a_hard_linked_results_file_is_not_appended_to_in_its_other_copy(sweep, tmp_path):
    """F125: ``cp -al`` of a sweep, then a row appended to the copy's results.jsonl: the original had it too."""
    from leviathan.experiments.machinery.results import append_result, read_results

    original = Path(shutil.copytree(sweep, tmp_path / "orig"))
    copy = tmp_path / "copy"
    copy.mkdir()
    os.link(original / "results.jsonl", copy / "results.jsonl")
    before = (original / "results.jsonl").read_bytes()
    row = read_results(original)[0]
    append_result(copy / "results.jsonl", {**row.to_dict(), "name": "other-s0", "size": "other"})
    assert (original / "results.jsonl").read_bytes() == before
    assert len((copy / "results.jsonl").read_text().splitlines()) == 2


def test_a_results_file_that_is_a_symbolic_link_is_not_appended_to_in_its_target(sweep, tmp_path):
    """J245: ``cp -as`` of a sweep (its results.jsonl a symbolic link to the original's), then a row appended to the
    copy's results.jsonl: the row went into the original through the link, no word (the hard-linked case, F125, was
    unshared). The link is replaced by a file of the copy's own holding the rows it showed."""
    from leviathan.experiments.machinery.results import append_result, read_results

    original = Path(shutil.copytree(sweep, tmp_path / "orig"))
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "results.jsonl").symlink_to(original / "results.jsonl")
    before = (original / "results.jsonl").read_bytes()
    row = read_results(original)[0]
    append_result(copy / "results.jsonl", {**row.to_dict(), "name": "other-s0", "size": "other"})
    assert (original / "results.jsonl").read_bytes() == before
    assert not (copy / "results.jsonl").is_symlink()
    assert (copy / "results.jsonl").read_bytes().startswith(before)
    assert len((copy / "results.jsonl").read_text().splitlines()) == len(before.splitlines()) + 1


@pytest.mark.parametrize("verb", ["report", "sweep"])
def test_report_and_sweep_refuse_a_folder_of_a_users_files(data, sweep, tmp_path, verb):
    """G133, G134, G291: report and sweep wrote their files and marker among a user's corpus files, exit 0, and
    ``prepare`` then refused the corpus as their output."""
    corpus = Path(shutil.copytree(data.parent / "corpus", tmp_path / "corpus"))
    before = tree_hashes(corpus)
    argv = (["report", sweep, "--out", corpus, "--bootstrap", "10"] if verb == "report" else
            ["sweep", "--grid", one_run_grid(data, tmp_path), "--out", corpus, "--skip-eval"])
    line = cli_error(argv)
    assert f"`leviathan {verb}` would write its output among files it did not write in '{corpus}'" in line
    assert "a new or empty folder" in line
    assert tree_hashes(corpus) == before
    proc = cli(["prepare", corpus, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--val-fraction", "0.2",
                "--no-progress"])
    assert proc.returncode == 0, proc.stderr


def test_write_report_refuses_a_folder_of_a_users_files(data, sweep, tmp_path):
    """G133: the API's ``write_report`` likewise."""
    from leviathan.errors import UserError
    from leviathan.experiments.report import write_report

    corpus = Path(shutil.copytree(data.parent / "corpus", tmp_path / "corpus"))
    before = tree_hashes(corpus)
    with pytest.raises(UserError, match="would write its output among files it did not write"):
        write_report(str(sweep), str(corpus))
    assert tree_hashes(corpus) == before
    assert json.loads((sweep / "leviathan_output.json").read_text())["verb"] == "sweep"
