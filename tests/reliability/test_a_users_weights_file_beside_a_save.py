"""A safetensors file of the user's beside a save is no part of it, and a variant is never named like a shard
(issue 30 round 33).

AE20, AE11: a user's own ``model-mine.safetensors`` (4 bytes) beside an adopted save made ``load_adopted`` fail,
"does not read as a safetensors file (... header too small); ... save the adopted model again", an advice that
loops: the savers keep the user's file (S485), and the index does not name it, nor config.json record it. The
loaders now read the files transformers loads (``weight_names.weight_files``: the index's shards, or the whole
file); ``LeviathanForCausalLM.from_pretrained`` read every ``*.safetensors`` the same way. AE22:
``save_pretrained(variant='x-1-of-1')`` wrote ``model.x-1-of-1.safetensors``, read as shard 1 of 1 of variant 'x',
and the loader's advice (variant='x') then failed; such a variant is refused at the save, nothing written.
"""

from __future__ import annotations

import shutil

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt, load_adopted  # noqa: E402

pytestmark = [pytest.mark.reliability]

V, D = 300, 32


@pytest.fixture(scope="module")
def models():
    torch.manual_seed(0)
    llama = transformers.LlamaConfig(vocab_size=V, hidden_size=D, intermediate_size=64, num_hidden_layers=1,
                                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    native = LeviathanForCausalLM(LeviathanConfig(vocab_size=V, hidden_size=D, num_hidden_layers=1,
                                                  num_attention_heads=4, generator_seed_dim=8, generator_modes=2,
                                                  generator_knots=8, generator_rank=4))
    return {"adopted": adopt(llama, seed_dim=8, modes=2, knots=8, rank=4), "native": native}


def _load(kind, folder):
    return load_adopted(folder) if kind == "adopted" else LeviathanForCausalLM.from_pretrained(folder)


@pytest.mark.parametrize("kind", ["adopted", "native"])
def test_a_users_safetensors_file_beside_a_save_is_not_read(models, kind, tmp_path):
    """AE20 (before any save), AE11 (a sharded save into the folder, which keeps the user's file)."""
    model, folder = models[kind], tmp_path / "m"
    model.save_pretrained(folder)
    (folder / "model-mine.safetensors").write_bytes(b"abcd")
    x = torch.randint(0, V, (1, 5))
    with torch.no_grad():
        want = model(x).logits
        assert torch.allclose(_load(kind, folder)(x).logits, want)  # AE20
        model.save_pretrained(folder, max_shard_size="20KB")
        assert (folder / "model-mine.safetensors").read_bytes() == b"abcd"  # still the user's, kept
        assert (folder / "model.safetensors.index.json").is_file()
        assert torch.allclose(_load(kind, folder)(x).logits, want)  # AE11


@pytest.mark.parametrize("kind", ["adopted", "native"])
def test_a_variant_named_like_a_shard_is_refused_at_the_save(models, kind, tmp_path):
    """AE22: the fix the loader gave (variant='x') failed; nothing is written now."""
    with pytest.raises(UserError, match=r"^save_pretrained: variant 'x-1-of-1' ends like a shard's name \(-N-of-M\), "
                                        r"so its file model\.x-1-of-1\.safetensors reads as a shard of variant 'x'.*"
                                        r"choose a variant that does not end in -N-of-M \(e\.g\. 'x_1_of_1'\)"):
        models[kind].save_pretrained(tmp_path / "w", variant="x-1-of-1")
    assert not (tmp_path / "w").exists()
    models[kind].save_pretrained(tmp_path / "w", variant="x-1")  # a name that only looks like a count is taken
    assert (tmp_path / "w" / "model.x-1.safetensors").is_file()
