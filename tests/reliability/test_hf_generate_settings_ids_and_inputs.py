"""Both of leviathan's Hugging Face classes refuse ``generate``'s settings, ids and inputs that transformers refuses
with a traceback or takes as nonsense, in one line, before any token is made; numpy scalars are taken as Python's.

Issue 30 round 32 (the Python API's try log, AC ids): settings (``hf.generate_arguments``: ``num_return_sequences``
against the beams, ``typical_p`` 0, ``min_p`` 2, ``num_beam_groups``, ``early_stopping='maybe'``, NaN penalties,
``epsilon_cutoff`` 1.5, ``max_time`` -1, switches given as 'yes' or 1), ids past the vocabulary or negative inside
list settings (``hf.setting_ids`` via ``hf.generate_ids``), the inputs (``hf.generate_inputs``: an empty prompt, a
mask of the wrong width or all 0, a float prompt, the prompt twice, bad ``inputs_embeds``, callables and a cache of
the wrong kind) and numpy's ``np.int64(3)`` / ``np.bool_(True)`` (AC2, AC19, AC37, AC54, AC415).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hf_pair_support import refused as _refused
from hf_pair_support import tiny_pair

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

VOCAB = 64
PROMPT = torch.tensor([[1, 2, 3]])
NAN = float("nan")


@pytest.fixture(scope="module")
def models():
    return tiny_pair(VOCAB)


def _config(**settings):
    from transformers import GenerationConfig

    return GenerationConfig(**settings)


SETTINGS = [  # (keywords, what the line says)
    (dict(num_beams=2, num_return_sequences=3), "`num_return_sequences` (3) has to be smaller or equal to "
     "`num_beams` (2)"),  # AC11, AC46
    (dict(num_return_sequences=2), "do not support `num_return_sequences` different than 1"),  # AC12, AC47
    (dict(do_sample=True, typical_p=0), "typical_p=0 with do_sample=True leaves no token to sample"),  # AC23, AC58
    (dict(do_sample=True, min_p=2.0), "min_p 2.0 must be a finite number in [0, 1]"),  # AC25, AC60
    (dict(generation_config=_config(max_new_tokens=2, min_p=1.5, do_sample=True)),
     "min_p 1.5 must be a finite number in [0, 1] (or None); set the generation_config's min_p"),  # AC410
    (dict(num_beams=4, num_beam_groups=2), "num_beam_groups=2 asks for group beam search, which leviathan's classes "
     "do not support"),  # AC26, AC61 (round 34: generation_features' allow-list)
    (dict(num_beams=2, early_stopping="maybe"), "`early_stopping` must be a boolean or 'never'"),  # AC413
    (dict(num_beams=2, length_penalty=NAN), "length_penalty nan must be a finite number"),  # AC22, AC57
    (dict(do_sample=True, epsilon_cutoff=1.5), "epsilon_cutoff 1.5 must be a finite number in [0, 1)"),  # AC24, AC59
    (dict(max_time=-1), "max_time -1 must be a finite number above 0"),  # AC27, AC62
    (dict(guidance_scale=NAN), "guidance_scale nan must be a finite number"),  # AC92, AC119
    (dict(exponential_decay_length_penalty=(1, NAN)), "exponential_decay_length_penalty (1, nan) must be a pair"),
    # AC96, AC123; its sibling: a usable pair with no eos id was torch's "Could not infer dtype of NoneType"
    (dict(exponential_decay_length_penalty=(1, 1.5), eos_token_id=None), "exponential_decay_length_penalty raises "
     "the score of eos_token_id, and none is set"),
    (dict(return_dict_in_generate="yes"), "return_dict_in_generate 'yes' must be True or False"),  # AC86, AC113
    (dict(output_scores=1), "output_scores 1 must be True or False"),  # AC87, AC114
    (dict(renormalize_logits="yes"), "renormalize_logits 'yes' must be True or False"),  # AC93, AC120
]

IDS = [
    (dict(bad_words_ids=[[70]]), "bad_words_ids holds 70, which is not a token id of this model"),  # AC28, AC63
    (dict(suppress_tokens=[70]), "suppress_tokens holds 70"),  # AC29, AC64
    (dict(begin_suppress_tokens=[-1]), "begin_suppress_tokens holds -1"),  # AC95, AC122
    (dict(forced_eos_token_id=70), "forced_eos_token_id holds 70"),  # AC30, AC65
    (dict(generation_config=_config(max_new_tokens=2, forced_bos_token_id=999)), "forced_bos_token_id holds 999"),
    # AC411
    (dict(sequence_bias={(70,): 1.0}), "sequence_bias holds 70"),  # AC35, AC70
    (dict(prefix_allowed_tokens_fn=lambda batch, ids: [70]), "prefix_allowed_tokens_fn returned 70"),  # AC91, AC118
]

INPUTS = [  # (prompt, keywords, what the line says)
    (PROMPT[:, :0], {}, "inputs holds no ids (shape (1, 0))"),  # AC73, AC100
    (PROMPT[:0], {}, "inputs holds no ids (shape (0, 3))"),  # AC74, AC101
    (PROMPT, dict(attention_mask=torch.ones(1, 5, dtype=torch.long)), "attention_mask has shape (1, 5), and the "
     "prompt is 1 row(s) of 3"),  # AC76, AC103
    (PROMPT, dict(attention_mask=torch.zeros(1, 3, dtype=torch.long)), "attention_mask row 0 is all 0"),  # AC77, AC104
    (PROMPT, dict(attention_mask=torch.full((1, 3), 0.5)), ".generate: attention_mask must hold 1 for each key to "
     "attend and 0 for padding, got 0.5"),  # AC78
    (PROMPT.float(), {}, "inputs must be token ids (an integer tensor, torch.long), got a torch.float32 tensor"),
    # AC98
    (PROMPT, dict(input_ids=PROMPT), "the prompt is given twice, as inputs and as input_ids"),  # AC417
    (PROMPT, dict(streamer="x"), "streamer must be a transformers streamer"),  # AC88, AC115
    (PROMPT, dict(logits_processor="x"), "logits_processor must be a list of callables"),  # AC89, AC116
    (PROMPT, dict(stopping_criteria=[5]), "stopping_criteria must be a list of callables"),  # AC90, AC117
    (PROMPT, dict(past_key_values="x"), "past_key_values must be a transformers Cache"),  # AC134, AC138
]


@pytest.mark.parametrize("keywords,said", SETTINGS + IDS, ids=[s[:40] for _, s in SETTINGS + IDS])
def test_a_setting_or_id_no_generation_can_use_is_refused_in_one_line(models, keywords, said):
    keywords = {"max_new_tokens": 2, **keywords} if "generation_config" not in keywords else keywords
    for name, model in models:
        line = _refused(lambda: model.generate(PROMPT, **keywords), said)
        assert line.startswith(f"{name}.generate: "), line


@pytest.mark.parametrize("prompt,keywords,said", INPUTS, ids=[s[:40] for _, _, s in INPUTS])
def test_an_input_no_generation_can_use_is_refused_in_one_line(models, prompt, keywords, said):
    for name, model in models:
        line = _refused(lambda: model.generate(prompt, max_new_tokens=2, **keywords), said)
        assert line.startswith(f"{name}.generate: "), line


def test_bad_inputs_embeds_of_the_adopted_class_arerefused(models):  # AC125, AC126, AC127
    _, adopted = models[1]
    embeds = adopted.get_input_embeddings()(PROMPT).detach()
    broken = embeds.clone()
    broken[0, 0, 0] = NAN
    for given, said in ((broken, "inputs_embeds holds NaN or infinite values"),
                        (embeds.double(), "inputs_embeds is torch.float64, and the model computes in torch.float32"),
                        (embeds[..., :16], "inputs_embeds has width 16, and this model's hidden size is 32")):
        _refused(lambda: adopted.generate(inputs_embeds=given, max_new_tokens=2), said)


def test_usable_settings_ids_and_inputs_still_generate(models):
    from transformers import LogitsProcessorList

    for _, model in models:
        assert model.generate(PROMPT, max_new_tokens=2, num_beams=2, num_return_sequences=2, length_penalty=-1.0,
                              early_stopping="never").shape == (2, 5)
        assert model.generate(PROMPT, max_new_tokens=2, do_sample=True, top_p=0.9, min_p=0.1,
                              attention_mask=torch.ones(1, 3, dtype=torch.long)).shape == (1, 5)
        assert model.generate(PROMPT, max_new_tokens=2, bad_words_ids=[[5, 6]], suppress_tokens=[1],
                              sequence_bias={(7,): -1.0}, forced_eos_token_id=2, logits_processor=LogitsProcessorList(),
                              stopping_criteria=[], prefix_allowed_tokens_fn=lambda b, ids: [1, 2, 3]).shape == (1, 5)


def test_numpy_scalars_are_taken_as_the_python_values_they_equal(models):  # AC2, AC19, AC37, AC54, AC415
    for _, model in models:
        assert model.generate(PROMPT, max_new_tokens=np.int64(3)).shape == (1, 6)
        assert model.generate(PROMPT, max_new_tokens=2, min_new_tokens=np.int64(1)).shape == (1, 5)
        torch.manual_seed(0)
        sampled = model.generate(PROMPT, max_new_tokens=4, do_sample=np.bool_(True), top_k=0)
        torch.manual_seed(0)
        # np.bool_(True) samples as True does (transformers alone read it as greedy: ``do_sample is not True``)
        assert torch.equal(sampled, model.generate(PROMPT, max_new_tokens=4, do_sample=True, top_k=0))


def test_the_model_generation_config_is_held_to_the_same_rules(models, tmp_path):  # AC406, AC408 after a load
    from leviathan.errors import UserError

    for name, model in models:
        saved = model.generation_config
        try:
            model.generation_config = _config(do_sample=True, typical_p=0.0)
            _refused(lambda: model.generate(PROMPT, max_new_tokens=2), "typical_p=0 with do_sample=True")
            model.generation_config = _config(suppress_tokens=[70])
            _refused(lambda: model.generate(PROMPT, max_new_tokens=2), "suppress_tokens holds 70")
            with pytest.raises(UserError, match="suppress_tokens holds 70"):  # the savers' rule is the loaders'
                model.save_pretrained(tmp_path / name)
            assert not (tmp_path / name / "generation_config.json").exists()
        finally:
            model.generation_config = saved
