"""Input-embedding variants behind one interface (docs/DESIGN.md §4) and the decoder's bake_/add_tokens."""

from __future__ import annotations

import pytest
import torch

from leviathan.config import ConfigError
from leviathan.model.config import EMBEDDING_KINDS
from leviathan.model.embedding import (CompositionalEmbedding, FactorizedEmbedding, TableEmbedding,
                                       build_input_embedding)
from leviathan.model.generator import LeviathanGenerator
from leviathan.model.llama import CausalLM
from leviathan.model.reference import reference_from_module

pytestmark = pytest.mark.usefixtures("single_thread")

EXPECTED_TYPES = {
    "dense_tied": TableEmbedding,
    "dense_untied": TableEmbedding,
    "leviathan": LeviathanGenerator,
    "factorized": FactorizedEmbedding,
    "compositional": CompositionalEmbedding,
}


def batch(vocab_size: int, B: int = 2, T: int = 12):
    ids = torch.randint(0, vocab_size, (B, T + 1))
    return ids[:, :-1], ids[:, 1:]


def test_every_variant_is_covered():
    assert set(EXPECTED_TYPES) == set(EMBEDDING_KINDS)


@pytest.mark.parametrize("kind", EMBEDDING_KINDS)
def test_variant_builds_trains_and_bakes(kind, tiny_model_config):
    cfg = tiny_model_config(kind)
    model = CausalLM(cfg)
    emb = model.model.embed_tokens
    assert type(emb) is EXPECTED_TYPES[kind]
    assert emb.num_embeddings == cfg.vocab_size

    x, y = batch(cfg.vocab_size)
    logits, loss = model(x, labels=y)
    assert logits.shape == (*x.shape, cfg.vocab_size)
    assert loss.ndim == 0 and torch.isfinite(loss)
    # freshly initialised: the loss is close to log V
    assert abs(loss.item() - torch.log(torch.tensor(float(cfg.vocab_size))).item()) < 0.5
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        assert torch.isfinite(p.grad).all(), name
    assert any(p.grad.abs().max() > 0 for p in emb.parameters())

    table = emb.bake()
    assert table.shape == (cfg.vocab_size, cfg.hidden_size) and not table.requires_grad
    with torch.no_grad():
        direct = emb(torch.arange(cfg.vocab_size))
    torch.testing.assert_close(table, direct, rtol=1e-6, atol=1e-7)


def test_dense_tied_shares_one_tensor_and_untied_does_not(tiny_model_config):
    tied = CausalLM(tiny_model_config("dense_tied"))
    assert tied.lm_head.weight is tied.model.embed_tokens.weight
    assert tied.config.tie_word_embeddings
    for kind in ("dense_untied", "leviathan", "factorized", "compositional"):
        model = CausalLM(tiny_model_config(kind))
        assert model.lm_head.weight is not getattr(model.model.embed_tokens, "weight", None), kind
        assert not model.config.tie_word_embeddings


def test_dense_tables_use_hf_key_names(tiny_model_config):
    keys = set(CausalLM(tiny_model_config("dense_untied")).state_dict())
    assert {"model.embed_tokens.weight", "lm_head.weight", "model.norm.weight"} <= keys


def test_build_input_embedding_initialisation(tiny_model_config):
    cfg = tiny_model_config("dense_untied", vocab_size=4000, hidden_size=64, initializer_range=0.05)
    table = build_input_embedding(cfg)
    assert abs(table.weight.std().item() - 0.05) < 0.005
    comp = build_input_embedding(tiny_model_config("compositional"))
    assert comp.codebooks.shape == (3, 4, 8) and comp.capacity == 64


