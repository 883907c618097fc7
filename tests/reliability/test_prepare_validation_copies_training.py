"""`leviathan prepare` makes no validation split that is a copy of its training split (issue 30 round 24, V52).

A corpus of two copies of one text: no document hashed into validation, so prepare moved the smallest-hash one there
and left its copy in train; val.bin was byte for byte train.bin, exit 0, and every validation loss then measured
recall of the training text. Copies share a split by the content hash; the fallback now refuses to split them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, write_corpus  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_two_copies_of_one_text_are_not_split_into_train_and_validation(tmp_path):
    one = write_corpus(tmp_path / "one", num_docs=1, seed=4)
    text = (one / "doc000.txt").read_text()
    corpus = tmp_path / "cdup2"
    corpus.mkdir()
    (corpus / "x.txt").write_text(text)
    (corpus / "y.txt").write_text(text)
    line = cli_error(["prepare", corpus, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--no-progress"])
    assert "is given 2 times" in line and "validation would measure recall of training text" in line, line
    assert "--val-source FILE" in line, line
    assert not (tmp_path / "d").exists()


def test_distinct_documents_still_fall_back_to_the_smallest_hash_one(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", num_docs=3, seed=4)
    proc = cli(["prepare", corpus, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--no-progress",
                "--val-fraction", "0.001"])
    assert proc.returncode == 0, proc.stderr
    assert "no document hashed into validation, moved the smallest-hash one" in proc.stderr, proc.stderr
    assert (tmp_path / "d" / "val.bin").read_bytes() != (tmp_path / "d" / "train.bin").read_bytes()
