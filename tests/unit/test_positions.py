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


def test_check_generation_room_names_the_argument_given_and_the_room_left():
    """Issue 30 round 30 (Y495, Y496, Y517): the line a Hugging Face generate past the positions is refused with."""
    from leviathan.errors import UserError
    from leviathan.positions import check_generation_room

    check_generation_room(64, 64, 3, 61, "g")  # fills the positions: nothing said
    check_generation_room(None, 10**6, 3, None, "g")  # no limit named: nothing to check
    for args, said in (((64, 203, 3, 200), "g: max_new_tokens=200 after the prompt's 3 ids reaches 203 tokens, past "
                                           "the model's 64 positions (max_position_embeddings); pass max_new_tokens "
                                           "<= 61 (or a shorter prompt)"),
                       ((64, 80, 3, None), "g: max_length=80 (the prompt's 3 ids and what is generated) is past the "
                                           "model's 64 positions (max_position_embeddings); pass max_new_tokens <= "
                                           "61, or max_length <= 64"),
                       ((64, 70, 64, 6), "g: the prompt has 64 ids but the model has 64 positions")):
        with pytest.raises(UserError) as caught:
            check_generation_room(*args, "g")
        assert str(caught.value).startswith(said), str(caught.value)
