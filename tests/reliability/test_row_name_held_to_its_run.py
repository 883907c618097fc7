"""A results row whose name says another run than its own variant or seed is skipped and named (issue 30 round 27,
S571).

``read_results`` of a sweep whose two rows had their ``name`` fields swapped read 'a-leviathan-s0' as a dense_tied
row and 'a-dense_tied-s0' as a leviathan one, without a word: the row checker held seed and variant to the row's own
config (a row copied under another run's name, S565) but not the name. ``results._name_contradicts``, last in the
shared row checker behind report, collect_results.py and every reader, now skips a row whose name names another
embedding kind or another seed, with the readers' warning naming its line. A name that says neither (a hand-made one)
is left alone: the identity checks refuse what matters there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import copied_sweep  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _rows(results: Path) -> list[dict]:
    return [json.loads(line) for line in results.read_text().splitlines() if line.strip()]


def test_two_rows_with_their_names_swapped_are_skipped_and_named(two_run_sweep, tmp_path_factory):
    from leviathan.experiments.machinery.results import read_results

    sweep = copied_sweep(two_run_sweep, tmp_path_factory, "s571")
    results = sweep / "results.jsonl"
    rows = _rows(results)
    assert [r.name for r in read_results(sweep, report=lambda msg: None)] == [r["name"] for r in rows]
    assert rows[0]["variant"] != rows[1]["variant"]
    rows[0]["name"], rows[1]["name"] = rows[1]["name"], rows[0]["name"]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    said = []
    assert read_results(sweep, report=said.append) == []
    text = "\n".join(said)
    for row in rows:
        named = next(v for v in (r["variant"] for r in rows) if v != row["variant"])
        assert (f"has name '{row['name']}', which names variant '{named}', but its variant is '{row['variant']}'"
                in text), text


def test_a_row_named_for_another_seed_is_skipped_and_a_hand_made_name_is_kept(two_run_sweep, tmp_path_factory):
    from leviathan.experiments.machinery.results import read_results

    sweep = copied_sweep(two_run_sweep, tmp_path_factory, "s571b")
    results = sweep / "results.jsonl"
    rows = _rows(results)
    rows[0]["name"] = rows[0]["name"].replace("-s0", "-s3")
    rows[1]["name"] = "n249"  # says no variant and no seed: nothing to contradict
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    said = []
    assert [r.name for r in read_results(sweep, report=said.append)] == ["n249"]
    assert f"has name '{rows[0]['name']}', which names seed 3, but its seed is 0" in "\n".join(said), said
