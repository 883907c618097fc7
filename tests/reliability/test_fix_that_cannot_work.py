"""A refusal's fix must be one that works when followed: the fix named is not refused in turn, nor a step towards
another refusal (issue 30 round 25, X30: `bench_corpus_softmax.py CORPUS` on a folder of the user's texts said "run
`leviathan prepare SOURCE --out CORPUS`", which prepare refuses, as the output must be apart from the source)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, make_data, one_error, script  # noqa: E402

from leviathan.data.meta import read_meta  # noqa: E402
from leviathan.errors import UserError  # noqa: E402


def test_a_folder_of_texts_is_prepared_into_a_new_folder(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("the user's own text\n")
    proc = script("bench_corpus_softmax.py", [corpus, "--config", "tiny", "--repeats", "1"], cwd=tmp_path)
    line = one_error(proc.stderr)
    assert proc.returncode == 2 and f"`leviathan prepare {corpus} --out NEW_DIR`" in line, proc.stderr
    assert f"--out {corpus}`" not in line and (corpus / "a.txt").read_text() == "the user's own text\n"
    with pytest.raises(UserError, match="prepare it into a new folder"):
        read_meta(corpus)
    with pytest.raises(UserError, match="run `leviathan prepare SOURCE --out .*none` to create it"):
        read_meta(tmp_path / "none")  # a folder not there yet may be prepare's output itself


def test_a_resume_on_data_of_another_tokenizer_names_the_tokenizer_first(run_copy, tmp_path):
    """X94: the first refusal was "model.vocab_size=300 is smaller than the data's vocabulary (512); set
    model.vocab_size=512", whose fix led to a generator_base refusal, and only that one's to the real cause."""
    other = make_data(tmp_path / "other", vocab=512)
    line = cli_error(["train", "--resume", "auto", "--run-dir", run_copy, "max_steps=5", f"data.path={other}"])
    assert "cannot resume" in line and "was trained with tokenizer 'bpe:300'" in line, line
    assert "model.vocab_size" not in line, line
