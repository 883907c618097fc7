"""``adopt`` refuses an input embedding that does more than look up a row (issue 30 round 24, W652):
``nn.Embedding(max_norm=1.0)`` renormalises every row it looks up, which the generator dropped without a word
(round 22's W180 refused such a subclass; the plain class with the option passed); and, round 26, Q132,
``nn.Embedding(scale_grad_by_freq=True)``, whose per-id gradient scaling was dropped the same way.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)


def _llama():
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4))


def test_max_norm_is_refused_and_the_model_left_as_it_was():
    model = _llama()
    model.model.embed_tokens.max_norm = 1.0
    with pytest.raises(UserError, match=r"has max_norm=1.0: it renormalises every row it looks up.*max_norm = None"):
        adopt(model, **GEN)
    assert type(model).__name__ == "LlamaForCausalLM"
    model.model.embed_tokens.max_norm = None  # the fix the line names
    assert type(adopt(model, **GEN)).__name__ == "LeviathanLlamaForCausalLM"


def test_scale_grad_by_freq_is_refused_and_the_model_left_as_it_was():
    """Q132: adopted without a word, the gradient scaling by each id's count in the batch dropped."""
    from torch import nn

    model = _llama()
    model.model.embed_tokens = nn.Embedding(300, 32, scale_grad_by_freq=True)
    with pytest.raises(UserError, match=r"has scale_grad_by_freq=True: it divides each row's gradient by how often "
                                        r"its id occurs in the batch .*scale_grad_by_freq = False first") as e:
        adopt(model, **GEN)
    assert "\n" not in str(e.value)
    assert type(model).__name__ == "LlamaForCausalLM"
    model.model.embed_tokens.scale_grad_by_freq = False  # the fix the line names
    assert type(adopt(model, **GEN)).__name__ == "LeviathanLlamaForCausalLM"
