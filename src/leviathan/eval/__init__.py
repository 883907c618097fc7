"""Evaluation: the stream scored (``stream``), loss, perplexity and bits per byte (``perplexity``) as an
``EvalResult`` (``result``), lm-eval (``harness``).

The names load their module on first use (``lazy``), so a reader of results rows imports ``eval.result``
without torch."""

from ..lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "evaluate": ".perplexity", "summarize": ".perplexity", "token_losses": ".perplexity",
    "EvalStream": ".stream", "run_seq_len": ".stream", "EvalResult": ".result"})

__all__ = ["evaluate", "summarize", "token_losses", "EvalStream", "run_seq_len", "EvalResult"]
