"""The packaged verdict (src/leviathan/verdict.yaml) that ``leviathan demo`` quotes agrees with the committed
analysis it names, number for number (rounded as quoted), so updating one without the other fails here; and the
check itself finds a changed number in either kind of round (a sweep's paired rows, a fair-shot round's primary)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from leviathan.verdict import Comparison, Verdict, committed_verdict

REPO = Path(__file__).resolve().parents[2]


def test_the_packaged_verdict_matches_the_committed_analysis():
    v = committed_verdict()
    path = REPO / v.analysis
    if not path.is_file():
        pytest.skip(f"{v.analysis} is not in this tree (an installed package without the repository's results)")
    assert v.mismatches(json.loads(path.read_text())) == []
    assert (REPO / v.findings.split(" §")[0]).is_file()


def test_the_verdict_reads_as_lines():
    lines = committed_verdict().lines()
    assert lines[0].startswith("committed verdict (") and any("dense_untied" in line for line in lines)
    assert all("nats [95% interval" in line for line in lines if " - dense_" in line)


def _comparison(size, baseline, baseline_size, diffs):
    """An analysis comparison as the report writes it (only the keys the verdict reads)."""
    mean = sum(diffs) / len(diffs)
    return {"regime": "fair_shot", "size": size, "baseline_size": baseline_size, "model": "leviathan",
            "baseline": baseline, "seeds": list(range(len(diffs))), "curve": {"tokens": [0, 1024]},
            "eval": {"val": {"loss": {"mean": mean, "ci": [mean - 0.01, mean + 0.01], "verdict": "worse"},
                             "ppl_change": {"mean": 0.1}}}}


def _fair_shot_pair() -> tuple[Verdict, dict]:
    analysis = {"paired": [], "fair_shot": {
        "primary": _comparison("pick", "dense_untied", "ref", [0.05, 0.07]),
        "secondary": [_comparison("pick", "leviathan", "ref", [-0.04, -0.05])]}}
    v = Verdict(round="r", analysis="a.json", findings="F.md", regime="fair_shot", size="pick", model="leviathan",
                setting="s", tokens=1024, seeds=2, section="fair_shot", comparisons=[
                    Comparison("dense_untied", 0.06, [0.05, 0.07], 0.1, "worse"),
                    Comparison("leviathan", -0.045, [-0.055, -0.035], 0.1, "worse", label="the reference generator")])
    return v, analysis


def test_a_fair_shot_verdict_is_checked_against_the_primary_and_secondaries():
    v, analysis = _fair_shot_pair()
    assert v.mismatches(analysis) == []
    assert "leviathan - the reference generator: -0.045 nats" in "\n".join(v.lines())
    changed = copy.deepcopy(analysis)
    changed["fair_shot"]["primary"]["eval"]["val"]["loss"]["mean"] = 0.08
    assert v.mismatches(changed) == ["dense_untied: mean is 0.06 here and 0.08 in the analysis"]
    changed["fair_shot"]["secondary"] = []
    assert "leviathan: no such comparison of pick leviathan in the analysis" in v.mismatches(changed)


def test_a_seed_count_or_verdict_that_moved_on_is_a_mismatch():
    """A round whose third seed landed after verdict.yaml was written: the quote is stale, and says so."""
    v, analysis = _fair_shot_pair()
    analysis["fair_shot"]["primary"]["seeds"] = [0, 1, 2]
    analysis["fair_shot"]["primary"]["eval"]["val"]["loss"]["verdict"] = "not resolved"
    assert v.mismatches(analysis) == ["dense_untied: verdict is 'worse' here and 'not resolved' in the analysis",
                                      "dense_untied: seeds is 2 here and 3 in the analysis"]


def test_an_unknown_section_is_refused():
    v, analysis = _fair_shot_pair()
    v.section = "fairshot"
    with pytest.raises(ValueError, match="section 'fairshot' is not 'paired' or 'fair_shot'"):
        v.mismatches(analysis)


def test_an_unknown_section_is_refused_when_the_verdict_is_read():
    """A typo in verdict.yaml's section fails where the file is read (the demo), not only in the check."""
    with pytest.raises(ValueError, match="section 'fairshot' is not 'paired' or 'fair_shot'"):
        Verdict(round="r", analysis="a.json", findings="F.md", regime="fair_shot", size="pick", model="leviathan",
                setting="s", tokens=1024, seeds=2, section="fairshot")
