"""The Python API's argument refusals are the API's classes: ``leviathan.errors.ArgumentValueError`` /
``ArgumentTypeError`` (``UserError`` and still the ``ValueError`` / ``TypeError`` they were), so a caller catching
``UserError`` gets each one line. Issue 30 round 35 (AI156-AI165, AI222, AI224, AI250, AI258, AI352-AI359): the
perplexity evaluator, the tokenizer's encode / decode / encode_batch, ``train()``, ``load_run_config``,
``count_config`` / ``count_model`` and ``bake_adopted``'s tokenizer raised the built-in classes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from leviathan.errors import ArgumentTypeError, ArgumentValueError, UserError


class _Bigram(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(4, 4))

    def forward(self, ids, labels=None):
        return self.table[ids], None


TOKENS = np.array([0, 1, 2, 3, 0, 1, 2])


@pytest.mark.parametrize("args, kwargs, error, said", [
    ((TOKENS, 0, 2), {}, ArgumentValueError, "seq_len must be a positive integer, got 0"),  # AI156
    ((TOKENS[:1], 3, 2), {}, ArgumentValueError, "need at least 2 tokens to predict one, got 1; pass"),  # AI158
    ((TOKENS.astype(np.float32), 3, 2), {}, ArgumentValueError, "tokens must be integer token ids"),  # AI159
    ((TOKENS, 3, 2), {"num_bytes": -5}, ArgumentValueError, "num_bytes must be"),  # AI160
    ((TOKENS, 3, 2), {"num_bytes": float("nan")}, ArgumentValueError, "num_bytes must be"),  # AI165
    ((TOKENS, 3, 2), {"dtype": torch.int8}, ArgumentValueError, "dtype must be None or one of"),  # AI162
], ids=["AI156-seq-len-0", "AI158-one-token", "AI159-float-ids", "AI160-negative-bytes", "AI165-nan-bytes",
        "AI162-int8"])
def test_evaluate_refuses_with_the_api_classes(args, kwargs, error, said):
    from leviathan.eval.perplexity import evaluate

    with pytest.raises(error, match=said.replace("(", r"\(")) as refused:
        evaluate(_Bigram(), *args, **kwargs)
    assert isinstance(refused.value, UserError) and isinstance(refused.value, ValueError)


def test_the_tokenizer_refuses_with_the_api_classes():
    from leviathan.data.tokenizer import train_bpe

    tok = train_bpe(["hello world, hello there. " * 20], 300)
    cases = [(lambda: tok.encode(b"abc"), ArgumentTypeError, "encode takes a str, got bytes"),  # AI352
             (lambda: tok.encode(None), ArgumentTypeError, "encode takes a str, got NoneType"),  # AI353
             (lambda: tok.decode([tok.vocab_size]), ArgumentValueError, "outside this tokenizer's ids"),  # AI354
             (lambda: tok.decode([-1]), ArgumentValueError, "token id -1 is outside"),  # AI355
             (lambda: tok.decode(torch.tensor([[5, 6]])), ArgumentTypeError, r"pass one row of ids"),  # AI357
             (lambda: tok.encode_batch("abc"), ArgumentTypeError, "encode_batch takes a list"),  # AI358
             (lambda: tok.encode_batch(["a"], num_threads=-1), ArgumentValueError, "num_threads must be")]  # AI359
    for call, error, said in cases:
        with pytest.raises(error, match=said):
            call()


def test_train_load_run_config_and_counts_refuse_with_the_api_classes(tmp_path):
    import leviathan
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    with pytest.raises(ArgumentTypeError, match="cfg must be a RunConfig"):  # AI222
        train({"data": {"path": "data"}}, tmp_path / "r")
    with pytest.raises(ArgumentTypeError, match="overrides must be a list"):  # AI224
        load_run_config("tiny", "max_steps=2")
    with pytest.raises(ArgumentTypeError, match="count_config takes a ModelConfig"):  # AI258
        leviathan.count_config("tiny")
    with pytest.raises(ArgumentTypeError, match="count_model takes a built model"):  # AI435
        leviathan.count_model(nn.Linear(3, 3))
    assert not (tmp_path / "r").exists()


def test_saving_a_tokenizer_that_is_no_tokenizer_is_the_api_class(tmp_path):
    """AI250: ``bake_adopted(..., tokenizer=5)`` ended in a plain TypeError with no fix (``export._save_tokenizer``)."""
    from leviathan.hf import export

    with pytest.raises(ArgumentTypeError, match="cannot save tokenizer of type int.*; pass the tokenizer object"):
        export._save_tokenizer(5, tmp_path)