def test_compositional_is_codebook_sum_then_linear(tiny_model_config):
    """The generator's steps 1-2 (docs/DESIGN.md §2) plus a d_s x D map, checked against an explicit digit loop."""
    emb = CausalLM(tiny_model_config("compositional")).model.embed_tokens
    ids = torch.tensor([[0, 17, 63], [5, 5, 49]])
    base = emb.base
    expected = torch.zeros(*ids.shape, emb.embedding_dim)
    for pos, i in enumerate(ids.reshape(-1).tolist()):
        digits = [(i // base**2) % base, (i // base) % base, i % base]
        z = sum(emb.codebooks[j, d] for j, d in enumerate(digits))
        expected.view(-1, emb.embedding_dim)[pos] = emb.proj.weight @ z
    torch.testing.assert_close(emb(ids), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="token id 64"):
        emb(torch.tensor([64]))


@pytest.mark.parametrize("kind", ["leviathan", "factorized", "compositional", "dense_untied"])
def test_bake_keeps_logits(kind, tiny_model_config):
    model = CausalLM(tiny_model_config(kind)).eval()
    x, _ = batch(model.config.vocab_size)
    with torch.no_grad():
        before, _ = model(x)
        model.bake_()
        after, _ = model(x)
    emb = model.model.embed_tokens
    assert type(emb) is TableEmbedding and emb.weight.shape == (model.config.vocab_size, model.config.hidden_size)
    assert set(n for n, _ in emb.named_parameters()) == {"weight"}
    assert "model.embed_tokens.weight" in model.state_dict()
    torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-5)


def test_bake_of_dense_tied_keeps_the_tie(tiny_model_config):
    model = CausalLM(tiny_model_config("dense_tied"))
    model.bake_()
    assert model.lm_head.weight is model.model.embed_tokens.weight


def test_add_tokens_on_leviathan(tiny_model_config):
    cfg = tiny_model_config("leviathan")  # V = 50, b = 4, capacity 64
    model = CausalLM(cfg).eval()
    gen = model.model.embed_tokens
    V, n = cfg.vocab_size, 6
    params_before = {name: (p, p.detach().clone()) for name, p in gen.named_parameters()}
    head_before = model.lm_head.weight.detach().clone()
    x = torch.randint(0, V, (2, 10))
    with torch.no_grad():
        logits_before, _ = model(x)

    assert model.add_tokens(n) == V + n
    assert model.config.vocab_size == V + n and model.config.generator_base == 4  # the base never changes
    assert model.lm_head.weight.shape == (V + n, cfg.hidden_size)
    assert gen.num_embeddings == V + n
    assert model.model.embed_tokens is gen
    for name, p in gen.named_parameters():
        old_tensor, old_value = params_before[name]
        assert p is old_tensor, name
        assert torch.equal(p, old_value), name  # bit-identical
    assert torch.equal(model.lm_head.weight[:V], head_before)
    torch.testing.assert_close(model.lm_head.weight[V:], head_before.mean(0, keepdim=True).expand(n, -1),
                               rtol=0, atol=1e-7)

    with torch.no_grad():
        new_ids = torch.arange(V, V + n)
        torch.testing.assert_close(gen(new_ids), reference_from_module(gen, new_ids), rtol=1e-5, atol=1e-6)
        logits_after, _ = model(x)
        assert logits_after.shape[-1] == V + n
        torch.testing.assert_close(logits_after[..., :V], logits_before, rtol=1e-5, atol=1e-6)
        # the new tokens share one logit: the mean head row
        torch.testing.assert_close(logits_after[..., V:], logits_after[..., V:V + 1].expand(-1, -1, n),
                                   rtol=1e-5, atol=1e-6)
        _, loss = model(torch.tensor([[V, V + n - 1, 3]]), labels=torch.tensor([[V + 1, 2, V + n - 1]]))
        assert torch.isfinite(loss)
        assert gen.bake().shape == (V + n, cfg.hidden_size)


def test_add_tokens_up_to_capacity_then_refuses(tiny_model_config):
    model = CausalLM(tiny_model_config("leviathan"))
    assert model.add_tokens(14) == 64  # exactly b^k
    with pytest.raises(ConfigError, match=r"exceeds the generator's capacity b\^k = 4\^3 = 64"):
        model.add_tokens(1)
    assert model.config.vocab_size == 64 and model.lm_head.weight.shape[0] == 64  # nothing changed


def test_add_tokens_beyond_capacity_raises_clearly(tiny_model_config):
    model = CausalLM(tiny_model_config("leviathan"))
    with pytest.raises(ValueError, match="capacity.*64"):
        model.add_tokens(15)


def test_add_tokens_on_compositional(tiny_model_config):
    model = CausalLM(tiny_model_config("compositional"))
    assert model.add_tokens(3) == 53
    logits, _ = model(torch.tensor([[50, 51, 52]]))
    assert logits.shape == (1, 3, 53)


@pytest.mark.parametrize("kind", ["dense_tied", "dense_untied", "factorized"])
def test_add_tokens_on_table_variants_raises(kind, tiny_model_config):
    model = CausalLM(tiny_model_config(kind))
    with pytest.raises(ValueError, match="digit-based"):
        model.add_tokens(2)
    assert model.config.vocab_size == 50


@pytest.mark.parametrize("kind", ["leviathan", "compositional"])
def test_add_tokens_after_bake_is_refused(kind, tiny_model_config):
    """A baked table has no spare rows: add_tokens refuses, says to call it before bake_(), changes nothing."""
    model = CausalLM(tiny_model_config(kind))
    model.bake_()
    head = model.lm_head.weight.detach().clone()
    ids = torch.tensor([[1, 7, 49]])
    before, _ = model(ids)
    with pytest.raises(ValueError, match=r"baked into a table \(bake_\(\)\); call add_tokens before bake_\(\)"):
        model.add_tokens(3)
    assert model.config.vocab_size == 50 and model.model.embed_tokens.weight.shape == (50, 32)
    assert torch.equal(model.lm_head.weight, head)
    after, _ = model(ids)
    assert after.shape == (1, 3, 50) and torch.equal(after, before)
