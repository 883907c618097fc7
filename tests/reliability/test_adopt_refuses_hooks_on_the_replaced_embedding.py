"""``adopt`` refuses a model whose input embedding carries a hook (issue 30 round 28, U221).

The hook lives on the ``nn.Embedding`` adopt replaces, and cannot be carried over to the generator: a forward hook
multiplying the embedding by 0 was dropped without a word and the logits changed. One line naming the hook count and
the fix (remove it, or register it after adopt on ``model.get_input_embeddings()``); the model is left as it was.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402
from test_adopt_embedding_more_than_a_lookup import GEN, _llama  # noqa: E402

pytestmark = pytest.mark.reliability


def test_a_forward_hook_on_the_embedding_is_refused_then_taken_once_removed():
    model = _llama()
    handle = model.model.embed_tokens.register_forward_hook(lambda module, args, out: out * 0)
    with pytest.raises(UserError, match=r"^LlamaForCausalLM's input embedding has 1 forward hook registered on it: "
                                        r"adopt replaces that module.*remove the hook .*or register it after adopt on "
                                        r"model\.get_input_embeddings\(\)") as e:
        adopt(model, **GEN)
    assert "\n" not in str(e.value) and type(model).__name__ == "LlamaForCausalLM"
    handle.remove()  # the fix the line names
    assert type(adopt(model, **GEN)).__name__ == "LeviathanLlamaForCausalLM"


def test_pre_hooks_and_enable_input_require_grads_are_counted():
    model = _llama()
    model.model.embed_tokens.register_forward_pre_hook(lambda module, args: None)
    model.model.embed_tokens.register_forward_pre_hook(lambda module, args: None)
    model.enable_input_require_grads()  # transformers' own forward hook on the input embedding
    with pytest.raises(UserError, match=r"has 1 forward hook, 2 forward pre-hooks registered on it"):
        adopt(model, **GEN)
