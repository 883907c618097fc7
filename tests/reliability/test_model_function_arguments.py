"""Arguments of the model's lower-level public functions are checked (issue 30 round 22).

``LeviathanGenerator.bake``/``embed_unique``, ``linear_cross_entropy``/``linear_token_nll``, ``presets.preset`` and
``flops_per_token`` took their arguments unchecked: torch's own errors (``torch.cat(): expected a non-empty list``,
``mat1 and mat2 shapes cannot be multiplied``), a bool taken as 1, ``chunk=0`` read as unset, FLOPs for sequences the
model cannot take. Each is now one line naming the argument, the value and the valid range: a ``UserError`` (the CLI
prints it as one line) that is still the TypeError / ValueError torch's convention expects.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from leviathan import LeviathanGenerator, ModelConfig, flops_per_token
from leviathan.errors import UserError
from leviathan.model.loss import linear_cross_entropy, linear_token_nll
from leviathan.presets import preset


def refused(call, kind: type, *words: str) -> str:
    """The one-line UserError of ``call``, which is also a ``kind``; it names every one of ``words``."""
    with pytest.raises(UserError) as caught:
        call()
    message = str(caught.value)
    assert isinstance(caught.value, kind), type(caught.value).__mro__
    assert "\n" not in message and all(w in message for w in words), message
    return message


@pytest.fixture(scope="module")
def generator() -> LeviathanGenerator:
    torch.manual_seed(0)
    return LeviathanGenerator(300, 32, seed_dim=8, modes=2, knots=4, rank=4)  # base 7: capacity 343


@pytest.mark.parametrize("num_rows, kind, shown", [(0, ValueError, "got 0"), (-1, ValueError, "got -1"),
                                                   (True, TypeError, "bool True"), (2.5, TypeError, "float 2.5"),
                                                   (344, ValueError, "got 344")],
                         ids=["S225-zero", "S235-negative", "S236-bool", "S237-float", "past-capacity"])
def test_bake_refuses_a_number_of_rows_that_is_not_a_whole_number_in_range(generator, num_rows, kind, shown):
    """S225, S235-S237: ``bake(0)``, ``bake(-1)`` and ``bake(2.5)`` ended in torch's errors, ``bake(True)`` baked one
    row without a word."""
    refused(lambda: generator.bake(num_rows), kind, "LeviathanGenerator.bake: num_rows", "[1, 343]", shown)
    assert generator.bake(343).shape == (343, 32) and generator.bake().shape == (300, 32)


@pytest.mark.parametrize("batch_size, kind, shown", [(0, ValueError, "got 0"), (-3, ValueError, "got -3"),
                                                     (True, TypeError, "bool True")],
                         ids=["S480-zero", "S481-negative", "bool"])
def test_bake_refuses_a_batch_size_that_is_not_a_positive_whole_number(generator, batch_size, kind, shown):
    """S480, S481: ``bake(batch_size=0)`` was range()'s "arg 3 must not be zero", -3 torch.cat's error."""
    refused(lambda: generator.bake(batch_size=batch_size), kind, "batch_size", ">= 1", shown)
    torch.testing.assert_close(generator.bake(batch_size=7), generator.bake(), rtol=1e-5, atol=1e-7)


def test_embed_unique_takes_one_list_of_integer_ids_in_range(generator):
    """S477: ``embed_unique(torch.tensor([[1, 2]]))`` ended in torch's "input has to be 1D or 2D Tensor"; an id past
    b^k aliased another id's digits without a word, and float ids were truncated."""
    refused(lambda: generator.embed_unique(torch.tensor([[1, 2]])), ValueError, "1-D", "(1, 2)")
    refused(lambda: generator.embed_unique(torch.tensor([1.0, 2.0])), TypeError, "integer tensor", "float32")
    refused(lambda: generator.embed_unique(torch.tensor([1, 400])), ValueError, "token id 400", "[0, 343)")
    refused(lambda: generator.embed_unique(torch.tensor([-1])), ValueError, "token id -1")
    refused(lambda: generator.embed_unique([1, 2]), TypeError, "torch.tensor(ids)")
    ids = torch.tensor([3, 1, 342])
    torch.testing.assert_close(generator.embed_unique(ids), generator(ids), rtol=1e-5, atol=1e-7)


def head_inputs():
    torch.manual_seed(0)
    return torch.randn(4, 8), torch.randn(10, 8), torch.tensor([1, 2, 3, 4])


