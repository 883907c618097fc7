"""The KV cache, ``Decoder`` and ``token_losses`` given inputs a caller can get wrong (issue 30 round 21, P394, P395,
P396, P412, P413, P417, P419, P420): each is one error naming the argument and the fix, never torch's or Python's own
message from deep inside, and never a silent wrong result."""

from __future__ import annotations

import pytest
import torch

from leviathan import CausalLM, KVCache, ModelConfig
from leviathan.generation import Decoder

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def model() -> CausalLM:
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      max_position_embeddings=64, embedding="dense_tied")
    return CausalLM(cfg).eval()


def test_an_empty_prompt_is_refused_by_prefill(model):
    with pytest.raises(ValueError, match=r"the prompt is empty .*give at least one token id"):
        Decoder(model, temperature=0).prefill(torch.zeros((1, 0), dtype=torch.long))


def test_a_step_of_another_batch_size_names_the_cache_and_the_fix(model):
    decoder = Decoder(model, temperature=0)
    decoder.prefill(torch.tensor([[1, 2, 3]]))
    with pytest.raises(ValueError, match=r"holds 1 sequence\(s\) .* continues 2 sequence\(s\) .*start a new KVCache"):
        decoder.step(torch.tensor([4, 5]))


def test_a_cache_fed_another_batch_by_the_model_names_the_fix(model):
    cache = KVCache()
    with torch.no_grad():
        model(torch.tensor([[1, 2]]), cache=cache)
        with pytest.raises(ValueError, match=r"a cache serves one batch of one model"):
            model(torch.tensor([[1], [2]]), cache=cache)
        assert cache.get_seq_length() == 2  # the refused call added nothing


def test_a_step_given_a_list_or_a_matrix_names_the_shape_it_takes(model):
    decoder = Decoder(model, temperature=0)
    decoder.prefill(torch.tensor([[1, 2, 3]]))
    with pytest.raises(TypeError, match=r"Decoder.step takes the ids just chosen as a tensor \(B,\).*torch.tensor"):
        decoder.step([4])
    with pytest.raises(ValueError, match=r"one id per sequence, a tensor \(B,\), got shape \(1, 1\)"):
        decoder.step(torch.tensor([[4]]))
    assert decoder.step(torch.tensor([4])).shape == (1,)  # the decoder still works after the refusals


def test_a_cache_that_is_not_one_is_refused_by_its_type(model):
    with pytest.raises(TypeError, match=r"cache must be a KVCache .* got str"):
        model(torch.tensor([[1, 2]]), cache="x")


@pytest.mark.parametrize("shard, error, said", [
    ((0, 0), ValueError, r"world 0 must be a whole number >= 1"),               # P396: "slice step cannot be zero"
    ((2, 2), ValueError, r"rank 2 must be a whole number in \[0, 2\)"),         # P395: other ranks' batches, no word
    ((-1, 2), ValueError, r"rank -1 must be a whole number in \[0, 2\)"),
    (3, TypeError, r"shard must be a pair \(rank, world\)"),
], ids=["world-0", "rank-past-world", "rank-negative", "not-a-pair"])
def test_a_shard_outside_its_world_is_refused_before_scoring(model, shard, error, said):
    import numpy as np

    from leviathan.eval.perplexity import token_losses

    with pytest.raises(error, match=said):
        token_losses(model, np.arange(200) % 300, 32, 4, shard=shard)
    ranks = [token_losses(model, np.arange(200) % 300, 32, 4, shard=(r, 2)) for r in (0, 1)]
    assert np.allclose(ranks[0] + ranks[1], token_losses(model, np.arange(200) % 300, 32, 4))


@pytest.mark.parametrize("outside", ["nope", "NaN", None, "ignore"])
def test_an_outside_mode_other_than_raise_or_nan_is_refused(model, outside):
    """P394: ``outside='nope'`` was scored as 'raise' without a word (a misspelt 'nan' raised later, or never)."""
    import numpy as np

    from leviathan.eval.perplexity import token_losses

    with pytest.raises(ValueError, match=r"outside must be 'raise' .* or 'nan' .*, got "):
        token_losses(model, np.arange(200) % 300, 32, 4, outside=outside)
    with pytest.raises(ValueError, match=r"outside must be 'raise'"):
        model.token_nll(torch.tensor([[1, 2]]), torch.tensor([[2, 3]]), outside=outside)
    for good in ("raise", "nan"):
        assert token_losses(model, np.arange(200) % 300, 32, 4, outside=good).shape == (199,)


def test_a_forward_past_the_models_positions_is_refused_naming_the_limit(model):
    """P425: 65 ids into a model of 64 positions gave logits for position 65 without a word, while ``evaluate``
    refuses such a window and ``generate`` stops at the limit; the same through a cache that already holds 60."""
    assert model(torch.ones((1, 64), dtype=torch.long))[0].shape == (1, 64, 300)
    said = r"reaches position 65 .*past the model's max_position_embeddings \(64\); pass at most 64 positions"
    with pytest.raises(ValueError, match=said):
        model(torch.ones((1, 65), dtype=torch.long))
    with pytest.raises(ValueError, match=said):
        model.token_nll(torch.ones((1, 65), dtype=torch.long), torch.ones((1, 65), dtype=torch.long))
    cache = KVCache()
    model(torch.ones((1, 60), dtype=torch.long), cache=cache)
    with pytest.raises(ValueError, match=r"reaches position 65 \(60 cached \+ 5 new ids\)"):
        model(torch.ones((1, 5), dtype=torch.long), cache=cache)
