"""Both of leviathan's Hugging Face classes keep ``generate`` and ``forward`` inside the model's positions.

Issue 30 round 30: ``generate(x[:, :3], max_new_tokens=200)`` on a model of 64 (or 128) positions ran until round 29's
position check (W525) stopped it partway, with a line about position_ids the caller never passed and an evaluation's
fix (crop the sequence, score in windows), on LeviathanForCausalLM (Y495) and an adopted Llama, with or without the
cache (Y496, Y517). It is refused before anything is generated, naming max_new_tokens and the room left
(``positions.check_generation_room``, asked from ``_validate_generated_length``). Y514, decided: a forward given no
position_ids ran past max_position_embeddings, while the same positions given are refused; both are refused now
(``positions.check_counted_positions``), as leviathan's own CausalLM refuses them since round 21 (P425).
"""

from __future__ import annotations

import pytest
import torch

from hf_pair_support import refused as _refused
from hf_pair_support import tiny_pair

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

LIMIT = 32


@pytest.fixture(scope="module")
def models():
    return tiny_pair(64, LIMIT)


@pytest.mark.parametrize("use_cache", [True, False])
def test_a_generation_past_the_positions_is_refused_before_it_starts(models, use_cache, monkeypatch):
    prompt = torch.tensor([[1, 2, 3]])
    for name, model in models:
        calls = []
        forward = model.forward
        monkeypatch.setattr(model, "forward", lambda *a, **k: calls.append(1) or forward(*a, **k))
        _refused(lambda: model.generate(prompt, max_new_tokens=200, do_sample=False, use_cache=use_cache),
                 f"{name}.generate: max_new_tokens=200 after the prompt's 3 ids reaches 203 tokens, past the model's "
                 f"{LIMIT} positions (max_position_embeddings); pass max_new_tokens <= {LIMIT - 3}")
        _refused(lambda: model.generate(prompt, max_length=LIMIT + 1, do_sample=False, use_cache=use_cache),
                 f"{name}.generate: max_length={LIMIT + 1} (the prompt's 3 ids and what is generated) is past the "
                 f"model's {LIMIT} positions (max_position_embeddings); pass max_new_tokens <= {LIMIT - 3}, or "
                 f"max_length <= {LIMIT}")
        _refused(lambda: model.generate(torch.ones(1, LIMIT, dtype=torch.long), max_new_tokens=1, do_sample=False),
                 f"{name}.generate: the prompt has {LIMIT} ids but the model has {LIMIT} positions "
                 f"(max_position_embeddings), so no new id fits after it; pass at most its last {LIMIT - 1} ids")
        assert calls == [], f"{name} ran {len(calls)} forward(s) before refusing"
        line = _refused(lambda: model.generate(prompt, max_new_tokens=LIMIT, do_sample=False), "max_new_tokens")
        assert "position_ids" not in line and "score a long text" not in line, line  # forward's words, not generate's
        monkeypatch.undo()
        out = model.generate(prompt, max_new_tokens=LIMIT - 3, do_sample=False, use_cache=use_cache)
        assert out.shape == (1, LIMIT), name  # the whole room is still usable


def test_a_forward_counting_its_positions_past_the_limit_is_refused_as_given_ones_are(models):
    from transformers import DynamicCache

    for name, model in models:
        with torch.no_grad():
            _refused(lambda: model(torch.ones(1, LIMIT + 6, dtype=torch.long)),
                     f"{name}.forward: the input reaches position {LIMIT + 6} ({LIMIT + 6} ids), past the model's "
                     f"max_position_embeddings ({LIMIT}); pass at most {LIMIT} positions")
            assert model(torch.ones(1, LIMIT, dtype=torch.long)).logits.shape == (1, LIMIT, 64)
            cache = DynamicCache(config=model.config)
            model(torch.ones(1, LIMIT - 2, dtype=torch.long), use_cache=True, **{"cache": cache})
            _refused(lambda: model(torch.ones(1, 3, dtype=torch.long), use_cache=True, **{"cache": cache}),
                     f"{name}.forward: the input reaches position {LIMIT + 1} ({LIMIT - 2} cached + 3 new ids)")
