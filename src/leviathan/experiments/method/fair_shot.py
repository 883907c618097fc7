"""The fair-shot round's rules (results/o200k-fair/PLAN.md, issue 29), applied to its rows: pure functions.

    fs = fair_shot(rows, committed)        # rows of the round; rows of the round it re-examines (results/o200k)
    fs.reproduction.bitwise                # did the rerun of the untied table's seed 0 give the committed numbers
    fs.pick, fs.control                    # the arms the plan's rules choose (None while their rows are missing)
    fs.primary.eval["val"].loss            # TInterval: pick - control over the paired seeds, and its verdict

An arm is a grid size (``d64L6-center``: the reference body with one generator option). The rules, fixed in the
plan before the runs:

- **Reproduction.** The committed round's rows stand in for this round's reference arms only if the rerun of
  ``<reference>-dense_untied-s0`` reproduces the committed row's every validation-curve point and final loss bit for
  bit; otherwise the reference arms are this round's reruns (rows of the same names here).
- **Screening** (seed 0): every generator arm's final validation loss against the reference generator's.
- **Pick.** The generator arm with the lowest seed-0 loss if it beats the reference by more than ``margin`` (0.02
  nats); otherwise the reference itself.
- **Combination.** One more arm when the two best generator arms both beat the reference by more than the margin;
  two lr multipliers (``-ilr`` arms) cannot combine: the best multiplier then pairs with the best other option that
  also beats it by the margin.
- **Control.** The plain untied table, unless another untied-table arm beats it by more than the margin.
- **Primary.** pick - control paired by seed, with its t interval.

Footgun: an arm's lr comes from its own rows (a pick whose pre-sweep chose another lr runs its seeds as another
size), so the pick named here is an arm of seed-0 screening; ``pick_size`` may name the size its seeds ran as.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .paired import PairedComparison, paired_of
from .records import Record
from ..machinery.results import ResultRow

MARGIN = 0.02  # nats an option must beat the reference (or an untied variant the plain table) by
GENERATOR, TABLE = "leviathan", "dense_untied"


@dataclass
class Reproduction(Record):
    """The rerun of one committed run at this round's code: are its numbers the committed ones, bit for bit?"""

    run: str
    committed_commit: str | None
    rerun_commit: str | None
    points: int  # curve points both have
    equal_points: int
    max_abs_diff: float | None  # over the shared curve points and the final loss
    committed_final: float | None
    rerun_final: float | None
    bitwise: bool


@dataclass
class ArmResult(Record):
    """One arm's seed-0 final validation loss and its difference from the reference arm of its kind."""

    arm: str  # the grid size
    variant: str
    run: str
    loss: float | None
    reference_loss: float | None
    diff: float | None  # loss - reference_loss (negative: better than the reference)
    beats_margin: bool


@dataclass
class FairShot(Record):
    reference: str  # the reference arm (size)
    margin: float
    reproduction: Reproduction | None
    reference_rows: str  # "committed" | "rerun" | "pending"
    screening: list[ArmResult] = field(default_factory=list)  # generator arms (the reference first)
    tables: list[ArmResult] = field(default_factory=list)  # untied-table arms (the reference first)
    pick: str | None = None  # None while screening rows are missing
    pick_reason: str = ""
    combination: list[str] | None = None  # the two arms to combine, or None
    combination_reason: str = ""
    control: str | None = None
    control_reason: str = ""
    primary: PairedComparison | None = None
    secondary: list[PairedComparison] = field(default_factory=list)


def reproduction(rerun: ResultRow | None, committed: ResultRow | None) -> Reproduction | None:
    """Compare a rerun row with the committed row of the same run: every shared curve point and the final loss."""
    if rerun is None or committed is None:
        return None
    a = dict(zip(rerun.curve.tokens, rerun.curve.val_loss)) if rerun.curve else {}
    b = dict(zip(committed.curve.tokens, committed.curve.val_loss)) if committed.curve else {}
    shared = sorted(set(a) & set(b))
    fa, fb = rerun.metric("val", "loss"), committed.metric("val", "loss")
    diffs = [abs(a[t] - b[t]) for t in shared] + ([abs(fa - fb)] if fa is not None and fb is not None else [])
    equal = sum(a[t] == b[t] for t in shared)
    bitwise = bool(shared) and equal == len(shared) == len(b) and fa is not None and fa == fb
    return Reproduction(run=rerun.name, committed_commit=_commit(committed), rerun_commit=_commit(rerun),
                        points=len(shared), equal_points=equal, max_abs_diff=max(diffs) if diffs else None,
                        committed_final=fb, rerun_final=fa, bitwise=bitwise)


def _commit(row: ResultRow) -> str | None:
    return row.code.commit if row.code else None


def _seed0(rows: list[ResultRow], variant: str) -> dict[str, ResultRow]:
    """{arm (size): its seed-0 row of ``variant``}."""
    return {str(r.size): r for r in rows if r.variant == variant and r.seed == 0}


def _arm_results(by_arm: dict[str, ResultRow], reference: str, margin: float) -> list[ArmResult]:
    ref = by_arm.get(reference)
    ref_loss = ref.metric("val", "loss") if ref is not None else None
    out = []
    for arm in [reference] + sorted(a for a in by_arm if a != reference):
        if arm not in by_arm:
            continue
        loss = by_arm[arm].metric("val", "loss")
        diff = loss - ref_loss if loss is not None and ref_loss is not None else None
        out.append(ArmResult(arm=arm, variant=by_arm[arm].variant, run=by_arm[arm].name, loss=loss,
                             reference_loss=ref_loss, diff=diff,
                             beats_margin=arm != reference and diff is not None and diff < -margin))
    return out


