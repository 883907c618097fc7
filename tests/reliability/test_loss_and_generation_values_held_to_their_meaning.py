"""The loss, label and generation API checks what its values mean, not only their count or type (issue 30 round 26).

Q83, Q114: ``linear_token_nll`` and ``linear_cross_entropy`` paired hidden states and targets by flat order when only
their element counts agreed (hidden (2, 3, D) with labels (3, 2)); ``CausalLM.token_nll`` and ``bucket_losses`` did
the same. Q85: ``ignore_index=10**20`` was torch's raw OverflowError. Q187: ``LeviathanForCausalLM`` gave a NaN loss
for labels that are all -100, which the native model refuses. Q536: ``bucket_losses`` over no target gave an overall
loss of NaN. Q653: ``generate`` took an ``eos_id`` its model's restricted softmax never samples. Q75:
``ScaledLeviathanGenerator(output_scale=np.float32(4.0))`` was refused as no number, blaming an edited config.json.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from leviathan.errors import ArgumentValueError, UserError


def one_line(call, kind: type = UserError, *words: str) -> str:
    """The one-line error of ``call``, a ``kind``, naming every one of ``words``."""
    with pytest.raises(kind) as caught:
        call()
    message = str(caught.value)
    assert isinstance(caught.value, UserError) and "\n" not in message, message
    assert all(w in message for w in words), message
    return message


@pytest.mark.parametrize("api", ["linear_cross_entropy", "linear_token_nll"])
def test_the_chunked_head_takes_labels_only_of_the_hidden_states_leading_shape(api):
    """Q83, Q114: targets (2, 3) for hidden (6, 8), and labels (3, 2) for hidden (2, 3, 8), were scored by flat order."""
    from leviathan.model import loss

    f = getattr(loss, api)
    torch.manual_seed(0)
    W = torch.randn(10, 8)
    one_line(lambda: f(torch.randn(6, 8), W, torch.randint(0, 10, (2, 3))), ArgumentValueError,
             f"{api}: labels (2, 3) do not match hidden states (6, 8)", "(6,)")
    one_line(lambda: f(torch.randn(2, 3, 8), W, torch.randint(0, 10, (3, 2))), ArgumentValueError,
             "labels (3, 2)", "(2, 3, 8)", "(2, 3)")
    h, y = torch.randn(2, 3, 8), torch.randint(0, 10, (2, 3))
    assert f(h, W, y).shape == (() if api == "linear_cross_entropy" else (2, 3))
    flat = loss.linear_token_nll(h.reshape(6, 8), W, y.reshape(6))
    torch.testing.assert_close(loss.linear_token_nll(h, W, y).reshape(6), flat)


def test_token_nll_takes_targets_of_the_inputs_shape():
    """Q83's kind in ``CausalLM.token_nll`` (what evaluation calls): targets (3, 2) for inputs (2, 3)."""
    from leviathan import CausalLM, ModelConfig

    torch.manual_seed(0)
    model = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4)).eval()
    x = torch.randint(0, 300, (2, 3))
    one_line(lambda: model.token_nll(x, x.reshape(3, 2)), ArgumentValueError,
             "CausalLM.token_nll: targets (3, 2) must have the shape of input_ids (2, 3)")
    assert model.token_nll(x, x).shape == (2, 3)


@pytest.mark.parametrize("ignore_index", [10**20, -10**20, 2**63], ids=["Q85", "negative", "just-past-int64"])
def test_an_ignore_index_past_int64_is_one_line(ignore_index):
    """Q85: ``ignore_index=10**20`` was torch's raw "OverflowError: int too big to convert"."""
    from leviathan.model.loss import linear_cross_entropy, linear_token_nll

    torch.manual_seed(0)
    h, W, y = torch.randn(6, 8), torch.randn(10, 8), torch.randint(0, 10, (6,))
    for f in (linear_cross_entropy, linear_token_nll):
        one_line(lambda: f(h, W, y, ignore_index=ignore_index), ArgumentValueError, "ignore_index", "int64 range",
                 str(ignore_index))
    assert math.isfinite(linear_cross_entropy(h, W, y, ignore_index=2**63 - 1).item())


