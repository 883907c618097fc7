"""The project's committed verdict (``verdict.yaml`` beside this file, shipped in the package), read typed.

    v = committed_verdict()
    v.lines()          # what ``leviathan demo`` prints beside its own measurement

One packaged file, so the demo says what the project found also from an installed wheel, and one commit updates
every place that quotes it as rounds finish; tests/unit/test_verdict.py checks its numbers against the analysis
file it names. Footgun: the numbers are rounded to 3 decimals as quoted; the analysis file keeps the full ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import files

from .codec import decode

VERDICT_FILE = "verdict.yaml"


@dataclass
class Comparison:
    """leviathan - baseline: the mean paired difference of validation loss (nats) and its 95% interval."""

    baseline: str
    mean: float
    ci: list[float]
    ppl_change: float  # relative perplexity change
    verdict: str  # "worse", "better" or "not resolved"


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

    def lines(self) -> list[str]:
        """The verdict as the demo prints it: one line per comparison, then the course over training and what is
        pending."""
        head = (f"committed verdict ({self.round} round, {self.seeds} seeds, {self.tokens / 1e6:.1f}M tokens per "
                f"run; {self.setting}; {self.findings}):")
        rows = [f"  {self.model} - {c.baseline}: {c.mean:+.3f} nats [95% interval {c.ci[0]:+.3f}, {c.ci[1]:+.3f}], "
                f"perplexity {c.ppl_change:+.1%}: {c.verdict}" for c in self.comparisons]
        tail = [f"  over training: {self.over_training}"] if self.over_training else []
        return [head, *rows, *tail] + ([f"  pending: {self.pending}"] if self.pending else [])


def committed_verdict() -> Verdict:
    """The packaged verdict.yaml as a ``Verdict``."""
    import yaml

    raw = yaml.safe_load(files(__package__).joinpath(VERDICT_FILE).read_text())
    return decode(Verdict, raw)
