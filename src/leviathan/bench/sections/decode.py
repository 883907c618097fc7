"""``decode``: greedy generation tokens/s with the native KV cache, baked leviathan (``CausalLM.bake_()``)
vs dense_tied. Decoding is ``leviathan.generation``'s own (``Decoder``), timed token by token."""

from __future__ import annotations

import time
from typing import Callable

import torch

from ...errors import UserError
from ...generation import Decoder, generate
from ..configs import CONFIGS, BenchConfig, BenchOptions
from ..data import TokenData
from ..harness import alternate, build_model, free, throughput_row, time_ratios


def greedy_decode(model, prompt: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Greedy generation with the native KV cache (``generation.generate``); returns the new ids (1, new_tokens)."""
    return generate(model, prompt, new_tokens, temperature=0)[:, prompt.shape[1]:]


class _TimedDecoder:
    """Greedy decoding one token per call (prefill on ``reset``, untimed)."""

    def __init__(self, model, prompt: torch.Tensor):
        self.decoder, self.prompt = Decoder(model, temperature=0), prompt

    def reset(self) -> None:
        self.next = self.decoder.prefill(self.prompt)

    def __call__(self) -> None:
        self.next = self.decoder.step(self.next)


def bench_decode(bc: BenchConfig, prompt: torch.Tensor, new_tokens: int, repeats: int, warmup: int = 1) -> dict:
    """Tokens/s of greedy decoding, baked leviathan vs dense_tied (same body, same prompt), alternated token by token (each
    with its own KV cache, prefilled untimed): 1 / median per-token time over every token of every repeat.
    """
    models = {v: build_model(bc.model(v)).eval() for v in ("dense_tied", "leviathan")}
    t0 = time.perf_counter()
    models["leviathan"].bake_()
    bake_s = time.perf_counter() - t0
    decoders = {v: _TimedDecoder(m, prompt) for v, m in models.items()}
    times: dict[str, list[float]] = {v: [] for v in decoders}
    cpu: dict[str, list[float]] = {}
    for i in range(warmup + repeats):
        for d in decoders.values():
            d.reset()
        t = alternate(decoders, new_tokens, warmup=0, cpu_times=cpu if i >= warmup else {})
        if i >= warmup:
            for v in times:
                times[v].extend(t[v])
    rows = {v: throughput_row(t, cpu[v], tokens=1, samples=False) for v, t in times.items()}
    # ratio = leviathan tokens/s over dense_tied's = dense_tied's per-token time over leviathan's
    out = {"config": bc.name, "prompt_tokens": int(prompt.shape[1]), "new_tokens": new_tokens, "repeats": repeats,
           "bake_s": bake_s, "models": rows, **time_ratios(rows, "dense_tied", "leviathan")}
    del models, decoders
    free()
    return out


PROMPT_TOKENS = 32  # the decode prompt: the first ids of the configuration's token stream


def _room(name: str) -> int:
    """How many tokens ``name``'s model decodes after the prompt before it runs out of positions."""
    return CONFIGS[name].model("dense_tied").max_position_embeddings - PROMPT_TOKENS


def check_decode_tokens(opts: BenchOptions) -> None:
    """UserError when ``--decode-tokens`` is more than a selected configuration's model has positions for after the
    prompt: ``bench --only decode --config tiny --decode-tokens 1000000000`` was taken and decoded on past the 64
    positions without end, where ``generate`` stops at them (issue 30 round 17, D339). Checked before any work."""
    if "decode" not in opts.sections or opts.decode_tokens is None:
        return
    over = [name for name in dict.fromkeys(opts.configs) if opts.decode_tokens > _room(name)]
    if over:
        room = min(_room(name) for name in over)
        raise UserError(f"--decode-tokens {opts.decode_tokens:,} is more than configuration {over[0]!r} has positions "
                        f"for ({room + PROMPT_TOKENS} positions, {PROMPT_TOKENS} of them the prompt's); pass "
                        f"--decode-tokens {room} or fewer")


def run(opts: BenchOptions, data: dict[str, TokenData], log: Callable[[str], None]) -> dict:
    out = {}
    check_decode_tokens(opts)
    for name in opts.configs:
        bc = CONFIGS[name]
        default = {"paper": 8 if opts.quick else 32}.get(name, 16 if opts.quick else 128)
        new = opts.decode_tokens or min(default, _room(name))  # tiny's 64 positions: 32 after the prompt (D339)
        reps = opts.repeats_for(9, 2)
        prompt = torch.from_numpy(data[name].stream[:PROMPT_TOKENS].copy()).view(1, -1)
        log(f"[decode] {name}: {new} new tokens after a {prompt.shape[1]}-token prompt, {reps} repeats ...")
        out[name] = bench_decode(bc, prompt, new, reps, opts.warmup)
    return out
