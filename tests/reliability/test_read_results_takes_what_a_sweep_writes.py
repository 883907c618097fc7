"""``read_results`` takes only what a sweep writes (issue 30 round 28, U603, U677).

- U603: ``read_results('corpus')``, a folder of text files with no results.jsonl, returned [] without a word (as did
  an empty folder), as for a sweep folder before its first row. A folder with no results.jsonl is now refused naming
  what it lacks, unless something of a sweep is there (its marker or grid.json) or its subfolders hold rows (a
  collected --dest, which ``load_results`` names).
- U677: a row whose tokens_per_s is 0 for tokens trained in a positive time was taken while wall_time_s -1 is
  skipped: the sweep writes a measured speed or none (``sweep.make_row``), so the row is skipped and reported naming
  its line and the field.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import copied_sweep  # noqa: E402

from leviathan.errors import UserError
from leviathan.experiments.machinery.results import read_results

pytestmark = [pytest.mark.reliability]


def test_a_folder_without_results_and_nothing_of_a_sweep_is_refused(tmp_path):
    corpus, empty = tmp_path / "corpus", tmp_path / "empty"
    corpus.mkdir()
    empty.mkdir()
    (corpus / "a.txt").write_text("some text\n")
    for folder in (corpus, empty):
        with pytest.raises(UserError, match=rf"^results '{folder}' holds no results\.jsonl, and nothing of a sweep "
                                            r"\(no grid\.json, no sweep's leviathan_output\.json\); pass a sweep "
                                            r"output dir or its results\.jsonl$"):
            read_results(folder)
    before_rows = tmp_path / "before"
    before_rows.mkdir()
    (before_rows / "grid.json").write_text("{}")
    assert read_results(before_rows) == []  # a sweep that wrote no row yet: no rows, as before


def test_a_row_with_no_throughput_for_tokens_trained_is_skipped(one_run_sweep, tmp_path_factory):
    sweep = copied_sweep(one_run_sweep, tmp_path_factory, "zero-throughput")
    path = sweep / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0]["tokens"] > 0 and rows[0]["wall_time_s"] > 0
    rows[0]["tokens_per_s"] = 0.0
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    said: list[str] = []
    assert read_results(sweep, report=said.append) == rows[1:]
    assert any(f"results.jsonl:1: line 1 has tokens_per_s 0 for {rows[0]['tokens']} tokens trained in" in line
               for line in said), said
