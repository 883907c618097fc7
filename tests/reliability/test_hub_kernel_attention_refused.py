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
