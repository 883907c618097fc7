"""Both of leviathan's Hugging Face classes support a known set of generation features; a setting outside it, from a
keyword, a GenerationConfig given, model.generation_config or generation_config.json, is refused in one line before
anything runs or changes (issue 30 round 34, the AG ids: ``hf.generation_features``); the supported features' inputs
the first forward reads have hand rules (``generate_inputs``, ``generate_cache``, ``generate_callables``,
``generate_ids``, ``generate_needs``)."""

from __future__ import annotations

import json

import pytest
import torch

from hf_pair_support import PROMPT, refused, tiny_pair
from hf_pair_support import generate_call as _generate

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

VOCAB, LIMIT = 64, 32
SAID = "which leviathan's classes do not support"


@pytest.fixture(scope="module")
def models():
    return tiny_pair(VOCAB, LIMIT)


FEATURES = [  # (keywords, what the line says)
    (dict(cache_implementation="paged"), "cache_implementation='paged' asks for continuous batching"),  # AG2
    (dict(custom_generate="nobody/no-such-recipe"), "custom_generate='nobody/no-such-recipe' asks for custom"),  # AG8
    (dict(custom_generate=5), "custom_generate=5 asks for custom generation code"),  # AG9, AG10
    (dict(trust_remote_code=True), "trust_remote_code=True asks for generation code from the Hub"),  # AG11 ('yes' too)
    (dict(cache_config={"nbits": "x"}), "cache_config={'nbits': 'x'} asks for a cache's own settings"),  # AG16, AG17
    (dict(prefill_chunk_size=-1), "prefill_chunk_size=-1 asks for chunked prefill"),  # AG106-AG111
    (dict(assistant_confidence_threshold=float("nan")), "assistant_confidence_threshold=nan asks for assisted"),
    (dict(num_assistant_tokens_schedule="x"), "num_assistant_tokens_schedule='x' asks for assisted"),  # AG114
    (dict(target_lookbehind=-1, assistant_lookbehind=-3), "assistant_lookbehind=-3 asks for assisted"),  # AG118
    (dict(constraints=["x"], num_beams=2), "constraints=['x'] asks for constrained beam search"),  # AG132
    # True, not 'yes': a switch given as text is named as that since round 35 (AI283, the unit test of the allow-list)
    (dict(use_mtp=True), "use_mtp=True asks for multi-token-prediction drafts"),  # AG138, AG160
    (dict(is_assistant=True), "is_assistant=True asks for assisted decoding"),  # AG140
    (dict(assistant_early_exit=0), "assistant_early_exit=0 asks for early-exit assisted decoding"),  # AG116, AG147
    (dict(speculation_type="x"), "speculation_type='x' asks for speculative decoding"),  # AG154
    (dict(encoder_no_repeat_ngram_size=-2), "encoder_no_repeat_ngram_size=-2 asks for"),  # AG155
    (dict(continuous_batching_config="x"), "continuous_batching_config='x' asks for continuous batching"),  # AG156
    (dict(cache_implementation="static", max_cache_len=2), "max_cache_len=2 asks for a cache's own length"),  # AG153
    (dict(num_beams=2, low_memory=True), "low_memory=True asks for low-memory beam search"),  # AG185
    (dict(labels=PROMPT), "labels=Tensor asks for training targets"),  # AG103
]


@pytest.mark.parametrize("keywords, said", FEATURES)
def test_a_feature_outside_the_supported_set_is_refused_in_one_line(models, keywords, said):
    for name, model in models:
        refused(_generate(model, **keywords), f"{name}.generate: {said}", ValueError)


def test_every_source_of_a_refused_setting_is_read_and_nothing_changes(models, tmp_path):
    """AG115, AG199, AG221 (early-exit assisted decoding rewrote config.num_hidden_layers in memory: damage), AG124
    (an assistant on a batch), AG165 (inside a GenerationConfig given), AG217 (the save), AG199-AG219 (the load)."""
    from transformers import GenerationConfig

    from leviathan.errors import UserError
    from leviathan.hf import LeviathanForCausalLM, load_adopted

    for name, model in models:
        before = model.config.to_dict()
        refused(_generate(model, assistant_early_exit=-1), "assistant_early_exit=-1 asks for early-exit", ValueError)
        refused(_generate(model, assistant_model=model), "assistant_model=", ValueError)
        refused(_generate(model, generation_config=GenerationConfig(max_new_tokens=2, prefill_chunk_size=-1)),
                "prefill_chunk_size=-1 asks for chunked prefill")
        model.generation_config.assistant_early_exit = 1
        try:
            refused(_generate(model), "assistant_early_exit=1 asks for early-exit assisted decoding")
            refused(lambda: model.save_pretrained(tmp_path / "refused"), "assistant_early_exit=1 asks for")
        finally:
            model.generation_config.assistant_early_exit = None
        assert model.config.to_dict() == before  # nothing changed (the damage kind)
        assert _generate(model)().shape == (1, 5)
        folder = tmp_path / name
        model.save_pretrained(folder)
        written = json.loads((folder / "generation_config.json").read_text())
        written.update(prefill_chunk_size=0)
        (folder / "generation_config.json").write_text(json.dumps(written))
        load = LeviathanForCausalLM.from_pretrained if name == "LeviathanForCausalLM" else load_adopted
        with pytest.raises(UserError, match="prefill_chunk_size=0 asks for chunked prefill"):
            load(folder)


