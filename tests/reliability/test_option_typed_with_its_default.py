"""An option typed with its default value is typed: a check of "was it given" compares with what was given, not with
the default (issue 30 round 25, X84: `eval --text FILE --split val` scored the text, while `--split train` beside
--text was refused "give one of the two")."""

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
