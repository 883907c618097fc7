"""``leviathan report SWEEPS --ablation``: every leviathan run against the dense-tied run of the same backbone,
over training.

    leviathan report runs/ablate-bpe8k runs/ablate-bpe32k runs/ablate-o200k --ablation --out results/ablations

Inputs are sweep folders (or copies holding ``results.jsonl`` and ``grid.json``): one grid per data set
(vocabulary), each with a dense_tied run per backbone and leviathan runs ("arms") that change one
factor (generator shape, head decay, input-side learning rate, width). An arm is paired with the
dense_tied run of its grid that has the same width, depth and seed: both saw the same tokens in the
same order (the seed fixes the data order), so their validation curves are compared point by point.

What the report shows, per arm:
- the gap over training, leviathan minus dense validation loss (nats; < 0 = leviathan better) at
  every validation point, and the gap's value at the end and at 1/4, 1/2, 3/4 of the run;
- the unigram plateau: the entropy of the training unigram distribution (from the data folder's
  train_freq.npy, else the ``unigram_entropy`` a copied grid.json holds), the loss a model reaches
  by predicting token frequencies alone. Points where the dense model is still above it are early
  optimisation speed, not capacity, and are marked;
- final loss, perplexity and bits per byte on every eval set; per training-frequency bucket the
  relative perplexity reduction (rare -> frequent);
- the gradient norm of leviathan's input side and of its head (medians over training, before
  clipping): how much signal the generator receives. (A tied table's gradient mixes its input and
  head uses, so the dense model has no separate input-side figure.)

Figures: ``gap_<factor>.png`` for each factor the grids name (``ablations:`` in a grid YAML maps a
factor to its sizes) and ``gap_vocabulary.png`` for a size present in several grids. One seed per
arm: these are directions; the seeded grid gives intervals.

Three parts, one job each, as ``report/``: ``analysis`` (arms, their pairs and every number: an
``AblationResult`` of typed records, whose ``as_dict()`` is ablations.json), ``figures`` (the gap PNGs),
``markdown`` (README.md).
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UserError
from ...io import atomic_write_json, atomic_write_text
from ...ownership import check_claim, mark
from ..machinery.results import json_safe
from .analysis import ARM, DENSE, AblationResult, Arm, ArmSummary, collect, load_sweep, pair_arms, summarize
from .figures import fig_gap
from .markdown import markdown

__all__ = ["ARM", "DENSE", "AblationResult", "Arm", "ArmSummary", "collect", "fig_gap", "load_sweep", "markdown",
           "pair_arms", "summarize", "write_ablation_report"]


def write_ablation_report(paths: list[str | Path], out: str | Path, command: str = "leviathan report --ablation") -> Path:
    """Write ``out/README.md`` (tables), ``out/ablations.json`` (every number) and ``out/gap_*.png``; a hand-written
    ``out/findings.md`` (one paragraph per finding) is kept and opens the README, so regenerating loses no prose."""
    out = Path(out)
    check_claim(out, "report --ablation", ABLATION_FILES, "choose another --out",
                legacy=lambda folder: (folder / "ablations.json").is_file() and (folder / "README.md").is_file())
    out.mkdir(parents=True, exist_ok=True)
    mark(out, "report --ablation", ABLATION_FILES)  # before the first file, so a stopped report can be rerun
    result = collect(paths)
    if not result.arms:
        raise UserError("no leviathan run with a dense_tied pair (same width, depth, seed) in these sweeps")
    figures = {}
    factors = result.factors or {"all arms": [s.label for s in result.arms]}
    for factor, labels in factors.items():
        name = "gap_" + "".join(c if c.isalnum() else "_" for c in factor).strip("_") + ".png"
        if fig_gap(result.arms, labels, factor, out / name):
            figures[factor] = name
    atomic_write_json(out / "ablations.json", json_safe(result))
    path = out / "README.md"
    findings = out / "findings.md"
    atomic_write_text(path, markdown(result, figures, command, findings.read_text() if findings.is_file() else None)
                      + "\n")
    mark(out, "report --ablation", ABLATION_FILES)
    return path


# What the ablation report writes into its --out (``ownership.check_claim``: never over a user's README.md).
ABLATION_FILES = ("README.md", "ablations.json", "gap_*.png")
