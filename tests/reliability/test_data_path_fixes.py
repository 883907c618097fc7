"""``data.path`` that is not a prepared data folder: the fix offered is one that works (issue 30 round 20, K186,
K187)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _without_data(data: Path) -> list[str]:
    return [o for o in run_overrides(data) if not o.startswith("data.path=")]


def test_a_data_folders_token_shard_as_data_path_names_its_folder(data, tmp_path):
    """K186: data.path=DATA/train.bin said "`leviathan prepare DATA/train.bin --out DIR` makes one of a text file":
    tokenize a binary shard as text. It is a file of a prepared data folder: pass that folder."""
    line = cli_error(["train", *_without_data(data), f"data.path={data / 'train.bin'}", "--run-dir", tmp_path / "r"])
    assert f"is a file, not a folder; pass its folder ('{data}')" in line, line
    assert "makes one of a text file" not in line
    assert not (tmp_path / "r").exists()


def test_a_corpus_folder_as_data_path_is_prepared_into_a_new_folder(data, tmp_path):
    """K187: data.path=CORPUS (text files) said "prepare the data first or set model.vocab_size", and with
    model.vocab_size set, "prepare it with `leviathan prepare SOURCE --out CORPUS`", which prepare refuses (its output
    must be apart from its input)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("some text to train on\n")
    overrides = [o for o in _without_data(data) if not o.startswith("model.vocab_size=")]
    for extra in ([], ["model.vocab_size=300"]):
        line = cli_error(["train", *overrides, *extra, f"data.path={corpus}", "--run-dir", tmp_path / "r"])
        assert f"'{corpus}' is not a prepared data folder (no meta.json); if it holds the text to train on, prepare " \
               f"it into a new folder (`leviathan prepare {corpus} --out NEW_DIR`)" in line, line
        assert f"--out {corpus}`" not in line and "or set model.vocab_size" not in line
    assert not (tmp_path / "r").exists()
