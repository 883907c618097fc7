"""``leviathan report SWEEPS --ablation``: every leviathan run against the dense-tied run of the same backbone,
over training.

    leviathan report runs/ablate-bpe8k runs/ablate-bpe32k runs/ablate-o200k --ablation --out results/ablations

Inputs are sweep folders (or copies holding ``results.jsonl`` and ``grid.json``): one grid per data set
(vocabulary), each with a dense_tied run per backbone and leviathan runs ("arms") that change one factor (generator
shape, head decay, input-side learning rate, width). An arm is paired with the dense_tied run of its grid with the
same width, depth and seed (same tokens in the same order), and their validation curves are compared point by point.

Per arm: the gap over training (leviathan minus dense validation loss; < 0 = leviathan better) and at 1/4, 1/2,
3/4 and the end; the unigram plateau (from the data folder's train_freq.npy, else a copied grid.json's
``unigram_entropy``), points where dense is still above it marked as early optimisation speed, not capacity; final
loss, perplexity and bits per byte per eval set and the perplexity reduction per frequency bucket; the median
gradient norms of leviathan's input side and head (a tied table has no separate input-side figure). Figures:
``gap_<factor>.png`` for each factor the grids name (``ablations:`` in a grid YAML) and ``gap_vocabulary.png`` for a
size present in several grids. One seed per arm: these are directions; the seeded grid gives intervals.

Three parts, as ``report/``: ``analysis`` (an ``AblationResult`` of typed records, whose ``as_dict()`` is
ablations.json), ``figures`` (the gap PNGs), ``markdown`` (README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...errors import UserError
from ...io import atomic_write_json, atomic_write_text
from ...ownership import CONTAINERS, check_claim, check_not_inside, mark
from ..machinery.results import json_safe
from ..staged import staged_output
from .analysis import ARM, DENSE, AblationResult, Arm, ArmSummary, collect, load_sweep, pair_arms, summarize
from .figures import fig_gap
from .markdown import markdown
from ...storage import api_write

__all__ = ["ARM", "DENSE", "AblationResult", "Arm", "ArmSummary", "collect", "fig_gap", "load_sweep", "markdown",
           "pair_arms", "summarize", "write_ablation_report"]


@api_write("write_ablation_report", "out")
def write_ablation_report(paths: list[str | Path], out: str | Path, command: str = "leviathan report --ablation") -> Path:
    """Write ``out/README.md`` (tables), ``out/ablations.json`` (every number) and ``out/gap_*.png``; a hand-written
    ``out/findings.md`` (one paragraph per finding) is kept and opens the README, so regenerating loses no prose."""
    out = Path(out)
    check_not_inside(out, "--out", ("train", "prepare", "export"), within=CONTAINERS,
                     verb="report --ablation")  # never inside another output (round 17: nor a report's, lm-eval's)
    check_claim(out, "report --ablation", ABLATION_FILES, "choose another --out",
                legacy=lambda folder: (folder / "ablations.json").is_file() and (folder / "README.md").is_file(),
                alone=True)  # not among a user's files (round 18, the kind of G133)
    result = collect(paths)  # read and checked before --out is claimed: a refusal leaves no folder behind
    if not result.arms:
        raise UserError("no leviathan run with a dense_tied pair (same width, depth, seed) in these sweeps")
    for line in result.left_out or []:  # also in the README (round 14, B358)
        print(f"note: {line}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    mark(out, "report --ablation", ABLATION_FILES)  # before the first file, so a stopped report can be rerun
    findings = out / "findings.md"
    with staged_output(out, "report --ablation", ABLATION_FILES, stale=("gap_*.png",)) as stage:  # B289, B322
        figures = {}
        factors = result.factors or {"all arms": [s.label for s in result.arms]}
        for factor, labels in factors.items():
            name = "gap_" + "".join(c if c.isalnum() else "_" for c in factor).strip("_") + ".png"
            if fig_gap(result.arms, labels, factor, stage / name):
                figures[factor] = name
        atomic_write_json(stage / "ablations.json", json_safe(result))
        atomic_write_text(stage / "README.md", markdown(result, figures, command, findings.read_text()
                                                        if findings.is_file() else None) + "\n")
    path = out / "README.md"
    return path


# What the ablation report writes into its --out (``ownership.check_claim``: never over a user's README.md).
ABLATION_FILES = ("README.md", "ablations.json", "gap_*.png")
