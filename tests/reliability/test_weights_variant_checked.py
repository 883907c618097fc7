"""A weights ``variant`` is a plain name whose weights the folder holds, or one line naming the variants it holds
(issue 30 round 30).

Y736: ``LeviathanForCausalLM.from_pretrained(export, variant='fp16')`` was transformers' raw "OSError: Error no file
named model.fp16.safetensors, or pytorch_model.fp16.bin, found in directory"; Y739 and Y740 the same for an adopted
save of variant 'v1' asked for 'v2' (sharded through ``load_adopted``, whole through the adopted class's
``from_pretrained``), and Y732 the whole save through ``load_adopted``, told the folder "holds config.json but no
weights ... is incomplete". Y737 (``variant='../x'``, a path) and Y738 (``variant=5``) reached transformers too.
``weights_variant.check_weights_variant`` (from ``load_keywords.check_transformers_keywords``, so for both classes)
names the variant and the fix; a folder of one variant loaded without ``variant=`` (M9) is named the same way for
``LeviathanForCausalLM`` too.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, adopt, load_adopted  # noqa: E402
from leviathan.hf.adoption import adopted_class  # noqa: E402

from test_adopted_load_failures_in_one_line import saves  # noqa: E402,F401
from test_adopted_save_files_held_to_the_save import GEN, LLAMA  # noqa: E402

pytestmark = pytest.mark.reliability

NATIVE = "LeviathanForCausalLM.from_pretrained"


@pytest.fixture(scope="module")
def variants(tmp_path_factory, saves):  # noqa: F811
    """An adopted model saved with variant 'v1' whole and sharded, and the native model with variant 'v1'."""
    root = tmp_path_factory.mktemp("variants")
    model = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    model.save_pretrained(root / "whole", variant="v1")
    model.save_pretrained(root / "sharded", variant="v1", max_shard_size="20KB")
    LeviathanForCausalLM.from_pretrained(saves / "native").save_pretrained(root / "native", variant="v1")
    return root


def _one_line(load, folder, match, **kwargs):
    with pytest.raises(UserError, match=match) as e:
        load(folder, **kwargs)
    assert "\n" not in str(e.value)


def test_a_variant_an_export_lacks_is_named(saves):  # noqa: F811
    """Y736."""
    _one_line(LeviathanForCausalLM.from_pretrained, saves / "native",
              rf"^{NATIVE}: variant='fp16' names no weights in '.*native' \(no model\.fp16\.safetensors or its "
              rf"shards\): it holds weights saved without a variant; leave variant out$", variant="fp16")


@pytest.mark.parametrize("name, load", [("whole", load_adopted), ("sharded", load_adopted),  # Y732, Y739
                                        ("whole", adopted_class(transformers.LlamaForCausalLM).from_pretrained),  # Y740
                                        ("native", LeviathanForCausalLM.from_pretrained)])
def test_another_variant_of_a_save_is_named(variants, name, load):
    _one_line(load, variants / name, rf"variant='v2' names no weights in '.*{name}' \(no model\.v2\.safetensors or "
                                     rf"its shards\): it holds variant 'v1'; pass variant='v1'$", variant="v2")


@pytest.mark.parametrize("value, shown", [("../x", r"'\.\./x'"), (5, r"5 \(of type int\)"), ("", "''")])  # Y737, Y738
@pytest.mark.parametrize("name, load, who", [("whole", load_adopted, "load_adopted"),
                                             ("native", LeviathanForCausalLM.from_pretrained, NATIVE)])
def test_a_variant_that_is_no_name_is_named(saves, value, shown, name, load, who):  # noqa: F811
    _one_line(load, saves / name, rf"^{who.replace('.', '[.]')}: variant must be a plain name such as 'fp16' \(no "
                                  rf"'/', not '\.\.' or empty\), got {shown}; pass the variant the folder's weights "
                                  rf"were saved with", variant=value)


def test_a_variant_save_loaded_without_its_variant_is_named(variants):
    """M9's kind, for LeviathanForCausalLM too (it was told the folder holds no weights)."""
    _one_line(LeviathanForCausalLM.from_pretrained, variants / "native",
              rf"^{NATIVE}: '.*native' holds weights saved with variant='v1' .* and none without; load them with "
              rf"{NATIVE}\('.*native', variant='v1'\)$")


def test_the_variant_a_folder_holds_still_loads(variants):
    for name in ("whole", "sharded"):
        assert load_adopted(variants / name, variant="v1") is not None
    assert LeviathanForCausalLM.from_pretrained(variants / "native", variant="v1") is not None


def test_variant_problem():
    from leviathan.hf.weights_variant import variant_problem

    assert variant_problem(None) is None and variant_problem("fp16") is None
    for bad in ("..", ".", "a/b", "a\\b", "a\0", b"v1", 1.5):
        assert variant_problem(bad) is not None


@pytest.fixture(scope="module")
def two_variants(tmp_path_factory):
    """One adopted model saved with variant 'v1' and then 'v2' into one folder, and a second model (another seed)
    saved with 'v2' into a copy of a 'v1' save (round 31, AA751, AA752)."""
    import shutil

    root = tmp_path_factory.mktemp("two-variants")
    model = adopt(transformers.LlamaConfig(**LLAMA), **GEN)
    model.save_pretrained(root / "both", variant="v1")
    shutil.copytree(root / "both", root / "other")
    model.save_pretrained(root / "both", variant="v2")
    return root, model


def test_a_second_variant_saved_into_a_folder_keeps_the_first_loading(two_variants):
    """AA751: the v2 save rewrote config.json's record to v2 alone; model.v1.safetensors was then refused as added
    after the save. Both load now, each its own weights."""
    import torch

    root, model = two_variants
    for variant in ("v1", "v2"):
        loaded = load_adopted(root / "both", variant=variant)
        assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))


def test_a_variant_of_another_model_is_refused_before_anything_is_written(two_variants, tmp_path):
    """AA751's other side: a model of other settings saved with 'v2' beside a 'v1' save would leave v1 unrecorded."""
    import hashlib

    root, _ = two_variants
    other = adopt(transformers.LlamaConfig(**{**LLAMA, "num_hidden_layers": LLAMA["num_hidden_layers"] + 1}), **GEN)
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "other").iterdir() if p.is_file()}
    # since round 33 (AE299) the settings that differ are named first (save_folder._refuse_other_settings)
    with pytest.raises(UserError, match=r"^save_pretrained: '.*other' holds model\.v1\.safetensors, weights this "
                                        r"save keeps, and its config\.json differs in .*num_hidden_layers.*; nothing "
                                        r"was written; save into another folder, or move model\.v1\.safetensors out"):
        other.save_pretrained(root / "other", variant="v2")
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "other").iterdir() if p.is_file()}
    assert after == before
    load_adopted(root / "other", variant="v1")


def test_a_folder_of_two_variants_names_both(two_variants):
    """AA752: the line named v1 alone (and told to load it, which was then refused)."""
    root, _ = two_variants
    _one_line(load_adopted, root / "both", r"^load_adopted: '.*both' holds weights saved with variant='v1' and "
                                           r"variant='v2' \(save_pretrained\(variant=\.\.\.\)\) and none without; load "
                                           r"one of them with load_adopted\('.*both', variant='v1'\) or "
                                           r"load_adopted\('.*both', variant='v2'\)$")
