"""An ``attn_implementation`` naming a kernel on the Hugging Face hub is refused in one line (issue 30 round 29).

W100: ``load_adopted(p, attn_implementation='kernels-community/flash-attn')`` passed ``load_keywords``' check (a ``/``
was left to transformers) and ended in the kernels package's raw "could not verify publisher trust status"; W790: the
same for ``LeviathanForCausalLM.from_pretrained``, transformers' raw "does not support Flash Attention yet". Round 28's
kind (U291: an attention transformers knows the name of that cannot run here): ``load_keywords._check_attention``.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.hf import LeviathanForCausalLM, load_adopted  # noqa: E402

from test_adopted_load_failures_in_one_line import _one_line, saves  # noqa: E402,F401

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("kernel", ["kernels-community/flash-attn", "kernels-community/flash-attn:flash_attn",
                                    "paged|kernels-community/flash-attn"])
@pytest.mark.parametrize("load", [load_adopted, LeviathanForCausalLM.from_pretrained])
def test_a_hub_kernel_is_named_with_the_attentions_that_work(saves, load, kernel):  # noqa: F811
    """W100 (load_adopted), W790 (the project's own model)."""
    name = "whole" if load is load_adopted else "native"
    _one_line(load, saves / name, rf"attn_implementation='{kernel}' names a kernel on the Hugging Face hub, which is "
                                  rf"not loaded here .*pass 'sdpa' or 'eager', or leave it out",
              attn_implementation=kernel)


def test_an_attention_the_config_or_from_native_names_is_checked():
    """Round 31: AA221 (LeviathanForCausalLM(LeviathanConfig(attn_implementation='flash')): transformers' raw
    "Specified `attn_implementation="flash"` is not supported"), AA657 (from_native(m, attn_implementation=
    'flash_attention_2'): its raw "LeviathanForCausalLM does not support Flash Attention 2 yet ... model hub page"),
    and adopt of a config naming one (the same raw ValueError)."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.errors import UserError
    from leviathan.hf import LeviathanConfig, adopt
    from leviathan.hf.export import from_native

    small = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4)
    with pytest.raises(UserError, match=r"^LeviathanForCausalLM\(config\): attn_implementation='flash' is no attention "
                                        r"implementation transformers knows; pass one of 'eager', .*, or leave it out"):
        LeviathanForCausalLM(LeviathanConfig(**small, attn_implementation="flash"))
    native = CausalLM(ModelConfig(**small, max_position_embeddings=64))
    with pytest.raises(UserError, match=r"^from_native: attn_implementation='flash_attention_2' is not one "
                                        r"LeviathanForCausalLM supports; pass one of 'eager', 'sdpa', or leave it out$"):
        from_native(native, attn_implementation="flash_attention_2")
    assert from_native(native, attn_implementation="eager").config._attn_implementation == "eager"
    llama = transformers.LlamaConfig(**small, intermediate_size=64, max_position_embeddings=64,
                                     attn_implementation="flash")
    with pytest.raises(UserError, match=r"^adopt: LlamaConfig: attn_implementation='flash' is no attention"):
        adopt(llama, seed_dim=8, modes=2, knots=8, rank=4)
