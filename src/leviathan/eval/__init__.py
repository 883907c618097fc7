"""Evaluation: loss, perplexity and bits per byte (``perplexity``); more analyses live beside it."""

from .perplexity import evaluate, token_losses

__all__ = ["evaluate", "token_losses"]
