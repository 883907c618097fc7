"""Validation loss, perplexity and bits per byte of a causal LM over a token stream (docs/DESIGN.md §7).

The stream is cut into consecutive, non-overlapping windows of ``seq_len`` inputs: window j reads
tokens ``[j T, j T + T)`` and predicts ``[j T + 1, j T + T]``, so every token after the first is
predicted exactly once, from a context of 0..T-1 earlier tokens of its window (the same context
lengths the model was trained with). A last, shorter window covers the remainder. N tokens give
N - 1 predictions.

- ``loss``: mean negative log-likelihood in nats per predicted token.
- ``ppl``: exp(loss).
- ``bpb``: bits per byte = total nats / ln 2 / ``num_bytes``, where ``num_bytes`` is the UTF-8 size
  of the text the tokens encode. It does not depend on the tokenizer, so models with different
  vocabularies compare on it. (The first token is not predicted; over any realistic stream that
  is noise.)

Logits are converted to fp32 before the softmax, whatever the model's compute dtype. Our ``CausalLM``
is scored a chunk of positions at a time (``leviathan.model.loss``): with a large vocabulary the full
(batch x positions x V) logits would dominate evaluation's time and memory.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def _token_nll(model: nn.Module, x: torch.Tensor, y: torch.Tensor, outside: str = "raise") -> torch.Tensor:
    """(B, T) nats per target. Our ``CausalLM`` scores chunks of positions without forming the (B T, V)
    logits (``CausalLM.token_nll``); any other model (a Hugging Face one) through its full logits."""
    if hasattr(model, "token_nll"):
        if getattr(model, "restricted", False):
            return model.token_nll(x, y, outside=outside).float()
        return model.token_nll(x, y).float()
    out = model(x)
    logits = out[0] if isinstance(out, tuple) else out.logits  # (B, T, V)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1),
                           reduction="none").view(y.shape)


@torch.no_grad()
def token_losses(model: nn.Module, tokens: np.ndarray, seq_len: int, batch_size: int,
                 dtype: torch.dtype | None = None, outside: str = "raise") -> np.ndarray:
    """Nats for each of the ``len(tokens) - 1`` predicted tokens, in stream order (float64).

    ``dtype`` (optional) runs the forward under torch.autocast with that dtype (bf16 on GPU).
    ``outside``: for a model with a restricted softmax (``CausalLM.restrict_output_``), a target it cannot
    predict raises (``"raise"``) or gets NaN (``"nan"``; drop those positions before averaging).
    """
    tokens = np.asarray(tokens)
    n = len(tokens) - 1
    if n < 1:
        raise ValueError(f"need at least 2 tokens to predict one, got {len(tokens)}")
    if seq_len < 1 or batch_size < 1:
        raise ValueError(f"seq_len and batch_size must be positive, got {seq_len} and {batch_size}")
    device = next(model.parameters()).device
    autocast = (torch.autocast(device.type, dtype=dtype) if dtype is not None and dtype != torch.float32
                else contextlib.nullcontext())
    was_training = model.training
    model.eval()
    out = np.empty(n, dtype=np.float64)
    num_full = n // seq_len
    # windows: (start, length); full ones batched, the remainder alone
    spans = [(j * seq_len, seq_len) for j in range(num_full)]
    if n - num_full * seq_len:
        spans.append((num_full * seq_len, n - num_full * seq_len))
    try:
        i = 0
        while i < len(spans):
            length = spans[i][1]
            group = [s for s in spans[i:i + batch_size] if s[1] == length]
            starts = [s for s, _ in group]
            chunk = np.stack([tokens[s:s + length + 1] for s in starts]).astype(np.int64)  # (B, T+1)
            ids = torch.from_numpy(chunk).to(device)
            with autocast:
                nll = _token_nll(model, ids[:, :-1], ids[:, 1:], outside)  # (B, T)
            nll = nll.double().cpu().numpy()
            for row, s in enumerate(starts):
                out[s:s + length] = nll[row]
            i += len(group)
    finally:
        model.train(was_training)
    return out


def summarize(total_nats: float, num_predicted: int, num_bytes: float | None = None) -> dict:
    """``{"loss", "ppl", "bpb", "tokens"}`` from summed nats: the one place these numbers are derived.

    ``loss`` = total / predictions (NaN without predictions), ``ppl`` = exp(loss) (inf beyond exp's
    range, and for a NaN loss), ``bpb`` = total / ln 2 / ``num_bytes`` (None when the byte count is
    unknown: None, 0 or NaN). ``tokens`` counts predictions, not stream tokens.
    """
    loss = total_nats / num_predicted if num_predicted else math.nan
    return {
        "loss": loss,
        "ppl": math.exp(loss) if loss < 700 else math.inf,
        "bpb": total_nats / math.log(2) / num_bytes if num_bytes and math.isfinite(num_bytes) else None,
        "tokens": int(num_predicted),
    }


def evaluate(model: nn.Module, tokens: np.ndarray, seq_len: int, batch_size: int, num_bytes: float | None = None,
             dtype: torch.dtype | None = None) -> dict:
    """``summarize`` of the stream's token losses: ``{"loss", "ppl", "bpb", "tokens"}``; ``bpb`` is None without
    ``num_bytes``. ``tokens`` counts predicted tokens (``len(tokens) - 1``); ``leviathan.eval.stream.EvalStream``
    gives a capped stream and its byte count.
    """
    nats = token_losses(model, tokens, seq_len, batch_size, dtype=dtype)
    return summarize(float(nats.sum()), len(nats), num_bytes)
