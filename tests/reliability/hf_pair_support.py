"""The tiny pair of Hugging Face models the hf reliability tests share: ``LeviathanForCausalLM`` and an adopted Llama of
the same sizes, and ``refused``, the one-line UserError check (review D2-D4 of round 33: four test files held their
own copies of both, in small variants).

    models = tiny_pair(vocab=64, positions=32)   # [("LeviathanForCausalLM", native), ("LeviathanLlama...", adopted)]
    line = refused(lambda: model.generate(...), "LeviathanForCausalLM.generate: ...", ValueError)
    line = refused(generate_call(model, num_beams=2), "...")   # model.generate(PROMPT, max_new_tokens=2, num_beams=2)
"""

from __future__ import annotations

import re

import pytest
import torch


def tiny_pair(vocab: int, positions: int = 32) -> list[tuple[str, object]]:
    """(name, model) for a native ``LeviathanForCausalLM`` and an adopted Llama, both in eval mode, of ``vocab`` ids and
    ``positions`` positions (1 layer, width 32, 2 heads of 2 kv heads, generator 8/2/8/4), made under seed 0."""
    from transformers import LlamaConfig

    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt

    torch.manual_seed(0)
    sizes = dict(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=2, max_position_embeddings=positions)
    native = LeviathanForCausalLM(LeviathanConfig(**sizes)).eval()
    adopted = adopt(LlamaConfig(**sizes), seed_dim=8, modes=2, knots=8, rank=4).eval()
    return [("LeviathanForCausalLM", native), (type(adopted).__name__, adopted)]


def refused(call, said: str, error: type = Exception) -> str:
    """The one-line UserError (also ``error``) ``call`` raises, which must hold ``said``; its text."""
    from leviathan.errors import UserError

    with pytest.raises(UserError, match=re.escape(said)) as caught:
        call()
    assert isinstance(caught.value, error)
    line = str(caught.value)
    assert "\n" not in line, line
    return line


PROMPT = torch.tensor([[1, 2, 3]])


def generate_call(model, **keywords):
    """A call of ``model.generate`` for ``refused``: the prompt ``PROMPT`` (or ``prompt=``), 2 new tokens unless
    ``max_new_tokens`` is given, the other keywords as they are."""
    keywords.setdefault("max_new_tokens", 2)
    return lambda: model.generate(keywords.pop("prompt", PROMPT), **keywords)
