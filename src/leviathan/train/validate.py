"""The validator: when a training run scores its validation stream, and how (as torchtitan's ``Validator``).

    validator = Validator(cfg, amp_dtype)       # reads the first cfg.eval_tokens predictions of the val split
    if validator.due(step): last_eval = validator.run(model)   # EvalResult (eval/result.py): .loss, .ppl, .bpb

Cadence: every ``eval_interval`` optimizer steps and at the last step (``eval_interval: 0``: the last only). The
scoring is evaluation's own (``eval.perplexity.token_losses`` over an ``eval.stream.EvalStream``), so a run's
validation loss and ``leviathan eval`` of its checkpoint are the same number; evaluation never imports training.
Under torchrun the ranks split the stream's batches and sum their per-token losses (the number equals one
process's); under FSDP every rank runs the same number of forwards (``even``: each gathers parameters collectively).
"""

from __future__ import annotations

import torch

from ..eval.perplexity import summarize, token_losses
from ..eval.result import EvalResult
from ..eval.stream import EvalStream
from ..run_config import RunConfig
from . import distributed as D


class Validator:
    """The validation stream of a run and its schedule."""

    def __init__(self, cfg: RunConfig, amp_dtype: torch.dtype | None, info: D.DistInfo | None = None,
                 device: torch.device | None = None):
        self.stream = EvalStream.from_split(cfg.data.path, "val", cfg.eval_tokens)
        self.interval = cfg.eval_interval
        self.total_steps = cfg.total_steps
        self.seq_len = cfg.data.seq_len
        self.batch_size = cfg.eval_batch_size or cfg.micro_batch_size
        self.amp_dtype = amp_dtype
        self.info, self.device = info or D.DistInfo(), device or torch.device("cpu")
        self.even = cfg.parallel == "fsdp"

    def due(self, step: int) -> bool:
        """Whether optimizer step ``step`` (1-based, just taken) is followed by a validation."""
        return step == self.total_steps or bool(self.interval and step % self.interval == 0)

    def largest_rows(self) -> int:
        """Windows in the validation's largest forward: ``batch_size``, or fewer when the stream holds fewer (what an
        out-of-memory line names and halves)."""
        return min(self.batch_size, max(1, (len(self.stream.tokens) - 1) // self.seq_len))

    def run(self, model: torch.nn.Module) -> EvalResult:
        """The ``EvalResult`` of the validation stream (``model``: unwrapped, or FSDP's)."""
        nats = token_losses(model, self.stream.tokens, self.seq_len, self.batch_size, dtype=self.amp_dtype,
                            shard=(self.info.rank, self.info.world_size), even=self.even)  # (predictions,)
        nats = D.all_reduce_sum(torch.from_numpy(nats), self.info, self.device)
        return summarize(float(nats.sum()), len(nats), self.stream.num_bytes)
