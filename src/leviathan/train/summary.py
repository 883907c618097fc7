"""``TrainSummary``: what ``train`` returns and writes to the run folder's summary.json.

    summary = train(cfg, "runs/tiny")
    summary.final_val_loss, summary.params.total, summary.stopped      # typed attributes
    summary.to_dict()                                                  # summary.json (and sweep_train.json)

``from_dict`` reads one back (keys an older file lacks are None); ``read(path)`` reads one from disk and checks
every number first (issue 30): one UserError naming the file and the field.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, fields
from typing import Any, Optional

from ..model.accounting import ParamCounts
from .. import json_text


@dataclass(frozen=True)
class TrainSummary:
    """A training run's result: progress, speed, final validation numbers, parameter counts, where things are.
    ``stopped``: the signal that stopped the run early (``"SIGTERM"``), else None; ``resumed_from``: the step this session
    resumed from (None from scratch); ``wall_time_s``, ``train_time_s`` and ``tokens_per_s`` cover this session's steps
    only (``tokens_per_s`` None when it trained none); ``compile_s``: the first compiled step."""

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
        """The summary.json form (parameter counts as ``ParamCounts.as_dict``, total included). A perplexity past
        exp's range (a finite loss >= 700) is null: strict JSON holds no infinity, and ``io.atomic_write_json``
        refuses one (issue 30 round 25, Y311); ``read`` takes null."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if isinstance(self.final_val_ppl, float) and not math.isfinite(self.final_val_ppl):
            out["final_val_ppl"] = None
        out["params"] = self.params.as_dict() if self.params is not None else None
        return out

    @classmethod
    def read(cls, path: str | os.PathLike) -> "TrainSummary":
        """The summary in ``path`` (summary.json, sweep_train.json), every field checked (see the docstring)."""
        from ..errors import UserError

        fix = "delete the file: the run is evaluated again from its checkpoint (train resumes a finished run at once)"
        try:
            raw = json_text.read_file(path, object_pairs_hook=json_text.no_repeats)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise UserError(f"{str(path)!r} is not readable JSON ({e}); {fix}") from None
        problem = _summary_problem(raw)
        if problem is not None:
            raise UserError(f"{str(path)!r}: {problem}; the file was damaged or edited by hand; {fix}")
        return cls.from_dict(raw)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "TrainSummary":
        """A summary.json / sweep_train.json read back; a missing key is None (the defaults above)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known}
        values["params"] = ParamCounts.from_dict(raw.get("params"))
        return cls(**values)


_COUNTS = ("steps", "tokens", "resumed_from")
_SECONDS = ("wall_time_s", "train_time_s", "tokens_per_s", "compile_s")
_LOSSES = ("final_val_loss", "final_val_ppl", "final_val_bpb")


def _summary_problem(raw: Any) -> str | None:
    """Why ``raw`` is not a summary's object (None: it is one)."""
    if not isinstance(raw, dict):
        return f"expected a JSON object, got {type(raw).__name__}"
    for key in ("steps", "tokens", "wall_time_s"):
        if key not in raw:
            return f"field {key!r} is missing"
    for key in _COUNTS:
        v = raw.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            return f"field {key!r} is {v!r}, expected an integer >= 0"
    for key in _SECONDS + _LOSSES:
        v = raw.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0):
            return f"field {key!r} is {v!r}, expected a finite number >= 0 or null"
    for key in ("run_dir", "metrics", "checkpoint", "stopped"):
        v = raw.get(key)
        if v is not None and not isinstance(v, str):
            return f"field {key!r} is {v!r}, expected text or null"
    params = raw.get("params")
    if params is not None and not (isinstance(params, dict) and all(
            isinstance(params.get(k), int) and not isinstance(params.get(k), bool) and params[k] >= 0
            for k in ("input", "body", "head", "total") if k in params)):
        return f"field 'params' is {str(params)[:60]!r}, expected counts >= 0 by group"
    return None
