"""``TrainSummary``: what ``train`` returns and writes to the run folder's summary.json.

    summary = train(cfg, "runs/tiny")
    summary.final_val_loss, summary.params.total, summary.stopped      # typed attributes
    summary.to_dict()                                                  # summary.json (and sweep_train.json)

``from_dict`` reads a summary.json back (the sweep keeps one per run); keys an older file lacks are None.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional

from ..model.accounting import ParamCounts


@dataclass(frozen=True)
class TrainSummary:
    """A training run's result: progress, speed, final validation numbers, parameter counts, where things are.

    ``stopped`` names the signal that stopped the run early (``"SIGTERM"``), else None; ``tokens_per_s`` is None
    when this session trained no step (a finished run resumed); ``compile_s`` is the first compiled step.
    ``resumed_from``: the step of the checkpoint this session resumed (None for a run started from scratch);
    ``wall_time_s``, ``train_time_s`` and ``tokens_per_s`` cover this session's steps only."""

    run_dir: str
    steps: int
    tokens: int
    wall_time_s: float
    train_time_s: float = 0.0
    tokens_per_s: Optional[float] = None
    compile_s: Optional[float] = None
    final_val_loss: Optional[float] = None
    final_val_ppl: Optional[float] = None
    final_val_bpb: Optional[float] = None
    params: Optional[ParamCounts] = None
    metrics: Optional[str] = None
    checkpoint: Optional[str] = None
    stopped: Optional[str] = None
    resumed_from: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        """The summary.json form (parameter counts as ``ParamCounts.as_dict``, total included)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["params"] = self.params.as_dict() if self.params is not None else None
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "TrainSummary":
        """A summary.json / sweep_train.json read back; a missing key is None (the defaults above)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known}
        values["params"] = ParamCounts.from_dict(raw.get("params"))
        return cls(**values)
