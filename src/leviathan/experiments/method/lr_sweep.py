"""A learning-rate pre-sweep read from its rows: each arm's final loss per peak lr, and the lr a fixed rule picks.

    choices = pick_learning_rates(read_results("results/o200k/o200k-lr"))
    choices["leviathan"].lr, choices["leviathan"].edge     # 0.003, None  ("lower" / "upper" at an edge)
    print(render_lr_sweep(choices))                        # the Markdown table of the report

Every arm of a comparison gets its own tuned learning rate (results/o200k/PLAN.md): a reviewer's first question is
whether the baseline ran at its best lr. The rule, fixed before the runs: the lowest final validation loss wins;
within ``tolerance`` (0.01 nats) of it, the lowest lr wins (the safer choice for a 4x longer schedule); a run that
diverged loses to every finite one. ``edge`` says when the pick is the smallest or largest lr the arm tried (the
optimum may lie beyond; the plan extends the sweep one step there). A row's lr is its config's ``optim.lr``; rows
without a config are refused by name.

An arm is a variant at a body: the row's size without its lr part (``arm_key``). Sizes that are lrs alone
(``lr1e-3``, results/o200k/o200k-lr) give one arm per variant, keyed by the variant; sizes naming a body and an lr
(``d32L6-lr1e-3``, the width round's) one per body and variant, keyed ``d32L6:leviathan``: the ``SIZE:VARIANT`` key
of a grid's ``variant_run``, so that a pick applies to the main grid's runs of that size.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...errors import UserError
from .records import Record
from ..machinery.results import ResultRow, check_eval_set_held, check_typed_rows

TOLERANCE = 0.01  # nats: losses this close count as a tie, and the lower lr wins
LR_PART = re.compile(r"(?:^|-)lr[0-9][0-9a-z.+-]*$")  # the lr part that ends a pre-sweep size's name


def arm_body(size: str | None) -> str:
    """The body a pre-sweep size trains (``d32L6-lr1e-3`` -> ``d32L6``; ``lr1e-3`` -> ``""``: the grid's one body)."""
    return LR_PART.sub("", str(size or ""))


def arm_key(size: str | None, variant: str) -> str:
    """``BODY:VARIANT``, or the variant alone when the size names only an lr (see the module docstring)."""
    body = arm_body(size)
    return f"{body}:{variant}" if body else variant


@dataclass
class LrChoice(Record):
    """One arm of the pre-sweep: its final loss per lr (None: diverged), the lr picked and whether it is at an edge."""

    variant: str
    losses: dict[float, float | None] = field(default_factory=dict)  # lr -> final validation loss
    lr: float | None = None
    edge: str | None = None  # "lower" | "upper" when the pick is the smallest / largest lr tried
    body: str = ""  # the size the arm's main runs have ("" for a pre-sweep of one body)

    @property
    def arm(self) -> str:
        return f"{self.body}:{self.variant}" if self.body else self.variant

    def as_dict(self) -> dict:
        """What analysis.json and ``analyze lr --json`` hold: losses by lr (as text), the pick, the edge."""
        return {"losses": {f"{lr:g}": v for lr, v in self.losses.items()}, "lr": self.lr, "edge": self.edge}


def row_lr(row: ResultRow) -> float:
    """The peak learning rate a row trained with: its resolved config's ``optim.lr`` as written (``recorded``, not
    the typed ``run_config`` view, which refuses a partial config that still records its lr)."""
    lr = row.recorded("optim.lr")
    if lr is None:
        raise UserError(f"row {row.name!r} records no resolved config (optim.lr); rows written before provenance "
                        f"was recorded cannot enter an lr sweep")
    return float(lr)


def _check_lrs(losses) -> None:
    """UserError for a key of ``losses`` that is no learning rate (a finite number > 0): ``pick({-1e-3: 3.0, 3e-3:
    4.0})`` picked -0.001 without a word (issue 30 round 19, J288), a rate no run can train with."""
    from ...value_rules import api_check, number_problem

    api_check("lr_sweep.pick", "losses", None if isinstance(losses, dict) else f"expected a dict {{lr: loss}}, got "
              f"{type(losses).__name__}", "pass e.g. {1e-3: 3.1, 3e-3: 3.0}")
    wrong = next((p for p in (number_problem(lr, 0, "a finite number > 0") for lr in losses) if p), None)
    api_check("lr_sweep.pick", "losses", None if wrong is None else f"a learning rate (a key) {wrong}",
              "key each loss by the positive learning rate it was trained with, e.g. {1e-3: 3.1, 3e-3: 3.0}")


def pick(losses: dict[float, float | None], tolerance: float = TOLERANCE) -> float | None:
    """The rule: lowest finite loss; within ``tolerance`` of it, the lowest lr. None when every run diverged.
    ``tolerance`` is a loss difference >= 0: -1 left no lr within it and ended in min()'s "arg is an empty sequence"
    (issue 30 round 18, G220)."""
    import numbers

    from ...value_rules import api_check

    good = isinstance(tolerance, numbers.Real) and not isinstance(tolerance, bool) and math.isfinite(tolerance) \
        and tolerance >= 0
    api_check("lr_sweep.pick", "tolerance", None if good else f"must be a finite number >= 0 (a loss difference), "
              f"got {tolerance!r}", f"pass e.g. tolerance={TOLERANCE} (the default)")
    _check_lrs(losses)
    finite = {lr: v for lr, v in losses.items() if v is not None and math.isfinite(v)}
    if not finite:
        return None
    best = min(finite.values())
    return min(lr for lr, v in finite.items() if v <= best + tolerance + 1e-9)  # 1e-9: "within" is inclusive in decimal


def pick_learning_rates(rows: Iterable[ResultRow], eval_set: str = "val",
                        tolerance: float = TOLERANCE) -> dict[str, LrChoice]:
    """{arm: LrChoice} over every row (one seed per lr expected; a second row for the same lr is refused); the arm
    is ``arm_key(size, variant)``. The rows are held to ``read_results``' rules and must be evaluated alike, on
    ``eval_set`` (``results.check_typed_rows``): losses of rows evaluated at two seq_lens were compared, and a set no
    row holds made every arm "diverged", without a word (issue 30 round 23, as U415, U420)."""
    rows = check_typed_rows(rows, "pick_learning_rates", compared=True)
    check_eval_set_held("pick_learning_rates", rows, eval_set)
    choices: dict[str, LrChoice] = {}
    for row in rows:
        choice = choices.setdefault(arm_key(row.size, str(row.variant)),
                                    LrChoice(str(row.variant), body=arm_body(row.size)))
        lr = row_lr(row)
        if lr in choice.losses:
            raise UserError(f"two rows of {choice.arm} at lr {lr:g} (e.g. {row.name!r}); a pre-sweep has one "
                            f"run per arm and lr")
        loss = row.loss(eval_set)
        choice.losses[lr] = loss if loss is not None and math.isfinite(loss) else None
    for choice in choices.values():
        choice.losses = dict(sorted(choice.losses.items()))
        choice.lr = pick(choice.losses, tolerance)
        tried = list(choice.losses)
        if choice.lr is not None and len(tried) > 1:
            choice.edge = "lower" if choice.lr == tried[0] else "upper" if choice.lr == tried[-1] else None
    return choices


def missing_lrs(choice: LrChoice, lrs: Iterable[float]) -> list[float]:
    """The lrs of ``lrs`` (every lr the pre-sweep tried) that ``choice``'s arm has no row at. A row skipped as
    unreadable (NaN loss) left its arm picked from the other lr, shown like a complete pick (issue 30 round 15,
    B180): the table says "missing" and the pick "incomplete"."""
    return [lr for lr in lrs if lr not in choice.losses]


def incomplete_note(choices: dict[str, LrChoice]) -> str | None:
    """One warning line naming each arm picked from fewer lrs than the pre-sweep tried (None when none)."""
    lrs = sorted({lr for c in choices.values() for lr in c.losses})
    short = [(c.arm, gone) for c in choices.values() if (gone := missing_lrs(c, lrs))]
    if not short:
        return None
    shown = "; ".join(f"{arm}: no row at lr {', '.join(f'{lr:g}' for lr in gone)}" for arm, gone in short[:3])
    return (f"warning: the pre-sweep is incomplete ({shown}{' ...' if len(short) > 3 else ''}): those picks are "
            f"from the rows there are; train or repair the missing runs (the sweep's own command trains what has no "
            f"row) before using them")


def render_lr_sweep(choices: dict[str, LrChoice], eval_set: str = "val", tolerance: float = TOLERANCE) -> list[str]:
    """Markdown lines: one row per arm, one column per lr, the pick in bold, and the rule."""
    lrs = sorted({lr for c in choices.values() for lr in c.losses})
    head = "| arm | " + " | ".join(f"lr {lr:g}" for lr in lrs) + " | picked |"
    lines = [head, "|" + "---|" * (len(lrs) + 2)]
    for c in choices.values():
        cells = []
        for lr in lrs:
            if lr not in c.losses:
                cells.append("missing")
                continue
            v = c.losses[lr]
            text = "diverged" if v is None else f"{v:.4f}"
            cells.append(f"**{text}**" if lr == c.lr else text)
        picked = "-" if c.lr is None else f"{c.lr:g}" + (f" ({c.edge} edge of the lrs tried)" if c.edge else "")
        if (gone := missing_lrs(c, lrs)) and c.lr is not None:
            picked += f" (incomplete: no row at lr {', '.join(f'{lr:g}' for lr in gone)})"
        lines.append(f"| {c.arm} | " + " | ".join(cells) + f" | {picked} |")
    lines += ["", f"Final {eval_set} loss (nats) per peak lr. Rule (fixed in the plan): the lowest loss; within "
              f"{tolerance:g} nats of it, the lowest lr; "
              f"a diverged run loses to every finite one."]
    return lines


def lr_sweep_section(rows: list[ResultRow], source: str,
                     eval_set: str = "val") -> tuple[list[str], dict[str, LrChoice]]:
    """(Markdown lines of the report's pre-sweep section, each arm's choice: analysis.json's ``lr_sweep``)."""
    choices = pick_learning_rates(rows, eval_set)
    md = ["## Learning rates: the pre-sweep", "",
          f"Source: `{source}` ({len(rows)} runs). Each arm's main runs use the lr picked here.", ""]
    md += render_lr_sweep(choices, eval_set)
    return md + [""], choices