@pytest.mark.parametrize("api", [linear_cross_entropy, linear_token_nll], ids=["loss", "token_nll"])
def test_the_chunked_head_checks_its_arguments(api):
    """S517 a label equal to V, S519 a (D, V) head, S520 float labels, S523 float64 hidden with a float32 head: torch's
    errors; S524 ``chunk=0`` taken as unset without a word; a bool is no ignore_index."""
    h, W, y = head_inputs()
    refused(lambda: api(h, W, torch.tensor([1, 2, 3, 10])), ValueError, "label 10", "[0, 10)")
    refused(lambda: api(h, W, torch.tensor([1, -5, 3, 4])), ValueError, "label -5")
    refused(lambda: api(h, W.T, y), ValueError, "weight", "(V, 8)", "(8, 10)", "weight.T")
    refused(lambda: api(h, W, y.float()), TypeError, "labels", "integer tensor", "float32")
    refused(lambda: api(h.double(), W, y), TypeError, "float64", "float32", "dtype")
    refused(lambda: api(h, W, y[:3]), ValueError, "labels (3,)", "(4, 8)")
    refused(lambda: api(h, W, y, chunk=0), ValueError, "chunk", ">= 1", "got 0")
    refused(lambda: api(h, W, y, chunk=True), TypeError, "chunk", "bool True")
    refused(lambda: api(h, W, y, ignore_index=True), TypeError, "ignore_index", "bool True")
    refused(lambda: api(h.long(), W, y), TypeError, "hidden", "floating-point")


def test_ignore_index_is_honoured_by_the_label_check():
    """The label check leaves ``ignore_index`` out, whatever it is (V itself here), as ``F.cross_entropy`` does."""
    h, W, _ = head_inputs()
    y = torch.tensor([1, 10, 3, 10])
    plain = F.cross_entropy(F.linear(h, W), y, ignore_index=10)
    torch.testing.assert_close(linear_cross_entropy(h, W, y, ignore_index=10, chunk=3), plain)
    torch.testing.assert_close(linear_cross_entropy(h, W, torch.tensor([1, -100, 3, 4])),
                               F.cross_entropy(F.linear(h, W), torch.tensor([1, -100, 3, 4])))
    assert linear_token_nll(h, W, y, ignore_index=10)[1] == 0


def test_a_preset_name_must_be_text_and_an_unknown_one_lists_the_known():
    """S596: ``leviathan.presets.preset(5)`` ended in difflib's "'int' object is not iterable"."""
    refused(lambda: preset(5), TypeError, "preset name must be text", "int 5", "cpu-tiny")
    refused(lambda: preset(None), TypeError, "NoneType", "cpu-tiny")
    refused(lambda: preset("cpu-tinny"), UserError, "did you mean 'cpu-tiny'", "paper-60m")
    assert preset("cpu-tiny").hidden_size == 64


def test_flops_per_token_refuses_a_sequence_past_the_models_positions():
    """S467: ``flops_per_token(C, seq_len=10**6)`` for a model of 64 positions returned FLOPs without a word."""
    cfg = ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      max_position_embeddings=64, embedding="dense_untied")
    refused(lambda: flops_per_token(cfg, seq_len=10**6), ValueError, "seq_len", "max_position_embeddings (64)",
            "1000000")
    refused(lambda: flops_per_token(cfg, seq_len=65), ValueError, "seq_len")
    assert flops_per_token(cfg, seq_len=64) == flops_per_token(cfg)


def walk_calls():
    """(call, kind, words) for the model's other public functions, walked after the ids (the kind of round 22)."""
    from leviathan.model.accounting import format_table
    from leviathan.model.config import min_base
    from leviathan.model.digits import from_digits, to_digits
    from leviathan.model.generator import probe_ids
    from leviathan.model.generator_size import smallest_base
    from leviathan.model.llama import count_params
    from leviathan.model.loss import chunk_positions
    from leviathan.model.output_norm import OutputNorm
    from leviathan.model.spline_op import spline_product

    u, S = torch.rand(3, 2, 4), torch.rand(2, 4, 5, 3)
    return {
        "chunk_positions-zero": (lambda: chunk_positions(0), ValueError, ("vocab_size", ">= 1")),
        "chunk_positions-bool": (lambda: chunk_positions(True), TypeError, ("vocab_size", "bool True")),
        "chunk_positions-elements": (lambda: chunk_positions(10, 0), ValueError, ("chunk_elements",)),
        "probe_ids-negative": (lambda: probe_ids(-1), ValueError, ("num_ids", "got -1")),
        "probe_ids-bool": (lambda: probe_ids(True), TypeError, ("num_ids", "bool True")),
        "smallest_base-k-negative-hung": (lambda: smallest_base(300, -1), ValueError, ("k", "[1, 64]", "got -1")),
        "min_base-bool": (lambda: min_base(True, 3), ValueError, ("vocab_size", "True")),
        "to_digits-base-1": (lambda: to_digits(torch.tensor([0]), 1, 3), ValueError, ("base", ">= 2")),
        "to_digits-k-0": (lambda: to_digits(torch.tensor([0]), 5, 0), ValueError, ("k", "got 0")),
        "from_digits-float": (lambda: from_digits(torch.tensor([[1.5, 2.0]]), 5), TypeError, ("float32",)),
        "from_digits-base-bool": (lambda: from_digits(torch.tensor([[1, 2]]), True), TypeError, ("base", "bool")),
        "spline_product-2d-u": (lambda: spline_product(torch.rand(3, 4), S), ValueError, ("(3, 4)", "(U, M, d_s)")),
        "spline_product-degree-bool": (lambda: spline_product(u, S, True), ValueError, ("degree", "True")),
        "spline_product-int-u": (lambda: spline_product(u.long(), S), TypeError, ("u", "floating-point")),
        "OutputNorm-zero-rows": (lambda: OutputNorm(0, 0.02), ValueError, ("hidden_size", "got 0")),
        "OutputNorm-negative-gain": (lambda: OutputNorm(8, -1.0), UserError, ("init_gain", "-1.0")),
        "OutputNorm-nan-eps": (lambda: OutputNorm(8, 0.02, float("nan")), UserError, ("eps", "nan")),
        "format_table-text": (lambda: format_table("x"), TypeError, ("(name, ModelConfig) pairs",)),
        "count_params-text": (lambda: count_params("x"), TypeError, ("nn.Module", "str")),
    }