def _processors(*items):
    from transformers import LogitsProcessorList

    return LogitsProcessorList(items)


def _criteria(*items):
    from transformers import StoppingCriteriaList

    return StoppingCriteriaList(items)


def test_the_supported_features_inputs_are_held_by_hand_rules(models):
    """AG27-AG31 (a cache of another dtype, on meta, NaN, a static cache too short), AG46-AG57 (processors and
    criteria), AG64, AG66, AG81, AG198 (more beams than tokens), AG126, AG151, AG161, AG169, AG175, AG187-AG192 (the negative prompt)."""
    from transformers import StaticCache, TextStreamer

    for name, model in models:
        cache = model(PROMPT, use_cache=True).past_key_values
        long_prompt = torch.tensor([[1, 2, 3, 4, 5]])
        for layer in cache.layers:
            layer.keys = layer.keys.double()
        refused(_generate(model, prompt=long_prompt, past_key_values=cache), "past_key_values holds torch.float64")
        for layer in cache.layers:
            layer.keys = layer.keys.float() * float("nan")
        refused(_generate(model, prompt=long_prompt, past_key_values=cache), "holds NaN or infinite")
        cases = [
            (dict(logits_processor=_processors(lambda ids, scores: scores.long())), "returned a torch.int64 tensor"),
            (dict(logits_processor=_processors(lambda ids, scores: scores.fill_(float("-inf")))), "all -inf"),
            (dict(do_sample=True, logits_processor=_processors(lambda ids, s: s.fill_(float("-inf")))), "all -inf"),
            (dict(logits_processor=_processors(lambda ids, scores, extra: scores)), "takes (ids, scores, extra)"),
            (dict(logits_processor=_processors(lambda ids, scores, **kw: None)), "returned NoneType None"),
            (dict(stopping_criteria=_criteria(lambda ids, s, **kw: torch.tensor([True, True]))), "shape (2,)"),
            (dict(streamer=TextStreamer(None)), "streamer TextStreamer holds no tokenizer"),
            (dict(prefix_allowed_tokens_fn=lambda b, ids: torch.tensor([5.0])), "returned a torch.float32 tensor"),
            (dict(attention_mask=torch.ones(1, 3, dtype=torch.complex64)), "attention_mask is a torch.complex64"),
            (dict(tokenizer=5), "tokenizer must be a transformers tokenizer"),
            (dict(num_beams=VOCAB + 1), f"num_beams={VOCAB + 1} is more beams than the model's {VOCAB} tokens"),
            (dict(stop_strings=["x"], tokenizer="gpt2"), "got str 'gpt2'"),
            (dict(eos_token_id=torch.tensor([5], device="meta")), "eos_token_id is a tensor on the meta device"),
            (dict(suppress_tokens=[[5]]), "suppress_tokens holds [5]"),
            (dict(negative_prompt_ids=PROMPT[:, :2]), "guidance_scale is None (off)"),
            (dict(guidance_scale=2.0, negative_prompt_ids=torch.ones(2, 2, dtype=torch.long)), "shape (2, 2)"),
            (dict(guidance_scale=2.0, negative_prompt_ids=PROMPT[:, :0]), "shape (1, 0)"),
            (dict(guidance_scale=2.0, negative_prompt_ids=PROMPT.to("meta")), "negative_prompt_ids is on the meta"),
            (dict(guidance_scale=2.0, negative_prompt_ids=torch.ones(1, 40, dtype=torch.long)), "past the model's"),
        ]
        if name != "LeviathanForCausalLM":  # the native class refuses every fixed-size cache (round 33)
            cases.append((dict(prompt=long_prompt, past_key_values=StaticCache(config=model.config, max_cache_len=4)),
                          "a fixed-size cache of 4 positions"))
        for keywords, said in cases:
            refused(_generate(model, **keywords), f"{name}.generate: ")
            refused(_generate(model, **keywords), said)
        assert _generate(model, guidance_scale=2.0, negative_prompt_ids=PROMPT[:, :2])().shape == (1, 5)


