"""Both of leviathan's Hugging Face classes hold a forward's switches, an adopted model's ids, mask and labels, and
``generate``'s token ids to the rules leviathan's own models follow (issue 30 round 31).

Switches: ``use_cache='no'`` and ``return_dict='no'`` were read as true by both forwards, an adopted model's
``output_hidden_states=1`` returned the hidden states (AA634-AA637, AA639), and LeviathanForCausalLM called
``output_hidden_states=1`` "output_hidden_states=True is not supported" (AA638). An adopted model's forward took float
labels and labels past the vocabulary to torch's raw RuntimeError / IndexError (AA632, AA633), ids past the
vocabulary (below the generator's capacity b^k) without a word, in ``generate`` too (AA625), and an attention_mask of
5 positions for 9 ids the same (AA630). ``generate(eos_token_id=400)`` on 300 ids, and ``pad_token_id=-1``, ran to
the end without a word in both classes (AA623, AA624, AA645). Each is one line now, a UserError naming the argument.
"""

from __future__ import annotations

import pytest
import torch

from hf_pair_support import refused as _refused
from hf_pair_support import tiny_pair

pytestmark = [pytest.mark.reliability]

V = 60  # the generator has 4^3 = 64 ids: 60 .. 63 embed without a word (AA625)


@pytest.fixture(scope="module")
def models():
    pair = dict(tiny_pair(V))
    assert pair[[*pair][1]].get_input_embeddings().capacity > V  # ids V .. b^k - 1 have embeddings: AA625's room
    return pair


@pytest.mark.parametrize("switch, value", [("use_cache", "no"), ("return_dict", "no"), ("output_hidden_states", 1),
                                           ("output_attentions", "yes")])  # AA634-AA639
def test_a_forward_switch_that_is_no_switch_isrefused(models, switch, value):
    x = torch.randint(0, V, (2, 5))
    for name, model in models.items():
        _refused(lambda: model(x, **{switch: value}),
                 f"{name}.forward: {switch} must be True or False, got {value!r}; pass {switch}=True", TypeError)
        out = model(x, **{"use_cache": False, switch: False})  # False and None are taken
        assert (isinstance(out, tuple) if switch == "return_dict" else out.logits.shape == (2, 5, V))


def test_an_adopted_forward_holds_labels_ids_and_mask_to_leviathans_rules(models):
    name, adopted = [*models.items()][1]
    x = torch.randint(0, V, (2, 9))
    _refused(lambda: adopted(x, labels=x.float()), f"{name}.forward: labels must be an integer tensor (torch.long) "
                                                   f"of target ids, got torch.float32", TypeError)  # AA632
    _refused(lambda: adopted(x, labels=torch.full_like(x, V)), f"label {V} is outside [0, {V})", ValueError)  # AA633
    _refused(lambda: adopted(x, labels=x[:, :4]), f"{name}.forward: labels must have the shape of input_ids (2, 9)")
    _refused(lambda: adopted(torch.full((1, 3), V)), f"input id {V} is outside [0, {V}) (the model's vocab_size)",
             ValueError)  # AA625
    _refused(lambda: adopted(x, attention_mask=torch.ones(2, 5, dtype=torch.long)),
             "attention_mask must have shape (2, 9) (1 for each key to attend, cached ones first: the input's 2 "
             "sequence(s) of 9 ids after 0 cached position(s)), got (2, 5)", ValueError)  # AA630
    with torch.no_grad():  # what is right still runs: labels, a mask over a cached prefix
        assert adopted(x, labels=x).loss.isfinite()
        first = adopted(x[:, :6], attention_mask=torch.ones(2, 6, dtype=torch.long), use_cache=True)
        cache = first.cache if hasattr(first, "cache") else first.past_key_values  # transformers 5 renamed it
        more = adopted(x[:, 6:], attention_mask=torch.ones(2, 9, dtype=torch.long), cache=cache)
        assert more.logits.shape == (2, 3, V)


def test_generate_refuses_a_token_id_the_model_does_not_have(models):
    prompt = torch.randint(0, V, (2, 3))
    for name, model in models.items():
        for key, value in (("eos_token_id", V + 100), ("pad_token_id", -1), ("eos_token_id", [1, V])):  # AA623-AA645
            _refused(lambda: model.generate(prompt, max_new_tokens=2, do_sample=False, **{key: value}),
                     f"{name}.generate: {key} {value if not isinstance(value, list) else value[1]} is not a token id "
                     f"of this model (whole numbers 0 to {V - 1}, its vocabulary of {V})", ValueError)
        assert model.generate(prompt, max_new_tokens=2, do_sample=False, eos_token_id=V - 1, pad_token_id=0,
                              attention_mask=torch.ones_like(prompt)).shape == (2, 5)
    _refused(lambda: models[name].generate(torch.full((1, 3), V), max_new_tokens=2),  # AA625: the prompt's ids
             f"input id {V} is outside [0, {V})")
