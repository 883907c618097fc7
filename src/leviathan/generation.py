"""Sampling from a CausalLM: temperature, top-k, top-p (nucleus), with the native KV cache.

    ids = generate(model, prompt_ids, max_new_tokens=64, temperature=0.8, top_k=50, top_p=0.95, seed=0)

The prompt is run once (prefill) into a ``KVCache``; each new token is a single-position forward over the cached
keys and values (``use_cache=False`` re-runs the whole sequence each step: a reference for tests). ``Decoder`` is
that loop one token at a time, for callers that time or steer each token (``leviathan bench``'s decode section).
Serve a leviathan model baked (``model.bake_()``): the generator becomes the table it computes, so decoding pays
nothing for it (``leviathan generate`` does this by default).

Footguns: generation stops at ``model.config.max_position_embeddings`` total tokens (the model was
never trained on later positions; a longer prompt keeps its last ones); ``temperature=0`` means
greedy decoding (argmax), and top-k / top-p are then irrelevant.
"""

from __future__ import annotations

from typing import Sequence

import torch

from .model.llama import KVCache


def sample_next_token(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """logits (B, V) -> next ids (B,). Filters are applied in the order temperature, top-k, top-p."""
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature < torch.finfo(torch.float32).tiny:  # 0, or a temperature float32 holds as 0 (1e-300): greedy
        return logits.argmax(dim=-1)
    logits = logits.float()
    # shifted so the largest is 0 before the division: a tiny temperature (1e-300, 1e-39) turned the logits into
    # +-inf, softmax into NaN and torch.multinomial into a RuntimeError (issue 30 round 11, S79); the same
    # distribution otherwise (softmax, top-k and top-p do not see a shift)
    logits = (logits - logits.amax(dim=-1, keepdim=True)) / temperature
    if top_k is not None and 0 < top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and 0 < top_p < 1:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
        probs = sorted_logits.softmax(dim=-1)
        # drop a token when the tokens ranked above it already hold top_p of the mass (the first is always kept)
        drop = (probs.cumsum(dim=-1) - probs) >= top_p
        drop[..., 0] = False  # a top_p below float32's range (1e-300) compared as 0 and dropped it too: NaN (round 10)
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
    probs = logits.softmax(dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)


class Decoder:
    """Incremental decoding with the native KV cache: ``prefill`` the prompt once, then ``step`` per token (the ids just
    chosen, or whatever should be fed instead); both return the next ids (B,) of ``sample_next_token`` with this
    decoder's settings. No position limit is checked here; ``generate`` stops at ``max_position_embeddings``."""

    def __init__(self, model, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 generator: torch.Generator | None = None):
        self.model, self.temperature, self.top_k, self.top_p, self.generator = model, temperature, top_k, top_p, generator
        self.cache: KVCache | None = None

    def pick(self, logits: torch.Tensor) -> torch.Tensor:
        """logits (B, T, V) -> the next ids (B,) after the last position."""
        return sample_next_token(logits[:, -1], self.temperature, self.top_k, self.top_p, self.generator)

    @torch.no_grad()
    def prefill(self, ids: torch.Tensor) -> torch.Tensor:
        """Run the prompt (B, T) into a fresh cache; returns the first new ids (B,)."""
        self.cache = KVCache()
        logits, _ = self.model(ids, cache=self.cache)
        return self.pick(logits)

    @torch.no_grad()
    def step(self, ids: torch.Tensor) -> torch.Tensor:
        """Feed one id per sequence (B,) after the cached positions; returns the next ids (B,)."""
        if self.cache is None:
            raise RuntimeError("Decoder.step before prefill: run the prompt first")
        logits, _ = self.model(ids[:, None], cache=self.cache)
        return self.pick(logits)


@torch.no_grad()
def generate(model, prompt_ids: Sequence[int] | torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = None, eos_id: int | None = None,
             seed: int | None = None, use_cache: bool = True) -> torch.Tensor:
    """Continue ``prompt_ids`` ((T,) or (B, T), equal lengths) and return (B, T + new) ids, prompt included.

    Sampling stops for a sequence at ``eos_id`` (later positions repeat it) and for all of them after
    ``max_new_tokens`` or at ``max_position_embeddings`` tokens.

    Parameters: the sampling options (temperature, top-k, top-p, ...), keyword arguments one each as ``leviathan
    generate`` passes them.
    """
    device = next(model.parameters()).device
    ids = torch.as_tensor(prompt_ids, dtype=torch.long, device=device)
    if ids.dim() == 1:
        ids = ids.unsqueeze(0)
    if ids.shape[1] == 0:
        raise ValueError("the prompt is empty; give at least one token (for example the end-of-text id)")
    limit = model.config.max_position_embeddings
    if ids.shape[1] >= limit:
        ids = ids[:, -(limit - 1):]
    generator = None
    if seed is not None:
        generator = torch.Generator(device=device)
        generator.manual_seed(seed)
    was_training = model.training
    model.eval()
    finished = torch.zeros(ids.shape[0], dtype=torch.bool, device=device)
    decoder = Decoder(model, temperature, top_k, top_p, generator)
    try:
        for i in range(min(max_new_tokens, limit - ids.shape[1])):
            if not use_cache:
                nxt = decoder.pick(model(ids)[0])  # (B,); the whole sequence again
            elif i == 0:
                nxt = decoder.prefill(ids)
            else:
                nxt = decoder.step(nxt)
            if eos_id is not None:
                nxt = torch.where(finished, torch.full_like(nxt, eos_id), nxt)
                finished |= nxt == eos_id
            ids = torch.cat([ids, nxt[:, None]], dim=1)
            if eos_id is not None and bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return ids
