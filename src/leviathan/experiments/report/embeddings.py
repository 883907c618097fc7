"""The report's "Input side at init and at the end" section, from the records of ``leviathan analyze embeddings``.

    section = embeddings_section(records)     # EmbeddingsSection: per arm the mean over its seeds; pairs by seed
    md_lines = render_embeddings(section)      # the Markdown of the section

``leviathan report DIR`` adds it when ``DIR/embeddings/*.json`` exists; without that folder the report has no
section and analysis.json no ``embeddings`` key. Per arm (the run name without its seed suffix) one table: per group
of ids, init -> final of RMS, shared share, effective rank and mean cosine, each the mean over the arm's seeds.
Per seed every pair of its arms: the neighbour agreement (``embeddings.compare_records``) over every probe and per
group. Footgun: records made with other options or on other data do not pair; the section lists such a pair with
the reason instead of failing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ...errors import UserError
from ...tables import arrow, markdown_table
from ..method.embeddings import EmbeddingPair, EmbeddingRecord, GroupStats, check_records, compare_records
from ..method.records import Record

STATS = ("rms", "shared_share", "effective_rank", "mean_cosine")


@dataclass
class MeanStats(Record):
    """The four statistics of one group, each the mean over the seeds where it is defined (None: nowhere)."""

    rms: float | None
    shared_share: float | None
    effective_rank: float | None
    mean_cosine: float | None


@dataclass
class GroupChange(Record):
    """One group of ids of an arm at init and at the end (means over its seeds)."""

    group: str
    num_ids: int
    min_count: int
    max_count: int
    init: MeanStats
    final: MeanStats


@dataclass
class ArmGeometry(Record):
    """An arm's input side: its runs and, per group, init -> final."""

    arm: str
    variant: str
    runs: list[str]
    seeds: list[int]
    steps: list[int]  # the step each run's "final" checkpoint is at
    groups: list[GroupChange]


@dataclass
class UnpairedRuns(Record):
    """Two runs of one seed whose records cannot be compared, and why."""

    run_a: str
    run_b: str
    reason: str


@dataclass
class EmbeddingsSection(Record):
    """The section's numbers: analysis.json's ``embeddings``."""

    num_records: int
    probes_per_group: int
    top_k: int
    num_candidates: int
    arms: list[ArmGeometry]
    pairs: list[EmbeddingPair]
    unpaired: list[UnpairedRuns]


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _mean_stats(stats: list[GroupStats]) -> MeanStats:
    return MeanStats(*(_mean([getattr(s, name) for s in stats]) for name in STATS))


def _arm_geometry(arm: str, records: list[EmbeddingRecord]) -> ArmGeometry:
    """Per group of the first record, the means over ``records`` (one arm's seeds)."""
    groups = []
    for g in records[0].final:
        init = [r.stats("init")[g.group] for r in records if g.group in r.stats("init")]
        final = [r.stats("final")[g.group] for r in records if g.group in r.stats("final")]
        groups.append(GroupChange(g.group, g.num_ids, g.min_count, g.max_count, _mean_stats(init), _mean_stats(final)))
    return ArmGeometry(arm, records[0].variant, [r.run for r in records], [r.seed for r in records],
                       [r.step for r in records], groups)


def embeddings_section(records: list[EmbeddingRecord]) -> EmbeddingsSection:
    """The section of ``records`` (at least one): arms by name, pairs of arms within each seed."""
    records = check_records("embeddings_section", "records", records)  # round 24, W630's kind
    by_arm: dict[str, list[EmbeddingRecord]] = {}
    for r in sorted(records, key=lambda r: (r.arm, r.seed)):
        by_arm.setdefault(r.arm, []).append(r)
    pairs, unpaired = [], []
    for seed in sorted({r.seed for r in records}):
        for a, b in itertools.combinations(sorted((r for r in records if r.seed == seed), key=lambda r: r.arm), 2):
            try:
                pairs.append(compare_records(a, b))
            except UserError as e:
                unpaired.append(UnpairedRuns(a.run, b.run, str(e)))
    first = records[0]
    return EmbeddingsSection(len(records), first.probes_per_group, first.top_k, first.num_candidates,
                             [_arm_geometry(arm, rs) for arm, rs in by_arm.items()], pairs, unpaired)


def render_embeddings(section: EmbeddingsSection) -> list[str]:
    """The section's Markdown lines."""
    md = ["## Input side at init and at the end", "",
          f"From `embeddings/` ({section.num_records} records of `leviathan analyze embeddings`): each run's input "
          "side as a V x D table (a generator baked with `bake()`), at init (rebuilt from the run's config and seed "
          "exactly as training builds it) and at its last checkpoint. Groups: the ids that occur in training, in "
          "the eval's training-frequency buckets (rarest first), then `unseen`, the ids that never occur (an untied "
          "table's rows there get no gradient); `seen` is the buckets together, `all` every id. Cells: init -> end, "
          "the mean over the arm's seeds. RMS: the mean over ids of each row's RMS; shared share: "
          "||mean e||^2 / mean ||e||^2 (1: every row the same); effective rank: exp of the entropy of the "
          "singular values of the uncentred rows, normalised to sum 1 (1 to D); mean cosine: the exact mean over "
          "every pair of ids.", ""]
    for arm in section.arms:
        seeds = ("seed " if len(arm.seeds) == 1 else "seeds ") + ", ".join(str(s) for s in arm.seeds)
        steps = ", ".join(f"{s:,}" for s in sorted(set(arm.steps)))
        md += [f"### {arm.arm} ({arm.variant}; {seeds}; final step {steps})", ""]
        md.append(markdown_table(["group", "ids", "train count", "RMS", "shared share", "effective rank",
                                  "mean cosine"],
                                 [[g.group, f"{g.num_ids:,}", f"{g.min_count:,}-{g.max_count:,}",
                                   arrow(g.init.rms, g.final.rms, ".4f"),
                                   arrow(g.init.shared_share, g.final.shared_share, ".4f"),
                                   arrow(g.init.effective_rank, g.final.effective_rank, ".2f"),
                                   arrow(g.init.mean_cosine, g.final.mean_cosine, "+.4f")] for g in arm.groups]))
        md.append("")
    if section.pairs or section.unpaired:
        k = section.top_k
        md += ["### Neighbour agreement between the arms of one seed", "",
               f"Probes: up to {section.probes_per_group} ids per bucket and of the unseen ids, at evenly spaced ranks "
               f"by training count; for each, its top {k} cosine neighbours among the {section.num_candidates:,} ids "
               f"that occur in training. Cells: the mean overlap |A & B| / {k} at init -> at the end (chance: about "
               f"{k / max(section.num_candidates - 1, 1):.4f}). Dense arms of one seed share their initial table, "
               f"so they agree fully at init.", ""]
    if section.pairs:
        names = [g.group for g in section.pairs[0].groups]
        md.append(markdown_table(["seed", "run A", "run B"] + [f"{n} probes" if n == "all" else n for n in names],
                                 [[p.seed_a, p.run_a, p.run_b] +
                                  [arrow(g.init, g.final, ".3f") for g in p.groups] for p in section.pairs]))
        md.append("")
    for u in section.unpaired:
        md += [f"_{u.run_a} and {u.run_b} not compared: {u.reason}_", ""]
    return md
