"""The validator: when a training run scores its validation stream, and how (as torchtitan's ``Validator``).

    validator = Validator(cfg, amp_dtype)       # reads the first cfg.eval_tokens predictions of the val split
    if validator.due(step): last_eval = validator.run(model)   # {"val_loss", "val_ppl", "val_bpb"}

Cadence: every ``eval_interval`` optimizer steps and at the last step (``eval_interval: 0`` means the last
step only). The scoring is evaluation's own (``eval.perplexity.evaluate`` over an ``eval.stream.EvalStream``),
so a run's validation loss and ``leviathan eval`` of its checkpoint are the same number. The arrow runs one way:
training uses evaluation's scorer; evaluation never imports training.
"""

from __future__ import annotations

import torch

from ..eval.perplexity import evaluate
from ..eval.stream import EvalStream
from ..run_config import RunConfig


class Validator:
    """The validation stream of a run and its schedule."""

    def __init__(self, cfg: RunConfig, amp_dtype: torch.dtype | None):
        self.stream = EvalStream.from_split(cfg.data.path, "val", cfg.eval_tokens)
        self.interval = cfg.eval_interval
        self.total_steps = cfg.total_steps
        self.seq_len = cfg.data.seq_len
        self.batch_size = cfg.eval_batch_size or cfg.micro_batch_size
        self.amp_dtype = amp_dtype

    def due(self, step: int) -> bool:
        """Whether optimizer step ``step`` (1-based, just taken) is followed by a validation."""
        return step == self.total_steps or bool(self.interval and step % self.interval == 0)

    def run(self, model: torch.nn.Module) -> dict:
        """``{"val_loss", "val_ppl", "val_bpb"}`` of the validation stream."""
        result = evaluate(model, self.stream.tokens, self.seq_len, self.batch_size, num_bytes=self.stream.num_bytes,
                          dtype=self.amp_dtype)
        return {"val_loss": result["loss"], "val_ppl": result["ppl"], "val_bpb": result["bpb"]}
