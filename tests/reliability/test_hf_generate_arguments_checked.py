"""Both of leviathan's Hugging Face classes check ``generate``'s arguments before transformers runs.

Issue 30 round 31: ``max_new_tokens`` 0 / -1 / '5' (AA90, AA91, AA93, AA523), ``max_length`` under the prompt (AA97),
``num_beams=0`` (AA621, AA647), ``temperature=nan`` (AA622) and a prompt on meta (AA626, AA646) ended in transformers'
or torch's raw errors; ``min_new_tokens`` past ``max_new_tokens``, ``min_length`` past what it allows and
``min_new_tokens=-1`` were taken (AA89, AA619, AA620, AA648); a generation after a cached prefix (AA105, AA649) or
from ``inputs_embeds`` (AA106, AA108) ran past the positions or named a wrong room. One check for both classes
(``hf.generate_arguments.check_generate_arguments``, from their ``generate``).
"""

from __future__ import annotations

import re

import pytest
import torch

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

LIMIT = 32
PROMPT = torch.tensor([[1, 2, 3], [4, 5, 6]])


@pytest.fixture(scope="module")
def models():
    from transformers import LlamaConfig

    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt

    torch.manual_seed(0)
    sizes = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=2, max_position_embeddings=LIMIT)
    native = LeviathanForCausalLM(LeviathanConfig(**sizes)).eval()
    adopted = adopt(LlamaConfig(**sizes), seed_dim=8, modes=2, knots=8, rank=4).eval()
    return [("LeviathanForCausalLM", native), (type(adopted).__name__, adopted)]


def _refused(call, said: str, kind=None) -> str:
    """The one-line UserError ``call`` raises, which must hold ``said`` (and be a ``kind`` when given)."""
    from leviathan.errors import UserError

    with pytest.raises(kind or UserError, match=re.escape(said)) as caught:
        call()
    assert isinstance(caught.value, UserError), repr(caught.value)
    line = str(caught.value)
    assert "\n" not in line, line
    return line


BAD = [  # (keywords, what the line says, the error's other class)
    (dict(max_new_tokens=0), "max_new_tokens 0 must be a whole number >= 1 (or None); pass a usable max_new_tokens",
     ValueError),  # AA91, AA523
    (dict(max_new_tokens=-1), "max_new_tokens -1 must be a whole number >= 1", ValueError),  # AA90
    (dict(max_new_tokens="5"), "max_new_tokens '5' must be a whole number >= 1", TypeError),  # AA93
    (dict(max_length=2), "max_length=2 counts the prompt, and the prompt has 3 ids, so nothing is left to generate; "
     "pass max_new_tokens (the new ids alone), or max_length > 3", ValueError),  # AA97
    (dict(max_new_tokens=5, num_beams=0), "num_beams 0 must be a whole number >= 1", ValueError),  # AA621, AA647
    (dict(max_new_tokens=5, temperature=float("nan"), do_sample=True), "temperature nan must be a finite number >= 0",
     ValueError),  # AA622
    (dict(max_new_tokens=5, temperature=0.0, do_sample=True), "temperature=0 with do_sample=True leaves no token to "
     "sample", ValueError),  # a sibling: transformers' logits processor's ValueError
    (dict(max_new_tokens=5, num_return_sequences=0), "num_return_sequences 0 must be a whole number >= 1",
     ValueError),  # a sibling: taken, one sequence each
    (dict(max_new_tokens=10, min_new_tokens=20), "min_new_tokens=20 is more than the 10 new ids max_new_tokens=10 "
     "allows; pass min_new_tokens <= 10", ValueError),  # AA89, AA648
    (dict(max_new_tokens=5, min_length=100), "min_length=100 (it counts the prompt's 3 ids) is more than the 8 tokens "
     "max_new_tokens=5 allows; pass min_length <= 8", ValueError),  # AA619
    (dict(max_new_tokens=5, min_new_tokens=-1), "min_new_tokens -1 must be a whole number >= 0", ValueError),  # AA620
]


