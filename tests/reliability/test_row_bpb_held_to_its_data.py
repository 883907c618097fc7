"""A results row's bits per byte held to its own loss and its data's bytes (issue 30 round 27, R56).

A results file with ``eval.val.bpb`` halved in both rows (one factor, so the rows agreed) was reported as written,
exit 0: the report's bpb columns were half the measured values. bpb is derived, never measured apart: the set's
summed nats (loss x tokens) / ln 2 / the bytes of the text scored, which for a split is meta.json's
``splits.NAME.bytes`` times the share of the split's tokens kept. ``summary_check.row_contradiction`` (behind report,
collect_results.py and merge_sweeps) now asks ``bpb_check.bpb_contradiction``, where the row's data folder is found
and proven the row's by its fingerprint; the refusal names the row, the field, the value and the figure it should be.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import copied_sweep  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_row_whose_bpb_is_not_its_loss_in_bits_per_byte_is_refused(one_run_sweep, data, tmp_path_factory, capsys,
                                                                      monkeypatch):
    from leviathan.cli import main
    from leviathan.experiments.machinery.results import read_results
    from leviathan.experiments.machinery.summary_check import row_contradiction

    monkeypatch.chdir(data.parent.parent)  # where the row's data.dir ('<folder>/data', as recorded) is found
    sweep = copied_sweep(one_run_sweep, tmp_path_factory, "r56")
    results = sweep / "results.jsonl"
    assert row_contradiction(read_results(sweep)[0], sweep) is None  # as the sweep wrote it: its own figure
    row = json.loads(results.read_text())
    bpb = row["eval"]["val"]["bpb"]
    row["eval"]["val"]["bpb"] = bpb * 0.5
    results.write_text(json.dumps(row) + "\n")
    capsys.readouterr()
    assert main(["report", str(sweep), "--out", str(sweep.parent / "rp")]) == 2
    err = capsys.readouterr().err
    assert f"has eval.val.bpb {bpb * 0.5!r}, not its loss in bits per byte" in err, err
    assert f"= {bpb:.6g}" in err and not (sweep.parent / "rp").exists(), err
