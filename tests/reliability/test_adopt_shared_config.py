"""Models built from one transformers config share it (issue 30 round 23, U249 damage, U250 silent): ``adopt`` wrote
its settings into that shared config, so adopting a second model at rank 8 rewrote the first one's config to rank 8;
the first one's ``save_pretrained`` then held rank-4 weights under a rank-8 config.json, exit 0, and ``load_adopted``
refused it as "config.json was edited". A plain model of that config saved ``leviathan_generator`` in its
config.json. An adopted model now has a config of its own."""

from __future__ import annotations

import json

import pytest
import torch

pytestmark = [pytest.mark.reliability]


def _config():
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                       num_attention_heads=4, max_position_embeddings=64)


def test_two_models_of_one_config_adopted_at_different_ranks_each_save_and_load_their_own(tmp_path):
    from transformers import LlamaForCausalLM

    from leviathan.hf import adopt, load_adopted

    shared = _config()
    torch.manual_seed(0)
    a = adopt(LlamaForCausalLM(shared), seed_dim=8, modes=2, knots=8, rank=4)
    b = adopt(LlamaForCausalLM(shared), seed_dim=8, modes=2, knots=8, rank=8)
    a.save_pretrained(tmp_path / "a")
    b.save_pretrained(tmp_path / "b")
    for name, rank in (("a", 4), ("b", 8)):
        saved = json.loads((tmp_path / name / "config.json").read_text())
        assert saved["leviathan_generator"]["rank"] == rank
        loaded = load_adopted(tmp_path / name)
        assert loaded.config.leviathan_generator["rank"] == rank
    ids = torch.randint(0, 300, (1, 8))
    with torch.no_grad():
        assert torch.equal(load_adopted(tmp_path / "a")(ids).logits, a(ids).logits)
    assert not hasattr(shared, "leviathan_generator")  # the caller's config: never written


def test_a_plain_model_of_the_config_an_adopted_model_was_built_from_saves_plain(tmp_path):
    from transformers import LlamaForCausalLM

    from leviathan.hf import adopt

    shared = _config()
    adopted = adopt(LlamaForCausalLM(shared), seed_dim=8, modes=2, knots=8, rank=4)
    assert all(getattr(m, "config", adopted.config) is adopted.config for m in adopted.modules())  # one, its own
    LlamaForCausalLM(shared).save_pretrained(tmp_path / "plain")
    saved = json.loads((tmp_path / "plain" / "config.json").read_text())
    assert "leviathan_generator" not in saved and saved["tie_word_embeddings"] == shared.tie_word_embeddings
