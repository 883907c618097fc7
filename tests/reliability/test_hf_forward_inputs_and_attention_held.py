"""Both Hugging Face classes hold a forward's mask, cache_position, meta arguments and ids, and the attention
implementation and device map they are given, to one rule each (issue 30 round 32).

A 3-D attention mask (2, 1, 9) was taken by an adopted model without a word and refused by LeviathanForCausalLM in a
plain ValueError about static caches (AC171, AC207); ``cache_position`` past max_position_embeddings (which neither
class reads: transformers 5 counts positions from the cache) was taken by both (AC173, AC209); ``logits_to_keep`` on
the meta device by LeviathanForCausalLM (AC186); bool ids were a plain TypeError there (AC204). An attention
implementation set on the config after the load ran (AC239), and ``set_attn_implementation('flash_attention_2')`` was
transformers' raw "does not support Flash Attention 2 yet" (AC240). A device_map key that is a number was
transformers' raw AttributeError (AC244), and numpy's integers in max_memory, which accelerate takes, were refused as
no size (AC227). Each is one UserError line now, naming the argument and the fix.
"""

from __future__ import annotations


import numpy as np
import pytest
import torch

from hf_pair_support import refused as _refused
from hf_pair_support import tiny_pair

pytestmark = [pytest.mark.reliability]

V = 60  # the pair of test_hf_forward_switches_ids_and_labels
T = 9


@pytest.fixture(scope="module")
def models():
    return dict(tiny_pair(V))


def test_a_mask_of_three_dims_is_refused_by_both_classes_in_one_line(models):
    """AC171 (taken by the adopted class), AC207 (a plain ValueError about static caches)."""
    x = torch.randint(0, V, (2, T))
    lines = {name: _refused(lambda: model(x, attention_mask=torch.ones(2, 1, T)),
                            f"{name}.forward: attention_mask must be 2-D (batch, keys", ValueError)
             for name, model in models.items()}
    first, second = (line.split(": ", 1)[1] for line in lines.values())
    assert first == second  # the same words after the class's name
    for model in models.values():
        assert model(x, attention_mask=torch.ones(2, T)).logits.shape == (2, T, V)


def test_cache_position_is_taken_only_as_the_positions_the_model_counts(models):
    """AC173, AC209: positions 20..28 of a 32-position model (and any other than the counted ones) were taken and
    ignored; the counted ones (0..8, and 5..8 after a cached prefix of 5) are still taken."""
    x = torch.randint(0, V, (2, T))
    for name, model in models.items():
        _refused(lambda: model(x, cache_position=torch.arange(28, 28 + T)),
                 f"{name}.forward: cache_position holds positions 28..36, but the model uses the positions it counts "
                 f"(0..8)", ValueError)
        _refused(lambda: model(x, cache_position=torch.arange(T, dtype=torch.float32)),
                 f"{name}.forward: cache_position must be a 1-D integer tensor", TypeError)
        assert model(x, cache_position=torch.arange(T)).logits.shape == (2, T, V)
        prefix = model(x[:, :5], use_cache=True)
        assert model(x[:, 5:], cache=prefix.past_key_values,
                     cache_position=torch.arange(5, T)).logits.shape == (2, T - 5, V)


def test_meta_arguments_and_bool_ids_are_user_errors_in_both_classes(models):
    """AC186 (logits_to_keep on meta: 2 positions of unknown choice), AC204 (bool ids: a plain TypeError)."""
    x = torch.randint(0, V, (2, T))
    for name, model in models.items():
        _refused(lambda: model(x, logits_to_keep=torch.tensor([1, 2], device="meta")),
                 f"{name}.forward: logits_to_keep is on the meta device")
        _refused(lambda: model(x.bool()), "token ids must be an integer tensor (torch.long), got torch.bool",
                 TypeError)