def test_the_hugging_face_model_refuses_labels_with_no_target_as_the_native_one_does():
    """Q187: labels all -100 gave ``loss tensor(nan)`` without a word (the native CausalLM refuses them, W39); so did
    labels whose only target is each row's first, which Hugging Face's shift drops. With ``num_items_in_batch`` (the
    Trainer's gradient accumulation) such a micro-batch is a loss of 0 and is taken."""
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM

    torch.manual_seed(0)
    model = LeviathanForCausalLM(LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                 num_attention_heads=4, generator_seed_dim=8, generator_modes=2,
                                                 generator_knots=8, generator_rank=4))
    x = torch.randint(0, 300, (1, 8))
    for labels in (torch.full((1, 8), -100), torch.tensor([[5] + [-100] * 7])):
        one_line(lambda: model(x, labels=labels), ArgumentValueError, "labels (1, 8) hold no target",
                 "labels[..., 1:]", "NaN")
    assert model(x, labels=torch.full((1, 8), -100), num_items_in_batch=torch.tensor(4)).loss.item() == 0.0
    assert math.isfinite(model(x, labels=torch.tensor([[-100] * 7 + [5]])).loss.item())


def test_bucket_losses_refuses_no_target_and_losses_of_another_shape():
    """Q536: ``bucket_losses`` of empty losses was overall_loss NaN without a word; losses (2, 3) and targets (3, 2)
    were paired by flat order (Q83's kind)."""
    from leviathan.eval.frequency import bucket_losses, make_buckets

    buckets = make_buckets(np.arange(300, dtype=np.float64) + 1, 5)
    one_line(lambda: bucket_losses(np.zeros(0), np.zeros(0, dtype=np.int64), buckets), UserError,
             "hold no target", "NaN")
    one_line(lambda: bucket_losses(np.ones((2, 3)), np.ones((3, 2), dtype=np.int64), buckets), UserError,
             "losses (2, 3) and targets (3, 2) must align one to one")
    assert bucket_losses(np.ones((2, 3)), np.ones((2, 3), dtype=np.int64), buckets).overall_loss == 1.0


def test_generate_refuses_an_eos_its_restricted_softmax_never_samples():
    """Q653: ``eos_id=200`` for a model that predicts only ids 1, 2, 3 was taken, and could never end a sequence. The
    prompt is input, which any id of the vocabulary may be."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.generation import generate

    torch.manual_seed(0)
    model = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4)).eval()
    model.restrict_output_(torch.tensor([1, 2, 3]))
    one_line(lambda: generate(model, [1, 2], 3, eos_id=200, seed=0), ValueError,
             "eos_id 200 is outside this model's restricted softmax (3 of 300 ids", "eos_id=None")
    one_line(lambda: generate(model, [1, 2], 3, eos_id=np.int64(200), seed=0), ValueError, "eos_id 200")
    out = generate(model, [200, 2], 3, eos_id=3, seed=0)
    assert out.shape[1] <= 5 and set(out[0, 2:].tolist()) <= {1, 2, 3}


@pytest.fixture(scope="module")
def tiny_generator_model():
    """AE351's model: a one-layer leviathan CausalLM of 300 ids (untrained: only refusals are looked at)."""
    from leviathan import CausalLM, ModelConfig

    torch.manual_seed(0)
    return CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                max_position_embeddings=64, embedding="leviathan", generator_seed_dim=8,
                                generator_modes=2, generator_knots=8, generator_rank=4)).eval()


@pytest.mark.parametrize("args, kwargs, kind, words", [
    ((torch.tensor([5, 6, 7]), 2), {"top_p": np.float32(1.5)}, ValueError, ("top_p must be", "or top_p=None")),
    ((torch.tensor([5, 6, 7]), 2), {"top_k": 0}, ValueError, ("top_k must be", "or top_k=None to keep every id")),
    ((torch.tensor([5, 6, 7]), 2), {"eos_id": 400}, ValueError, ("eos_id must be a token id in [0, 300)",
                                                                  "pass the tokenizer's end-of-text id")),
    ((torch.tensor([5, 6, 7]), 2), {"seed": -1}, ValueError, ("seed: must be an integer", "or seed=None")),
    ((torch.tensor([], dtype=torch.long), 2), {}, ValueError, ("the prompt is empty; give at least one token",)),
    (([[5, 6], [7]], 2), {}, ValueError, ("must have equal lengths", "pad them")),
    (([5.0, 6.0], 2), {}, TypeError, ("prompt_ids must be integer token ids", "got 5.0; pass the ids")),
    ((torch.tensor([5, 6, 7]), -1), {}, ValueError, ("max_new_tokens must be a whole number >= 0", "; pass the")),
], ids=["AE351-top_p", "AE352-top_k", "AE353-eos_id", "AE354-seed", "AE356-empty", "AE358-ragged", "AE362-floats",
        "max_new_tokens"])
