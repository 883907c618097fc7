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


# ---- round 33 -------------------------------------------------------------------------------------------------------

def test_a_variant_named_like_a_shard_keeps_the_variant_it_resembles(models, saves, tmp_path):  # noqa: F811
    """AE4, AE19: 'ckpt-1-of-3' was read back from its file's name as a shard of 'ckpt', and the save deleted
    model.ckpt.safetensors. Since round 33 (AE22, fix34b) such a variant is refused at the save
    (``save_folder.shard_like_variant``: the loaders read its file as a shard of 'ckpt'), so 'ckpt' is kept the more
    so: nothing is written."""
    from leviathan.errors import UserError

    first, second = models
    folder = tmp_path / "m"
    first.save_pretrained(folder, variant="ckpt")
    with pytest.raises(UserError, match=r"variant 'ckpt-1-of-3' ends like a shard's name"):
        second.save_pretrained(folder, variant="ckpt-1-of-3")
    assert (folder / "model.ckpt.safetensors").is_file() and not (folder / "model.ckpt-1-of-3.safetensors").exists()
    assert _same(load_adopted(folder, variant="ckpt"), first)
    native = LeviathanForCausalLM.from_pretrained(saves / "native")
    folder = tmp_path / "native"
    native.save_pretrained(folder, variant="ckpt")
    with pytest.raises(UserError, match=r"variant 'ckpt-00001-of-00002' ends like a shard's name"):
        native.save_pretrained(folder, variant="ckpt-00001-of-00002")
    assert (folder / "model.ckpt.safetensors").is_file()
    assert _same(LeviathanForCausalLM.from_pretrained(folder, variant="ckpt"), native)


def test_a_users_pytorch_model_bin_is_not_taken_for_the_saves_own(models, saves, tmp_path):  # noqa: F811
    """AE24: transformers 5 writes safetensors only, yet a re-save deleted a pytorch_model.bin the user wrote. The
    native class's save keeps it; the adopted class's, whose config.json records its weights files, refuses (a file
    it does not record would keep the folder from loading) and writes nothing."""
    from leviathan.errors import UserError

    native = LeviathanForCausalLM.from_pretrained(saves / "native")
    first, _ = models
    for model, folder in ((native, tmp_path / "native"), (first, tmp_path / "adopted")):
        model.save_pretrained(folder)
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
        before = _digests(folder)
        if model is native:
            model.save_pretrained(folder)
            assert _digests(folder)["pytorch_model.bin"] == before["pytorch_model.bin"]
        else:
            with pytest.raises(UserError, match=r"holds pytorch_model\.bin, weights of an earlier save"):
                model.save_pretrained(folder)
            assert _digests(folder) == before


@pytest.mark.parametrize("first_variant, second_variant", [(None, "v2"), ("v1", None)], ids=["variant", "default"])
def test_weights_of_other_settings_are_refused_beside_kept_weights(saves, tmp_path, first_variant,  # noqa: F811
                                                                  second_variant):
    """AE299, AE303, AE304: a save of a model of other settings beside weights it keeps rewrote the folder's one
    config.json, and the kept weights loaded as another model without a word. Refused, nothing written."""
    from leviathan.errors import UserError

    model = LeviathanForCausalLM.from_pretrained(saves / "native")
    other = LeviathanForCausalLM(model.config.__class__(**{**model.config.to_dict(), "rms_norm_eps": 1e-2}))
    folder = tmp_path / "m"
    model.save_pretrained(folder, variant=first_variant)
    before = _digests(folder)
    with pytest.raises(UserError, match=r"^save_pretrained: '.*m' holds model.*safetensors, weights this save keeps, "
                                        r"and its config\.json differs in rms_norm_eps: .*nothing was written"):
        other.save_pretrained(folder, variant=second_variant)
    assert _digests(folder) == before


def test_a_native_variant_into_an_adopted_folder_is_refused(models, saves, tmp_path):  # noqa: F811
    """AE301: LeviathanForCausalLM's v2 save replaced an adopted folder's config.json; neither weights loaded."""
    from leviathan.errors import UserError

    first, _ = models
    folder = tmp_path / "m"
    first.save_pretrained(folder)
    before = _digests(folder)
    with pytest.raises(UserError, match=r"weights this save keeps, and its config\.json differs in"):
        LeviathanForCausalLM.from_pretrained(saves / "native").save_pretrained(folder, variant="v2")
    assert _digests(folder) == before
    assert _same(load_adopted(folder), first)


def test_save_options_given_by_position_are_checked_as_keywords(models, saves, tmp_path):  # noqa: F811
    """AE1: the adopted class handed a state_dict given by position on twice (a raw TypeError); AE18: a variant of
    '../x' given by position reached transformers (a raw FileNotFoundError naming the save folder)."""
    from leviathan.errors import UserError

    first, _ = models
    first.save_pretrained(tmp_path / "a", True, None, False, "50GB", "v2")
    assert _same(load_adopted(tmp_path / "a", variant="v2"), first)
    native = LeviathanForCausalLM.from_pretrained(saves / "native")
    with pytest.raises(UserError, match=r"variant must be a plain name"):
        native.save_pretrained(tmp_path / "b", True, None, False, "50GB", "../x")
    with pytest.raises(UserError, match=r"^save_pretrained: .*; pass the options after the folder as keywords"):
        native.save_pretrained(tmp_path / "c", True, None, False, "50GB", None, None, True, True, False, "extra")


def test_a_state_dict_given_is_the_model_saved_for_both_loaders(models, tmp_path):
    """AE328: the table baked for the original class came from the live generator, the rest from the state_dict
    given, so transformers' LlamaForCausalLM and load_adopted read two different models from one file."""
    first, second = models
    first.save_pretrained(tmp_path / "m", state_dict=second.state_dict())
    ids = torch.tensor([[1, 5, 9, 3]])
    with torch.no_grad():
        want = second(ids).logits
        plain = transformers.LlamaForCausalLM.from_pretrained(tmp_path / "m")(ids).logits
        adopted = load_adopted(tmp_path / "m")(ids).logits
    torch.testing.assert_close(adopted, want)
    torch.testing.assert_close(plain, want, rtol=1e-4, atol=1e-4)
