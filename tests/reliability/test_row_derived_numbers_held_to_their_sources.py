"""A results row's derived numbers are held to what they derive from (issue 30 round 29, W283, W290, W291, W293).

``read_results`` took, without a word, a row whose frequency buckets' mass summed to 1.5 (W283), whose
eval.val.share_outside was 0.5 beside targets_outside null (W290), whose regime 'scaling' was not its regimes list's
['iso_body'] (W291: the regime decides what the report pairs), and whose curve.grad_norm_input_median was not the
median of its grad_norm_input list (W293). Each such row is now skipped and named, as fix28d's rules skip a row whose
fields were edited apart; the rows as the sweep wrote them still read whole and quietly.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import copied_sweep  # noqa: E402

from leviathan.experiments.machinery.results import read_results

pytestmark = [pytest.mark.reliability]


@pytest.fixture(scope="module")
def sweep(two_run_sweep, tmp_path_factory) -> Path:
    return copied_sweep(two_run_sweep, tmp_path_factory, "derived-numbers")


def _set_share(row: dict, share: float, outside: int | None) -> None:
    row["eval"]["val"].update(share_outside=share, targets_outside=outside)


EDITS = {
    "mass": (lambda row: row["buckets"]["val"]["buckets"].update(mass=[0.75, 0.75]),
             "has buckets.val.buckets.mass [0.75, 0.75] (sum 1.5), not shares of the training tokens"),
    "share without its count": (lambda row: _set_share(row, 0.5, None),
                                "has eval.val.share_outside 0.5 beside targets_outside null"),
    "count without its share": (lambda row: _set_share(row, None, 3),
                                "has eval.val.targets_outside 3 beside share_outside null"),
    "share not its count's": (lambda row: _set_share(row, 0.5, 3),
                              "has eval.val.share_outside 0.5, not its targets_outside 3 over tokens"),
    "regime": (lambda row: row.update(regime="scaling"),
               "has regime 'scaling', not the first of its regimes ['iso_body'] (the regime decides what the report "
               "pairs it with"),
    "median": (lambda row: row["curve"].update(grad_norm_input_median=99.0),
               "has curve.grad_norm_input_median 99.0, not the median of its curve.grad_norm_input"),
}


def test_the_rows_as_written_read_quietly(sweep):
    said: list[str] = []
    assert len(read_results(sweep, report=said.append)) == 2
    assert said == []


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_derived_number_edited_apart_skips_its_row(sweep, tmp_path, edit):
    change, words = EDITS[edit]
    rows = [json.loads(line) for line in (sweep / "results.jsonl").read_text().splitlines()]
    assert len(rows[0]["curve"]["grad_norm_input"]) >= 2 and rows[0]["buckets"]["val"]["buckets"]["mass"]
    change(rows[0])
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    said: list[str] = []
    assert [r.name for r in read_results(path, report=said.append)] == [rows[1]["name"]]
    assert len(said) == 1 and f"results.jsonl:1: line 1 {words}" in said[0] and "skipped" in said[0], said
