"""The project's committed verdict (``verdict.yaml`` beside this file, shipped in the package), read typed.

    v = committed_verdict()
    v.lines()          # what ``leviathan demo`` prints beside its own measurement

One packaged file, so the demo says what the project found also from an installed wheel, and one commit updates
every place that quotes it as rounds finish; tests/unit/test_verdict.py checks its numbers against the analysis
file it names (``Verdict.mismatches``). Footgun: the numbers are rounded to 3 decimals as quoted; the analysis file
keeps the full ones.

Where the numbers live in the analysis file depends on the round: ``section: paired`` (a sweep round) takes the
paired rows of one (regime, size, model); ``section: fair_shot`` (a fair-shot round, results/o200k-fair/PLAN.md)
takes its ``primary`` (the pick against the control) and ``secondary`` comparisons, whose baselines may be of
another size (``baseline_size``) and may be the reference generator itself (``label`` names it in print).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import files

from .codec import decode

VERDICT_FILE = "verdict.yaml"
SECTIONS = ("paired", "fair_shot")


@dataclass
class Comparison:
    """leviathan - baseline: the mean paired difference of validation loss (nats) and its 95% interval."""

    baseline: str
    mean: float
    ci: list[float]
    ppl_change: float  # relative perplexity change
    verdict: str  # "worse", "better" or "not resolved"
    label: str | None = None  # how the demo names the baseline (default: the variant), e.g. "the reference generator"

    @property
    def name(self) -> str:
        return self.label or self.baseline


@dataclass
class Verdict:
    """What the decisive round found (the keys of verdict.yaml)."""

    round: str
    analysis: str  # the committed analysis file the numbers come from (a path in the repository)
    findings: str
    regime: str
    size: str
    model: str
    setting: str
    tokens: int
    seeds: int
    comparisons: list[Comparison] = field(default_factory=list)
    over_training: str = ""
    pending: str | None = None
    section: str = "paired"  # where in the analysis file: "paired" rows or the "fair_shot" primary and secondaries

    def __post_init__(self) -> None:
        if self.section not in SECTIONS:
            raise ValueError(f"verdict.yaml: section {self.section!r} is not 'paired' or 'fair_shot'")

    def lines(self) -> list[str]:
        """The verdict as the demo prints it: one line per comparison, then the course over training and what is
        pending."""
        head = (f"committed verdict ({self.round} round, {self.seeds} seeds, {self.tokens / 1e6:.1f}M tokens per "
                f"run; {self.setting}; {self.findings}):")
        rows = [f"  {self.model} - {c.name}: {c.mean:+.3f} nats [95% interval {c.ci[0]:+.3f}, {c.ci[1]:+.3f}], "
                f"perplexity {c.ppl_change:+.1%}: {c.verdict}" for c in self.comparisons]
        tail = [f"  over training: {self.over_training}"] if self.over_training else []
        return [head, *rows, *tail] + ([f"  pending: {self.pending}"] if self.pending else [])

    def analysis_rows(self, analysis: dict) -> dict[str, dict]:
        """The analysis file's comparisons this verdict quotes, by baseline variant: ``paired`` rows of this regime,
        size and model, or a fair-shot round's primary and secondaries whose model is this size's."""
        if self.section == "fair_shot":
            fs = analysis.get("fair_shot") or {}
            found = [c for c in [fs.get("primary"), *(fs.get("secondary") or [])] if c]
            return {c["baseline"]: c for c in found if (c["size"], c["model"]) == (self.size, self.model)}
        if self.section != "paired":
            raise ValueError(f"verdict.yaml: section {self.section!r} is not 'paired' or 'fair_shot'")
        return {c["baseline"]: c for c in analysis.get("paired", [])
                if (c["regime"], c["size"], c["model"]) == (self.regime, self.size, self.model)}

    def mismatches(self, analysis: dict) -> list[str]:
        """What in this verdict disagrees with ``analysis`` (the parsed analysis.json it names), rounded as quoted:
        each comparison's mean, interval, perplexity change, verdict and seed count, and the tokens per run. Empty
        when they agree."""
        rows, problems = self.analysis_rows(analysis), []
        if not self.comparisons:
            problems.append("no comparisons")
        for c in self.comparisons:
            row = rows.get(c.baseline)
            if row is None:
                problems.append(f"{c.baseline}: no such comparison of {self.size} {self.model} in the analysis")
                continue
            val = row["eval"]["val"]
            loss, quoted = val["loss"], {}
            quoted["mean"] = (c.mean, round(loss["mean"], 3))
            quoted["ci"] = (c.ci, [round(x, 3) for x in loss["ci"]] if loss["ci"] else None)
            quoted["ppl_change"] = (c.ppl_change, round(val["ppl_change"]["mean"], 3))
            quoted["verdict"] = (c.verdict, loss["verdict"])
            quoted["seeds"] = (self.seeds, len(row["seeds"]))
            quoted["tokens"] = (self.tokens, row["curve"]["tokens"][-1] if row.get("curve") else None)
            problems += [f"{c.baseline}: {key} is {mine!r} here and {theirs!r} in the analysis"
                         for key, (mine, theirs) in quoted.items() if mine != theirs]
        return problems


def committed_verdict() -> Verdict:
    """The packaged verdict.yaml as a ``Verdict``."""
    import yaml

    raw = yaml.safe_load(files(__package__).joinpath(VERDICT_FILE).read_text())
    return decode(Verdict, raw)