def test_generates_arguments_by_position_are_checked_as_by_keyword(models):
    """AG376-AG382: the arguments after generation_config given by position went to transformers unchecked."""
    for name, model in models:
        refused(lambda: model.generate(PROMPT, None, _processors(lambda ids, s: None), max_new_tokens=2),
                f"{name}.generate: logits_processor[0] returned NoneType None", TypeError)
        refused(lambda: model.generate(PROMPT, None, None, None, None, None, None, 5, max_new_tokens=2),
                f"{name}.generate: streamer must be a transformers streamer", TypeError)
        refused(lambda: model.generate(PROMPT, None, None, _criteria(), stopping_criteria=_criteria(),
                                       max_new_tokens=2), "stopping_criteria is given twice", TypeError)
        assert model.generate(PROMPT, None, None, max_new_tokens=2).shape == (1, 5)


def test_later_ids_of_the_round_special_ids_scores_and_caches(models):
    """AG250, AG251, AG314 (special ids: empty, several pad ids, a numpy array), AG354, AG355 (a partial, a processor
    taking **kwargs: now wrapped), AG358 (a numpy bool taken), AG366, AG369 (scores on meta, +inf), AG385, AG311 (two
    caches, an encoder-decoder cache), AG255-AG259 (transformers' own processors and criteria holding an id past the
    vocabulary, or no time)."""
    import functools

    import numpy as np
    from transformers import (DynamicCache, EncoderDecoderCache, EosTokenCriteria, MaxTimeCriteria,
                              NoBadWordsLogitsProcessor, SuppressTokensLogitsProcessor)

    def none(ids, scores, extra):
        return None

    for name, model in models:
        cases = [
            (dict(eos_token_id=[]), "eos_token_id [] names no token"),
            (dict(pad_token_id=torch.tensor([5, 6])), "pad_token_id holds 2 ids"),
            (dict(eos_token_id=np.array([5, 6])), "eos_token_id is a numpy array"),
            (dict(logits_processor=_processors(functools.partial(none, extra=1))), "returned NoneType None"),
            (dict(logits_processor=_processors(lambda ids, scores: scores.to("meta"))), "returned scores on meta"),
            (dict(logits_processor=_processors(lambda ids, scores: scores + float("inf"))), "returned +inf scores"),
            (dict(cache=DynamicCache(), past_key_values=DynamicCache()), "a cache is given twice"),
            (dict(past_key_values=EncoderDecoderCache(DynamicCache(), DynamicCache())), "is an EncoderDecoderCache"),
            (dict(logits_processor=_processors(SuppressTokensLogitsProcessor([VOCAB]))), f"holds {VOCAB} among"),
            (dict(logits_processor=_processors(NoBadWordsLogitsProcessor([[VOCAB]]))), f"holds {VOCAB} among"),
            (dict(stopping_criteria=_criteria(EosTokenCriteria(eos_token_id=VOCAB))), f"holds {VOCAB} among"),
            (dict(stopping_criteria=_criteria(MaxTimeCriteria(-1))), "has max_time -1, no time to generate in"),
        ]
        for keywords, said in cases:
            refused(_generate(model, **keywords), f"{name}.generate: ")
            refused(_generate(model, **keywords), said)
        stop = _criteria(lambda ids, s, **kw: np.bool_(False))
        assert _generate(model, stopping_criteria=stop)().shape == (1, 5)


def test_a_refusal_at_the_first_token_leaves_the_callers_cache_as_it_was(models):
    """AG268-AG270, AG285, AG286 (damage: the first forward grew the caller's cache before the refusal, and a retry ran
    on 5 positions where 3 were cached)."""
    prompt = torch.tensor([[1, 2, 3, 4, 5]])
    for name, model in models:
        cache = model(PROMPT, use_cache=True).past_key_values
        for keywords in (dict(prefix_allowed_tokens_fn=lambda b, ids: []),
                         dict(logits_processor=_processors(lambda ids, s: s * float("nan"))),
                         dict(stopping_criteria=_criteria(lambda ids, s, **kw: "x"))):
            refused(_generate(model, prompt=prompt, past_key_values=cache, **keywords), f"{name}.generate: ")
            assert cache.get_seq_length() == 3
        fresh = model(PROMPT, use_cache=True).past_key_values
        assert torch.equal(_generate(model, prompt=prompt, past_key_values=cache)(),
                           _generate(model, prompt=prompt, past_key_values=fresh)())
        assert cache.get_seq_length() == fresh.get_seq_length()
