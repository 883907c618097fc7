"""Evaluation: the stream scored (``stream``), loss, perplexity and bits per byte (``perplexity``), lm-eval (``harness``)."""

from .perplexity import evaluate, summarize, token_losses
from .stream import EvalStream, run_seq_len

__all__ = ["evaluate", "summarize", "token_losses", "EvalStream", "run_seq_len"]