@pytest.mark.parametrize("keywords,said,kind", BAD, ids=[",".join(map(str, k.values())) for k, _, _ in BAD])
def test_a_generate_argument_no_generation_can_use_is_refused_in_one_line(models, keywords, said, kind):
    for name, model in models:
        _refused(lambda: model.generate(PROMPT, **keywords), f"{name}.generate: {said}", kind)


def test_the_model_generation_config_value_names_where_to_set_it(models):
    for name, model in models:
        model.generation_config.num_beams = 0
        try:
            _refused(lambda: model.generate(PROMPT, max_new_tokens=2), "set model.generation_config.num_beams")
        finally:
            model.generation_config.num_beams = 1


def test_a_prompt_on_meta_is_refused(models):  # AA626, AA646
    for name, model in models:
        _refused(lambda: model.generate(PROMPT.to("meta"), max_new_tokens=2), f"{name}.generate: inputs is on the "
                 "meta device")


def test_the_positions_are_counted_after_a_cached_prefix(models):  # AA105, AA649
    for name, model in models:
        with torch.no_grad():
            cache = model(torch.zeros(2, LIMIT - 4, dtype=torch.long), use_cache=True).past_key_values
        mask = torch.ones(2, LIMIT - 1, dtype=torch.long)
        line = _refused(lambda: model.generate(PROMPT, past_key_values=cache, max_new_tokens=10, attention_mask=mask),
                        f"{name}.generate: max_new_tokens=10 after the prompt's {LIMIT - 4} cached positions and 3 "
                        f"ids reaches {LIMIT + 9} tokens, past the model's {LIMIT} positions "
                        f"(max_position_embeddings); pass max_new_tokens <= 1")
        assert "position_ids" not in line, line
        assert cache.get_seq_length() == LIMIT - 4  # refused before anything ran on the cache


def test_the_positions_are_counted_from_inputs_embeds(models):  # AA106, AA108
    (native_name, native), (name, adopted) = models
    embeds = torch.zeros(1, 3, 32)
    for new in (LIMIT - 2, 100):
        _refused(lambda: adopted.generate(inputs_embeds=embeds, max_new_tokens=new, do_sample=False),
                 f"{name}.generate: max_new_tokens={new} after the prompt's 3 embeddings (inputs_embeds) reaches "
                 f"{new + 3} tokens, past the model's {LIMIT} positions (max_position_embeddings); pass "
                 f"max_new_tokens <= {LIMIT - 3}")
    assert adopted.generate(inputs_embeds=embeds, max_new_tokens=LIMIT - 3, do_sample=False).shape == (1, LIMIT - 3)
    _refused(lambda: native.generate(inputs_embeds=embeds, max_new_tokens=2), f"{native_name}.generate: "
             "LeviathanForCausalLM computes its own input embeddings, so inputs_embeds is not taken", ValueError)


def test_a_prompt_or_generation_config_of_the_wrong_kind_is_refused(models):
    """Siblings of AA93: a list, 1-D ids, a text as generation_config and do_sample='yes' were transformers' raw
    AttributeError / IndexError, or taken."""
    for name, model in models:
        for call, said in ((lambda: model.generate([[1, 2, 3]], max_new_tokens=2), "inputs must be a (batch, length) "
                            "tensor of token ids, got list [[1, 2, 3]]"),
                           (lambda: model.generate(PROMPT[0], max_new_tokens=2), "inputs must be a (batch, length) "
                            "tensor of token ids, got a 1-D tensor"),
                           (lambda: model.generate(PROMPT, generation_config="x"), "generation_config must be a "
                            "transformers GenerationConfig, got str 'x'"),
                           (lambda: model.generate(PROMPT, max_new_tokens=2, do_sample="yes"), "do_sample 'yes' must "
                            "be True or False")):
            _refused(call, f"{name}.generate: {said}", TypeError)
