"""The packaged verdict (src/leviathan/verdict.yaml) that ``leviathan demo`` quotes agrees with the committed
analysis it names, number for number (rounded as quoted), so updating one without the other fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leviathan.verdict import committed_verdict

REPO = Path(__file__).resolve().parents[2]


def test_the_packaged_verdict_matches_the_committed_analysis():
    v = committed_verdict()
    path = REPO / v.analysis
    if not path.is_file():
        pytest.skip(f"{v.analysis} is not in this tree (an installed package without the repository's results)")
    rows = {c["baseline"]: c for c in json.loads(path.read_text())["paired"]
            if (c["regime"], c["size"], c["model"]) == (v.regime, v.size, v.model)}
    assert v.comparisons and {c.baseline for c in v.comparisons} <= set(rows)
    for c in v.comparisons:
        row = rows[c.baseline]
        loss = row["eval"]["val"]["loss"]
        assert c.mean == round(loss["mean"], 3), c.baseline
        assert c.ci == [round(x, 3) for x in loss["ci"]], c.baseline
        assert c.ppl_change == round(row["eval"]["val"]["ppl_change"]["mean"], 3), c.baseline
        assert c.verdict == loss["verdict"] and len(row["seeds"]) == v.seeds
        assert row["curve"]["tokens"][-1] == v.tokens
    assert (REPO / v.findings.split(" §")[0]).is_file()


def test_the_verdict_reads_as_lines():
    lines = committed_verdict().lines()
    assert lines[0].startswith("committed verdict (") and any("dense_untied" in line for line in lines)
    assert all("nats [95% interval" in line for line in lines if " - dense_" in line)