def test_an_attention_implementation_set_after_the_load_is_checked(models):
    """AC239 ('bogus' on the loaded model's config ran), AC240 (``set_attn_implementation('flash_attention_2')``:
    transformers' raw ValueError); 'eager' and 'sdpa' are still taken both ways."""
    x = torch.randint(0, V, (1, T))
    for name, model in models.items():
        model.config._attn_implementation = "bogus"
        try:
            _refused(lambda: model(x), f"{name}.forward (its config's _attn_implementation, set after the model was "
                                       f"made): attn_implementation='bogus' is no attention implementation")
        finally:
            model.config._attn_implementation = "sdpa"
        said = (f"{name}.set_attn_implementation: attn_implementation='flash_attention_2' "
                + ("is not one LeviathanForCausalLM supports" if name == "LeviathanForCausalLM" else ""))
        _refused(lambda: model.set_attn_implementation("flash_attention_2"), said)
        for implementation in ("eager", "sdpa"):
            model.set_attn_implementation(implementation)
            assert model.config._attn_implementation == implementation
            assert model(x).logits.shape == (1, T, V)


def test_a_device_map_key_that_is_no_name_and_numpy_memory(tmp_path, models):
    """AC244 (``device_map={..., 5: 'cpu'}``: transformers' raw AttributeError, both loaders), AC227 (``max_memory=
    {'cpu': np.int64(10**9)}``, a byte count accelerate takes, refused as no size)."""
    from leviathan.hf import LeviathanForCausalLM, load_adopted

    folders = {}
    for name, model in models.items():
        model.save_pretrained(tmp_path / name)
        folders[name] = tmp_path / name
    loaders = {"from_pretrained": (LeviathanForCausalLM.from_pretrained, folders["LeviathanForCausalLM"]),
               "load_adopted": (load_adopted, next(f for n, f in folders.items() if n != "LeviathanForCausalLM"))}
    for who, (load, folder) in loaders.items():
        _refused(lambda: load(folder, device_map={"model": "cpu", "lm_head": "cpu", 5: "cpu"}),
                 f"{who}: device_map's key 5 is no module's name")
        _refused(lambda: load(folder, device_map={"model": "cpu", "lm_head": "cpu", None: "cpu"}),  # round 33, AE189
                 f"{who}: device_map's key None is no module's name")
        loaded = load(folder, device_map="auto", max_memory={"cpu": np.int64(10**9)})
        assert loaded(torch.randint(0, V, (1, T))).logits.shape == (1, T, V)


def test_a_custom_mask_is_held_to_the_attention_shape(models):
    """Round 33, AE170: a 4-D mask (2, 1, 9, 5) for 9 ids (and other sizes the attention cannot broadcast) was torch's
    raw "The size of tensor a (9) must match the size of tensor b (5)" from inside transformers' attention; the
    shapes transformers reads, (2, 1, 9, 9), one mask for all queries (1, 1, 1, 9) and one per head, are still taken.
    (LeviathanForCausalLM refuses every 4-D mask, AC207.)"""
    name, model = next((n, m) for n, m in models.items() if n != "LeviathanForCausalLM")
    x = torch.randint(0, V, (2, T))
    for shape in [(2, 1, T, 5), (2, 1, T, T + 3), (2, 1, 7, T), (3, 1, T, T)]:
        _refused(lambda: model(x, attention_mask=torch.ones(shape, dtype=torch.bool)),
                 f"{name}.forward: a 4-D attention_mask must broadcast to (batch, heads, queries, keys) = (2, 2, 9, 9)",
                 ValueError)
    for shape in [(2, 1, T, T), (1, 1, 1, T), (1, 2, T, T)]:
        assert model(x, attention_mask=torch.ones(shape, dtype=torch.bool)).logits.shape == (2, T, V)


def test_flex_attention_is_refused_where_its_backward_would_be_needed_on_the_cpu(models):
    """Round 33, AE187: set_attn_implementation('flex_attention') is taken on the CPU, where it runs under no_grad,
    and a forward with grad on was torch's raw "FlexAttention does not support backward on CPU"."""
    from transformers.utils import is_torch_flex_attn_available

    if not is_torch_flex_attn_available():
        pytest.skip("this torch has no flex_attention")
    name, model = next((n, m) for n, m in models.items() if n != "LeviathanForCausalLM")
    x = torch.randint(0, V, (1, T))
    model.set_attn_implementation("flex_attention")
    try:
        with torch.no_grad():
            assert model(x).logits.shape == (1, T, V)
        _refused(lambda: model(x), f"{name}.forward: attn_implementation 'flex_attention' runs no backward on the "
                                   f"CPU")
    finally:
        model.set_attn_implementation("sdpa")
