"""A JSON file leviathan reads back that holds bytes which are not UTF-8 (issue 30 round 21, P476, P487, P489): a
meta.json or leviathan_tokenizer.json with one Latin-1 byte ended train, eval and ``load_tokenizer`` in Python's
``UnicodeDecodeError``. Every reader reads through ``json_text.read_file``, so such a file is refused as the broken
JSON it is: one line naming the file, exit 2, nothing written."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides  # noqa: E402

pytestmark = pytest.mark.reliability


def _with_latin1(data: Path, tmp_path: Path, name: str) -> Path:
    copy = Path(shutil.copytree(data, tmp_path / "data"))
    (copy / name).write_bytes(b'{"format": 1, "note": "caf\xe9"}')
    return copy


@pytest.mark.parametrize("name", ["meta.json", "leviathan_tokenizer.json"])
def test_training_on_a_folder_whose_json_is_not_utf8_is_one_line(data, tmp_path, name):
    copy = _with_latin1(data, tmp_path, name)
    line = cli_error(["train", *run_overrides(copy), "--run-dir", tmp_path / "run"])
    assert name in line and "not UTF-8 text (byte 0xe9 at offset 26)" in line, line
    assert not (tmp_path / "run").exists()


def test_evaluating_on_a_meta_json_not_utf8_is_one_line(data, finished_run, tmp_path):
    copy = _with_latin1(data, tmp_path, "meta.json")
    line = cli_error(["eval", finished_run, "--data", copy])
    assert "meta.json" in line and "not UTF-8 text" in line, line


def test_the_library_readers_raise_their_own_error(data, tmp_path):
    from leviathan.data.meta import read_meta
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.errors import UserError

    for name, read in (("meta.json", read_meta), ("leviathan_tokenizer.json", load_tokenizer)):
        copy = _with_latin1(data, tmp_path / name, name)
        with pytest.raises(UserError, match="not UTF-8 text"):
            read(copy)