@pytest.mark.parametrize("case", list(walk_calls()))
def test_the_models_other_public_functions_check_their_arguments(case):
    """The kind behind round 22's ids, walked through the model's other public functions: each was a raw error
    (unpacking, torch.arange), a silent acceptance (a bool as 1, a 2-D u, ``degree=True``, a negative gain) or, for
    ``smallest_base(300, -1)``, a loop that never ended."""
    call, kind, words = walk_calls()[case]
    refused(call, kind, *words)


def test_the_generators_steps_and_the_models_scoring_check_their_inputs(generator):
    """``seed`` took a 2-D tensor to torch's error and an id past b^k silently; ``modes_u`` another width to torch's
    matmul error; ``reset_parameters('no')`` read as true; ``restrict_output_`` truncated float ids and took True as
    id 1; ``token_nll`` of a restricted model ended in torch's IndexError for a target past V."""
    from leviathan import CausalLM

    refused(lambda: generator.seed(torch.tensor([[1, 2]])), ValueError, "LeviathanGenerator.seed", "1-D")
    refused(lambda: generator.seed(torch.tensor([400])), ValueError, "token id 400")
    refused(lambda: generator.modes_u(torch.rand(3, 5)), ValueError, "modes_u", "(U, 8)", "(3, 5)")
    with pytest.raises(TypeError, match="calibrate must be True or False"):
        generator.reset_parameters("no")
    cfg = ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      max_position_embeddings=16, embedding="dense_untied")
    model = CausalLM(cfg)
    refused(lambda: model.restrict_output_(torch.tensor([1.5, 2.7])), TypeError, "restrict_output_", "float32")
    refused(lambda: model.restrict_output_(True), TypeError, "restrict_output_", "bool True")
    with pytest.raises(ValueError, match="got 0 ids"):  # an empty list (float to torch) keeps its own line
        model.restrict_output_([])
    model.restrict_output_([1, 2, 3, 4])
    ids = torch.tensor([[1, 2]])
    refused(lambda: model.token_nll(ids, torch.tensor([[3, 400]])), ValueError, "label 400", "[0, 300)")
    refused(lambda: model.token_nll(ids, torch.tensor([[3.0, 4.0]])), TypeError, "token_nll: targets", "float32")
    assert model.token_nll(ids, torch.tensor([[3, 4]])).shape == (1, 2)


def test_the_basis_functions_and_the_embedding_builder_check_their_arguments():
    """``dense_basis(u, 1)`` gave every u the basis [1], 2.5 knots a grid of three, ``window(u, 8, True)`` ran as
    degree 1, and ``build_input_embedding('cpu-tiny')`` ended in an AttributeError."""
    from leviathan.model.bspline import dense_basis, window
    from leviathan.model.embedding import build_input_embedding

    u = torch.rand(3)
    refused(lambda: dense_basis(u, 1), ValueError, "dense_basis: num_knots", ">= 2", "got 1")
    refused(lambda: dense_basis(u, 2.5), TypeError, "num_knots", "float 2.5")
    refused(lambda: window(u, 8, True), ValueError, "window: degree", "True")
    refused(lambda: build_input_embedding("cpu-tiny"), TypeError, "ModelConfig", "str")
    assert dense_basis(u, 8).shape == (3, 8) and window(u, 8)[1].shape == (3, 3)


def test_a_compiled_model_still_runs_the_chunked_loss_eagerly():
    """``CausalLM.forward`` now calls ``chunked_cross_entropy`` (its labels checked once, by ``check_labels``) instead
    of the checked ``linear_cross_entropy``: it must stay out of compiled graphs as that one is (a data-dependent chunk
    loop), and give the eager loss. aot_eager: dynamo and AOTAutograd without a C++ build."""
    import torch._dynamo

    from leviathan import CausalLM

    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      max_position_embeddings=16, embedding="dense_untied")
    model = CausalLM(cfg)
    ids, labels = torch.randint(0, 300, (2, 8)), torch.randint(0, 300, (2, 8))
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model)(ids, labels=labels, return_logits=False)
    assert any("chunked_cross_entropy" in str(b.reason) for b in explained.break_reasons)
    _, compiled = torch.compile(model, backend="aot_eager")(ids, labels=labels, return_logits=False)
    torch.testing.assert_close(compiled, model(ids, labels=labels, return_logits=False)[1])
