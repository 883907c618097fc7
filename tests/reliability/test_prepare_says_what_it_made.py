"""`leviathan prepare` accepts nothing the next verb ignores or refuses without a word (issue 30 round 24).

- V138: --text-field with a corpus of text files only (each read whole) had no effect, exit 0; it is refused naming
  the kinds of source it applies to; the API's ``prepare_eval_text(text_field=...)`` alike.
- V139: prepare's fix for a single-document corpus offered "--val-fraction 0 to train without validation", and the
  folder it then made was refused by train and sweep ("has no validation tokens"). The fix no longer offers it, and
  a folder prepared with --val-fraction 0 is named as one train and sweep refuse, with the way to train on it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, write_corpus  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_text_field_for_text_files_only_is_refused(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", num_docs=4, seed=6)
    line = cli_error(["prepare", corpus, "--out", tmp_path / "dq", "--tokenizer", "bpe:300", "--text-field", "body"])
    assert "--text-field 'body' names the field or column of JSON lines, parquet and hf: sources" in line, line
    assert "holds only text files" in line and "leave --text-field out" in line, line
    assert not (tmp_path / "dq").exists()


def test_a_text_field_for_json_lines_beside_a_text_validation_source_is_taken(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", num_docs=4, seed=6)
    lines = tmp_path / "train.jsonl"
    lines.write_text("".join(json.dumps({"body": (corpus / f"doc{i:03d}.txt").read_text()}) + "\n" for i in range(3)))
    proc = cli(["prepare", lines, "--out", tmp_path / "dj", "--tokenizer", "bpe:300", "--text-field", "body",
                "--val-source", corpus / "doc003.txt", "--no-progress"])
    assert proc.returncode == 0, proc.stderr


def test_a_single_document_is_not_offered_a_folder_train_refuses(tmp_path):
    corpus = write_corpus(tmp_path / "one", num_docs=1, seed=6)
    line = cli_error(["prepare", corpus, "--out", tmp_path / "d1", "--tokenizer", "bpe:300", "--no-progress"])
    assert "is a single document" in line and "--val-source FILE" in line, line
    assert "--val-fraction 0" not in line, line


def test_a_folder_without_validation_says_train_and_sweep_refuse_it(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", num_docs=4, seed=6)
    proc = cli(["prepare", corpus, "--out", tmp_path / "d0", "--tokenizer", "bpe:300", "--val-fraction", "0",
                "--no-progress"])
    assert proc.returncode == 0, proc.stderr
    assert "note: no validation split (--val-fraction 0): `leviathan train` and `leviathan sweep` refuse this " \
           "folder" in proc.stderr, proc.stderr
    assert "--val-fraction 0.01 or --val-source FILE" in proc.stderr, proc.stderr


def test_the_apis_evaluation_text_refuses_a_text_field_for_text_files_alike(data, tmp_path):
    from leviathan.data.prepare import prepare_eval_text
    from leviathan.errors import UserError

    text = tmp_path / "eval.txt"
    text.write_text("a held-out text to score.\n")
    with pytest.raises(UserError, match="--text-field 'body' names the field or column"):
        prepare_eval_text(text, data, text_field="body")
    assert len(prepare_eval_text(text, data)[0]) > 1
