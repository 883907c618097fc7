"""positions.py: the one reader of a model's number of positions, and how a prompt and new tokens fit them."""

import types

import pytest

from leviathan.positions import fit_positions, model_positions


def test_model_positions_reads_each_naming_and_refuses_what_no_model_has():
    from transformers import GPT2Config, LlamaConfig

    assert model_positions(GPT2Config(n_positions=77)) == 77  # GPT-2 names it n_positions
    assert model_positions(LlamaConfig(max_position_embeddings=99)) == 99
    assert model_positions(types.SimpleNamespace(config=LlamaConfig(max_position_embeddings=12))) == 12  # a model
    assert model_positions(types.SimpleNamespace()) is None
    assert model_positions(types.SimpleNamespace(max_position_embeddings=True)) is None  # a bool is no limit
    assert model_positions(types.SimpleNamespace(max_position_embeddings=64.0)) is None


@pytest.mark.parametrize("prompt, new, limit, expected", [
    (900, 500, 1024, (900, 124, 1)),  # the new tokens cropped
    (2000, 10, 1024, (1023, 1, 2)),  # the prompt cropped to its last limit-1, one new fits
    (10, 5, 1024, (10, 5, 0)),  # everything fits, no note
])
def test_fit_positions_keeps_what_fits_and_says_each_limit(prompt, new, limit, expected):
    keep, fits, notes = fit_positions(prompt, new, limit)
    assert (keep, fits, len(notes)) == expected
    assert keep + fits <= limit
