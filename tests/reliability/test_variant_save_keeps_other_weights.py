"""A save with a weights ``variant`` replaces that variant's earlier weights and nothing else (issue 30 round 32).

AC289 (the adopted class), AC419 (``LeviathanForCausalLM``) and AC422 (a sharded variant): ``save_pretrained(DIR,
variant='v2')`` into a folder holding a save without a variant deleted its model.safetensors, exit 0: the save took
the folder's default weights as its own earlier save's whatever variant it wrote (``save_folder._earlier_weights``).
AC421, the other face of it: a whole ``variant='v1'`` save into a folder of a sharded v1 left the v1 index and shards
beside the new file, two v1 saves in one folder. Each save is checked here by what the folder holds after it and by
what each variant then loads: its own model's weights.
"""

from __future__ import annotations

import hashlib

import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from leviathan.hf import LeviathanForCausalLM, adopt, load_adopted  # noqa: E402

from test_adopted_load_failures_in_one_line import saves  # noqa: E402,F401
from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402

pytestmark = pytest.mark.reliability

SHARDED = {"max_shard_size": "20KB"}


def _same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def _digests(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()}


@pytest.fixture(scope="module")
def models():
    """Two adopted models of one set of settings (two random inits): what each variant must load back."""
    torch.manual_seed(0)
    first = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    torch.manual_seed(1)
    second = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    assert not _same(first, second)
    return first, second


@pytest.mark.parametrize("first_kw, second_kw", [({}, {}), ({}, SHARDED), (SHARDED, {}), (SHARDED, SHARDED)],
                         ids=["whole-whole", "whole-sharded", "sharded-whole", "sharded-sharded"])
def test_a_variant_saved_beside_the_default_weights_keeps_them(models, tmp_path, first_kw, second_kw):
    """AC289, AC422: the default weights (whole or sharded) survive a v2 save beside them, unchanged, and each load
    reads its own model."""
    first, second = models
    folder = tmp_path / "m"
    first.save_pretrained(folder, **first_kw)
    default_files = {n: d for n, d in _digests(folder).items() if n not in ("config.json", "generation_config.json")}
    second.save_pretrained(folder, variant="v2", **second_kw)
    after = _digests(folder)
    assert {n: after.get(n) for n in default_files} == default_files
    assert _same(load_adopted(folder), first)
    assert _same(load_adopted(folder, variant="v2"), second)


def test_the_native_class_keeps_its_default_weights_beside_a_variant(saves, tmp_path):  # noqa: F811
    """AC419: the same in LeviathanForCausalLM."""
    model = LeviathanForCausalLM.from_pretrained(saves / "native")
    folder = tmp_path / "native"
    model.save_pretrained(folder)
    weights = (folder / "model.safetensors").read_bytes()
    model.save_pretrained(folder, variant="v2")
    assert (folder / "model.safetensors").read_bytes() == weights
    assert (folder / "model.v2.safetensors").is_file()
    assert _same(LeviathanForCausalLM.from_pretrained(folder), model)
    assert _same(LeviathanForCausalLM.from_pretrained(folder, variant="v2"), model)


@pytest.mark.parametrize("first_kw, second_kw", [(SHARDED, {}), ({}, SHARDED)], ids=["sharded-then-whole",
                                                                                     "whole-then-sharded"])
def test_a_variant_saved_again_replaces_its_own_earlier_weights_only(models, tmp_path, first_kw, second_kw):
    """AC421: a v1 save over a v1 save of the other form leaves only its own v1 files; the default weights beside
    them are kept."""
    first, second = models
    folder = tmp_path / "m"
    first.save_pretrained(folder)
    default = (folder / "model.safetensors").read_bytes()
    first.save_pretrained(folder, variant="v1", **first_kw)
    second.save_pretrained(folder, variant="v1", **second_kw)
    v1 = sorted(n for n in (p.name for p in folder.iterdir()) if ".v1" in n)
    if second_kw:
        assert "model.v1.safetensors" not in v1 and "model.safetensors.index.v1.json" in v1
    else:
        assert v1 == ["model.v1.safetensors"]
    assert (folder / "model.safetensors").read_bytes() == default
    assert _same(load_adopted(folder, variant="v1"), second)
    assert _same(load_adopted(folder), first)


def test_the_default_weights_beside_a_sharded_variant_are_still_checked(models, tmp_path):
    """The record of the default weights is carried through a sharded v2 save (which writes no record of its own),
    and the load checks them: another model's model.safetensors swapped in is refused, not loaded."""
    import shutil

    first, second = models
    folder, other = tmp_path / "m", tmp_path / "other"
    first.save_pretrained(folder)
    second.save_pretrained(folder, variant="v2", **SHARDED)
    second.save_pretrained(other)
    shutil.copyfile(other / "model.safetensors", folder / "model.safetensors")
    from leviathan.errors import UserError

    with pytest.raises(UserError, match=r"is not the weights file saved with"):
        load_adopted(folder)