def test_generate_refuses_with_the_apis_class_and_a_fix(tiny_generator_model, args, kwargs, kind, words):
    """Round 33 (AE351-AE354, AE356, AE358, AE362): ``leviathan.generation.generate`` raised plain ValueError /
    TypeError, most without a fix. Each is the API's refusal class now (ArgumentValueError / ArgumentTypeError, a
    UserError), still the ValueError / TypeError callers catch, naming the argument and the fix."""
    from leviathan.generation import generate

    message = one_line(lambda: generate(tiny_generator_model, *args, **kwargs), kind, *words)
    assert "; " in message, message


def test_the_samplers_and_decoders_refusals_are_the_apis_class(tiny_generator_model):
    """Round 33 (AE351's kind, the siblings in the module): ``sample_next_token``, ``Decoder`` and the logits checks
    raised plain ValueError / TypeError too."""
    from leviathan.generation import Decoder, sample_next_token

    one_line(lambda: sample_next_token(torch.randn(1, 300), top_p=2.0), ValueError, "top_p must be")
    one_line(lambda: sample_next_token(torch.full((1, 300), float("nan"))), ValueError, "the logits hold NaN")
    one_line(lambda: sample_next_token(torch.randn(1, 0)), ValueError, "logits must hold one score per id")
    one_line(lambda: sample_next_token(torch.randn(1, 300), generator=5), TypeError, "generator must be")
    one_line(lambda: Decoder(tiny_generator_model, top_k=-3), ValueError, "top_k must be")
    decoder = Decoder(tiny_generator_model, temperature=0)
    one_line(lambda: decoder.pick(torch.randn(1, 300)), ValueError, "Decoder.pick takes the model's logits")
    one_line(lambda: decoder.prefill(torch.zeros(1, 0, dtype=torch.long)), ValueError, "the prompt is empty")
    decoder.prefill(torch.tensor([[5, 6]]))
    one_line(lambda: decoder.step([4]), TypeError, "Decoder.step takes the ids just chosen as a tensor")


def test_stop_at_eot_outside_a_restricted_softmax_is_named_in_the_flags_words():
    """Round 33 (carried): ``leviathan generate --stop-at-eot`` on a model whose restricted softmax never samples the
    end-of-text id was refused with generate()'s fix, "or eos_id=None", an argument the command line has not.
    ``check_eos_predicted(..., option)``, asked by the verb before sampling, names the flag."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.generation import check_eos_predicted

    model = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4)).eval()
    model.restrict_output_(torch.tensor([1, 2, 3]))
    message = one_line(lambda: check_eos_predicted(model, 299, "--stop-at-eot"), ValueError,
                       "--stop-at-eot: the end-of-text id 299 is outside this model's restricted softmax",
                       "leave out --stop-at-eot")
    assert "eos_id" not in message, message


def test_an_output_scale_is_any_real_number_in_range_and_its_refusal_names_where_it_came_from():
    """Q75: ``output_scale=np.float32(4.0)`` was refused as no number, its fix naming an edited config.json, which a
    constructor call has none of; a config.json's bad scale still names config.json."""
    import transformers

    from leviathan.hf import ScaledLeviathanGenerator, adopt

    small = dict(seed_dim=8, modes=2, knots=8, rank=4)
    for scale in (np.float32(4.0), np.float64(4.0), np.int64(4)):
        g = ScaledLeviathanGenerator(300, 16, output_scale=scale, **small)
        assert g.output_scale == 4.0 and type(g.output_scale) is float
    message = one_line(lambda: ScaledLeviathanGenerator(300, 16, output_scale=np.float32("nan"), **small), UserError,
                       "output_scale must be a finite number > 0", "np.float32(nan)", "pass the scale")
    assert "config.json" not in message
    one_line(lambda: ScaledLeviathanGenerator(300, 16, output_scale=np.bool_(True), **small), UserError, "np.True_")
    model = adopt(transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                           num_attention_heads=4), **small)
    config = copy.deepcopy(model.config)
    config.leviathan_generator = dict(config.leviathan_generator, output_scale=float("nan"))
    one_line(lambda: type(model)(config), UserError, "got nan", "config.json's leviathan_generator was edited")
