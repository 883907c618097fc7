"""A results row's name is held to its size, variant and seed, as the sweep names runs (issue 30 round 27, S571).

``read_results`` of a sweep whose two rows had their ``name`` fields swapped read 'a-leviathan-s0' as a dense_tied
row and 'a-dense_tied-s0' as a leviathan one, without a word: the row checker held seed, variant and size to the
row's own config (a row copied under another run's name, S565) but not the name, which says all three. Now
``results._name_contradicts`` (the shared row checker behind report, collect_results.py and every reader) wants the
sweep's name, SIZE-VARIANT[-L<layers>][-F<ffn>]-s<SEED> (``grid._Runs.add``); such a row is skipped with the readers'
warning naming its line, like round 26's edited rows (P14).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import copied_sweep  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_two_rows_with_their_names_swapped_are_skipped_and_named(two_run_sweep, tmp_path_factory):
    from leviathan.experiments.machinery.results import read_results

    sweep = copied_sweep(two_run_sweep, tmp_path_factory, "s571")
    results = sweep / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    assert [r.name for r in read_results(sweep, report=lambda msg: None)] == [r["name"] for r in rows]
    rows[0]["name"], rows[1]["name"] = rows[1]["name"], rows[0]["name"]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    said = []
    assert read_results(sweep, report=said.append) == []
    text = "\n".join(said)
    assert (f"has name '{rows[0]['name']}', not the name the sweep gives size 'a', variant '{rows[0]['variant']}' "
            f"and seed 0 (a-{rows[0]['variant']}[-L<layers>][-F<ffn>]-s0; a row edited or copied under another run's "
            f"name)") in text, text
