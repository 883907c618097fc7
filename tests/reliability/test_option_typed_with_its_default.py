"""An option typed with its default value is typed: a check of "was it given" compares with what was given, not with
the default (issue 30 round 25, X84: `eval --text FILE --split val` scored the text, while `--split train` beside
--text was refused "give one of the two"; prepare's --val-fraction beside --val-source, the same kind)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402


def test_eval_split_typed_with_its_default_beside_text_is_refused(finished_run, tmp_path):
    text = tmp_path / "b1.txt"
    text.write_text("some text to score\n" * 20)
    for split in ("val", "train"):
        line = cli_error(["eval", finished_run, "--text", text, "--split", split])
        assert "give one of the two" in line and "--split" in line, line


def test_prepare_val_fraction_typed_beside_val_source_is_refused(tmp_path):
    """The same kind in prepare: --val-fraction beside --val-source was taken and ignored (the help said so), also
    when typed with its default 0.01."""
    (tmp_path / "train.txt").write_text("one document\n")
    (tmp_path / "val.txt").write_text("another document\n")
    for fraction in ("0.01", "0.2"):
        line = cli_error(["prepare", tmp_path / "train.txt", "--val-source", tmp_path / "val.txt", "--val-fraction",
                          fraction, "--out", tmp_path / "d"])
        assert "give one of the two" in line and "--val-fraction" in line, line
    assert not (tmp_path / "d").exists()
