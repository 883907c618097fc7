"""Learning-rate schedule: linear warmup, then cosine decay to a floor (the paper's setup, docs/DESIGN.md §6).

The schedule is a pure function of the optimizer step, so it needs no state in a checkpoint: a
resumed run recomputes the same value from the step it resumes at.

    step:  0 .. warmup-1          lr * (step + 1) / warmup
           warmup .. total-1      min_lr + (lr - min_lr) * (1 + cos(pi * progress)) / 2,
                                  progress = (step - warmup) / max(1, total - 1 - warmup)

so the first step trains at lr / warmup (never at 0) and the last one at exactly ``min_lr``.
"""

from __future__ import annotations

import math


def lr_at(step: int, lr: float, warmup_steps: int, total_steps: int, min_lr: float) -> float:
    """Learning rate for 0-based optimizer step ``step`` of ``total_steps``. The counts are whole numbers >= 0: step -5
    gave a negative learning rate, -0.0004, without a word (issue 30 round 23, U462), as a negative warmup did."""
    from ..value_rules import check_whole

    for name, value in (("step", step), ("warmup_steps", warmup_steps), ("total_steps", total_steps)):
        check_whole("lr_at", name, value, 0, fix="steps count from 0 (schedule.warmup_steps, the run's max_steps)")
    if step < warmup_steps:
        return lr * (step + 1) / warmup_steps
    span = max(1, total_steps - 1 - warmup_steps)
    progress = min(1.0, (step - warmup_steps) / span)
    return min_lr + (lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))


def set_lr(optimizer, value: float) -> None:
    """Set every group's lr to ``value`` times its ``lr_mult`` (1 unless the group has one). ``value`` is a finite
    number >= 0: a NaN was set on every group without a word, and AdamW then wrote NaN into every weight at the next
    step (a learning rate of 0 is a schedule's legitimate floor)."""
    from ..value_rules import api_check, number_problem

    api_check("set_lr", "value", number_problem(value, above=None, shown="a finite number >= 0")
              or (f"must be a finite number >= 0, got {value!r}" if value < 0 else None),
              fix="pass the learning rate lr_at gives for the step")
    for group in optimizer.param_groups:
        group["lr"] = value * group.get("lr_mult", 1.0)