def _best(results: list[ArmResult], reference: str) -> list[ArmResult]:
    """The arms other than the reference, lowest loss first (diverged: last)."""
    finite = [r for r in results if r.arm != reference and r.loss is not None and math.isfinite(r.loss)]
    return sorted(finite, key=lambda r: r.loss)


def choose_pick(screening: list[ArmResult], reference: str, expected: list[str], margin: float):
    """(pick, reason, combination, its reason) by the plan's rules; pick None while ``expected`` arms are missing."""
    have = {r.arm for r in screening}
    missing = [a for a in [reference] + expected if a not in have]
    if missing:
        return None, f"screening incomplete: no seed-0 row yet for {', '.join(missing)}", None, ""
    best = _best(screening, reference)
    winners = [r for r in best if r.beats_margin]
    if not winners:
        top = f" (best: {best[0].arm}, {best[0].diff:+.4f})" if best else ""
        return reference, f"no option beats the reference by more than {margin:g} nats{top}", None, \
            "no combination: fewer than two options beat the reference by the margin"
    pick = winners[0]
    reason = f"lowest seed-0 loss, {pick.diff:+.4f} nats against the reference (margin {margin:g})"
    combo, combo_reason = None, "no combination: fewer than two options beat the reference by the margin"
    if len(winners) >= 2:
        first, second = winners[0], winners[1]
        if _is_lr(first) and _is_lr(second):
            others = [r for r in winners if not _is_lr(r)]
            if others:
                combo = [first.arm, others[0].arm]
                combo_reason = "the two best are both lr multipliers: the best multiplier with the best other option"
            else:
                combo_reason = "no combination: only lr multipliers beat the reference, and two cannot combine"
        else:
            combo = [first.arm, second.arm]
            combo_reason = "the two best options both beat the reference by the margin"
    return pick.arm, reason, combo, combo_reason


def _is_lr(r: ArmResult) -> bool:
    return "-ilr" in r.arm


def choose_control(tables: list[ArmResult], reference: str, expected: list[str], margin: float):
    """(control, reason): the plain untied table unless another untied arm beats it by more than the margin."""
    have = {r.arm for r in tables}
    missing = [a for a in [reference] + expected if a not in have]
    if missing:
        return None, f"untied arms incomplete: no seed-0 row yet for {', '.join(missing)}"
    best = [r for r in _best(tables, reference) if r.beats_margin]
    if not best:
        return reference, f"no untied variant beats the plain table by more than {margin:g} nats"
    return best[0].arm, f"beats the plain untied table by {-best[0].diff:.4f} nats (margin {margin:g})"


def fair_shot(rows: list[ResultRow], committed: list[ResultRow], reference: str = "d64L6",
              generator_arms: list[str] | None = None, table_arms: list[str] | None = None,
              margin: float = MARGIN, ci: float = 0.95, plateau: float | None = None) -> FairShot:
    """The round's state by the plan's rules (module docstring). ``generator_arms`` / ``table_arms``: the arms
    (sizes) the plan screens besides the reference, so that a missing row keeps a choice pending.

    Parameters: the round's rows and the committed rule's inputs, each read from a different file of the round.
    """
    committed_by_name = {r.name: r for r in committed}
    rerun = next((r for r in rows if r.name == f"{reference}-{TABLE}-s0"), None)
    rep = reproduction(rerun, committed_by_name.get(f"{reference}-{TABLE}-s0"))
    merged, source = _reference_rows(rows, committed, reference, rep)
    gens, tabs = _seed0(merged, GENERATOR), _seed0(merged, TABLE)
    fs = FairShot(reference=reference, margin=margin, reproduction=rep, reference_rows=source,
                  screening=_arm_results(gens, reference, margin), tables=_arm_results(tabs, reference, margin))
    fs.pick, fs.pick_reason, fs.combination, fs.combination_reason = choose_pick(
        fs.screening, reference, generator_arms or sorted(set(gens) - {reference}), margin)
    fs.control, fs.control_reason = choose_control(fs.tables, reference, table_arms or sorted(set(tabs) - {reference}),
                                                   margin)
    if fs.pick is not None and fs.control is not None:
        fs.primary = paired_of(merged, (fs.pick, GENERATOR), (fs.control, TABLE), "fair_shot", ci, plateau)
        baselines = [(reference, "dense_tied")] + ([(reference, GENERATOR)] if fs.pick != reference else [])
        held = {(str(r.size), r.variant) for r in merged}  # paired_of refuses an arm no row holds (round 20, M239)
        baselines = [b for b in baselines if b in held]
        fs.secondary = [c for c in (paired_of(merged, (fs.pick, GENERATOR), b, "fair_shot", ci, plateau)
                                    for b in baselines) if c is not None]
    return fs


def _reference_rows(rows: list[ResultRow], committed: list[ResultRow], reference: str,
                    rep: Reproduction | None) -> tuple[list[ResultRow], str]:
    """This round's rows plus, when the reproduction holds, the committed reference rows it has no rerun of."""
    if rep is None:
        return list(rows), "pending"
    if not rep.bitwise:
        return list(rows), "rerun"
    names = {r.name for r in rows}
    extra = [r for r in committed if str(r.size) == reference and r.name not in names]
    return list(rows) + extra, "committed"
