"""Round 34's second part (issue 30, the AG ids of fix35a's second part): a fixed-size cache's mask, caches against
the rows beams make, a criterion's end id without a pad id, a threaded streamer ended on a refusal, and a save that
writes only what its own loader takes (``hf.generation_save``), for both Hugging Face classes."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
import torch

from hf_pair_support import refused, tiny_pair

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

VOCAB, LIMIT = 64, 32
PROMPT = torch.tensor([[1, 2, 3]])


@pytest.fixture(scope="module")
def models():
    return tiny_pair(VOCAB, LIMIT)


def test_a_static_cache_of_the_models_positions_still_generates(models):
    """AG32 (a regression of fix34b: the 4-D mask check asked transformers 5 for get_max_cache_shape, which it no
    longer has, and refused the (1, 1, 1, 32) mask a StaticCache makes)."""
    from transformers import StaticCache

    name, adopted = models[1]
    want = adopted.generate(PROMPT, max_new_tokens=2)
    for rows in (1, 2):
        prompt = PROMPT.repeat(rows, 1)
        got = adopted.generate(prompt, past_key_values=StaticCache(config=adopted.config, max_cache_len=LIMIT),
                               max_new_tokens=2)
        assert torch.equal(got, want.repeat(rows, 1))
    name, native = models[0]  # the native class runs on a growing cache only, and says so in one line (AG33)
    refused(lambda: native.generate(PROMPT, past_key_values=StaticCache(config=adopted.config, max_cache_len=LIMIT),
                                    max_new_tokens=2), f"{name}.generate: past_key_values=StaticCache asks for")


def test_a_cache_against_the_rows_beams_and_sequences_make(models):
    """AG413-AG415, AG419, AG420 (a cache of the prompt's rows with num_beams=2 or num_return_sequences=2: torch's raw
    "Sizes of tensors must match" at the first forward); the cache repeated for them generates as no cache does."""
    prompt = torch.tensor([[1, 2, 3, 4, 5]])
    for name, model in models:
        for keywords in (dict(num_beams=2), dict(do_sample=True, num_return_sequences=2)):
            cache = model(PROMPT, use_cache=True).past_key_values
            refused(lambda: model.generate(prompt, past_key_values=cache, max_new_tokens=2, **keywords),
                    f"{name}.generate: past_key_values was made for 1 row(s), and the prompt's 1 row(s) run as 2")
        embeds = model.get_input_embeddings()(prompt)
        if name != "LeviathanForCausalLM":  # the native class takes no inputs_embeds
            refused(lambda: model.generate(inputs_embeds=embeds, past_key_values=cache, num_beams=2,
                                           max_new_tokens=2), "batch_repeat_interleave(2)")
        cache.batch_repeat_interleave(2)
        assert torch.equal(model.generate(prompt, past_key_values=cache, num_beams=2, max_new_tokens=2),
                           model.generate(prompt, num_beams=2, max_new_tokens=2))


def test_embeddings_no_longer_than_the_cache_are_refused(models):
    """AG308: inputs_embeds of 3 positions after a cache of 5 (and of as many as the cache, with or without a mask
    covering the cache too) were torch's raw "cannot reshape tensor of 0 elements" inside the attention: transformers
    reads embeddings after a cache as the whole sequence. The whole sequence generates as ids after the cache do."""
    name, adopted = models[1]
    ids = torch.tensor([[1, 2, 3, 4, 5, 6]])
    embeds = adopted.get_input_embeddings()(ids).detach()  # (1, 6, D)
    covering = torch.ones(1, 8, dtype=torch.long)  # the cache's 5 positions and the 3 embeddings
    for given, mask in ((embeds[:, 3:], None), (embeds[:, 1:], None), (embeds[:, 3:], covering)):
        cache = adopted(ids[:, :5], use_cache=True).past_key_values
        refused(lambda: adopted.generate(inputs_embeds=given, past_key_values=cache, attention_mask=mask,
                                         max_new_tokens=2, do_sample=False),
                f"{name}.generate: past_key_values holds 5 position(s), and inputs_embeds only {given.shape[1]}: after "
                f"a cache, transformers reads inputs_embeds as the whole sequence")
        assert cache.get_seq_length() == 5  # the caller's cache as it was
    cache = adopted(ids[:, :5], use_cache=True).past_key_values
    got = adopted.generate(inputs_embeds=embeds, past_key_values=cache, max_new_tokens=2, do_sample=False)
    assert torch.equal(got, adopted.generate(ids, max_new_tokens=2, do_sample=False)[:, 6:])


def test_an_end_criterion_without_a_pad_id_is_named(models):
    """EosTokenCriteria on LeviathanForCausalLM, which sets no pad id: transformers' raw "unsupported operand type(s)
    for *: 'NoneType' and 'Tensor'" (seen by fix35a's first part)."""
    from transformers import EosTokenCriteria, StoppingCriteriaList

    for name, model in models:
        stop = StoppingCriteriaList([EosTokenCriteria(eos_token_id=5)])
        if model.generation_config.pad_token_id is None and model.generation_config.eos_token_id is None:
            refused(lambda: model.generate(PROMPT, stopping_criteria=stop, max_new_tokens=2),
                    f"{name}.generate: stopping_criteria[0] (EosTokenCriteria) stops rows at an end id")
        assert model.generate(PROMPT, stopping_criteria=stop, max_new_tokens=2, pad_token_id=0).shape == (1, 5)
        assert model.generate(PROMPT, stopping_criteria=stop, max_new_tokens=2, num_beams=2).shape == (1, 5)


def test_a_threaded_streamer_ends_when_generate_is_refused(models):
    """AG410, AG411 (transformers' threaded TextIteratorStreamer pattern: a refusal before or at the first token never
    ended the stream, and the caller's loop waited forever)."""
    from transformers import TextIteratorStreamer

    class Words:
        def decode(self, ids, **kw):
            return " ".join(map(str, ids))

    for name, model in models:
        for keywords in (dict(top_k=-1, do_sample=True), dict(prefix_allowed_tokens_fn=lambda b, ids: [])):
            streamer, errors = TextIteratorStreamer(Words(), timeout=60), []

            def run():
                try:
                    model.generate(PROMPT, max_new_tokens=3, streamer=streamer, **keywords)
                except Exception as e:  # the refusal, which only the thread sees
                    errors.append(e)

            thread = threading.Thread(target=run)
            thread.start()
            texts = list(streamer)  # ends (no queue.Empty after 60 s)
            thread.join()
            assert texts[-1] == "" and len(errors) == 1 and f"{name}.generate: " in str(errors[0])


def test_a_save_writes_what_its_own_load_takes_or_nothing(models, tmp_path):
    """AG393 (damage: sequence_bias {(5,): 1.0} written as {"(5,)": 1.0}, which its own load refused), AG390, AG391,
    AG392, AG394, AG396 (numpy numbers: json's raw TypeError or refused as no number), AG395 (a watermark dict:
    transformers' raw AttributeError), AG399 (a set: json's raw TypeError); top_k without do_sample (transformers' raw
    ValueError from inside the save)."""
    from transformers import GenerationConfig

    from leviathan.hf import LeviathanForCausalLM, load_adopted

    for name, model in models:
        load = LeviathanForCausalLM.from_pretrained if name == "LeviathanForCausalLM" else load_adopted
        held = model.generation_config
        taken = [(dict(sequence_bias={(5,): 1.0}), "sequence_bias", [[[5], 1.0]]),
                 (dict(sequence_bias={(5,): np.float32(1.5)}), "sequence_bias", [[[5], 1.5]]),
                 (dict(eos_token_id=np.int64(5)), "eos_token_id", 5),
                 (dict(bad_words_ids=[[np.int64(5)]]), "bad_words_ids", [[5]]),
                 (dict(do_sample=np.bool_(True), top_k=np.int64(5)), "top_k", 5),
                 (dict(watermarking_config={"bias": 2.0}), "watermarking_config", None)]
        for i, (settings, key, written) in enumerate(taken):
            model.generation_config = GenerationConfig(**held.to_dict())
            for k, v in settings.items():
                setattr(model.generation_config, k, v)
            before = dict(vars(model.generation_config))
            model.save_pretrained(tmp_path / f"{name}{i}")
            assert vars(model.generation_config).keys() == before.keys()  # the caller's own object unchanged
            assert all(vars(model.generation_config)[k] is v for k, v in before.items())
            saved = json.loads((tmp_path / f"{name}{i}" / "generation_config.json").read_text())
            if written is not None:
                assert saved[key] == written
            else:
                assert saved[key]["bias"] == 2.0
            again = load(tmp_path / f"{name}{i}")  # its own load takes it
            assert again.generate(PROMPT, max_new_tokens=2).shape == (1, 5)
        for settings, said in ((dict(my_own_setting={1, 2}), "my_own_setting {1, 2} is no JSON value (a set)"),
                               (dict(top_k=5), "top_k: do_sample is not set to True")):
            model.generation_config = GenerationConfig(**held.to_dict())
            for k, v in settings.items():
                setattr(model.generation_config, k, v)
            refused(lambda: model.save_pretrained(tmp_path / f"{name}-refused"), said)
            assert not (tmp_path / f"{name}-refused").exists()
        model.generation_config = held


def test_later_tracebacks_of_the_round_in_one_line(models):
    """AG274 (the adopted model on meta: torch's raw device error), AG386 (position_ids for 2 of 3 ids: torch's raw
    size error in the rotary step), AG444 (eos_token_id a 2-D tensor: torch's raw size error), AG431 (no prompt and no
    bos id: transformers' raw ValueError), AG340 (a StaticCache filled under inference_mode reused outside it: torch's
    raw in-place error)."""
    import copy

    from transformers import StaticCache

    for name, model in models:
        cases = [(dict(position_ids=torch.tensor([[0, 1]])), "position_ids has shape (1, 2), and the prompt is 1"),
                 (dict(eos_token_id=torch.tensor([[5, 6]])), "eos_token_id tensor([[5, 6]]) is laid out in rows")]
        for keywords, said in cases:
            refused(lambda: model.generate(PROMPT, max_new_tokens=2, **keywords), f"{name}.generate: {said}")
        assert model.generate(PROMPT, max_new_tokens=2, position_ids=torch.tensor([[0, 1, 2]])).shape == (1, 5)
        bos = model.generation_config.bos_token_id, model.config.bos_token_id
        model.generation_config.bos_token_id = model.config.bos_token_id = None
        try:
            refused(lambda: model.generate(max_new_tokens=2), f"{name}.generate: no prompt is given and no "
                                                              f"bos_token_id")
        finally:
            model.generation_config.bos_token_id, model.config.bos_token_id = bos
        on_meta = copy.deepcopy(model).to("meta")
        refused(lambda: on_meta.generate(PROMPT, max_new_tokens=2), f"{name}.generate: the model is on the meta")
    name, adopted = models[1]
    cache = StaticCache(config=adopted.config, max_cache_len=LIMIT)
    with torch.inference_mode():
        out = adopted.generate(PROMPT, past_key_values=cache, max_new_tokens=2)
    refused(lambda: adopted.generate(torch.cat([out, PROMPT], 1), past_key_values=cache, max_new_tokens=2),
            f"{name}.generate: past_key_values is a fixed-size cache filled under torch.inference_mode()")


def test_later_silent_and_unclear_ids_of_the_round(models, tmp_path):
    """AG426, AG427 (a negative prompt's mask of other width: the forward's line about the caller's attention_mask; all
    0: taken), AG330, AG453 (sequence_bias naming one sequence twice, also from generation_config.json: one bias
    dropped), AG400 (remove_invalid_values=True with a processor's NaN: refused though transformers cleans them),
    AG260 (a MaxLengthCriteria below the prompt: one token made past it), AG241 (a mask of 3 beside no prompt: taken),
    AG447, AG448 (the prompt again beside its own full cache: run twice, without a word)."""
    from transformers import MaxLengthCriteria, StoppingCriteriaList

    from leviathan.hf import LeviathanForCausalLM, load_adopted

    negative = dict(guidance_scale=2.0, negative_prompt_ids=torch.tensor([[1, 2]]))
    twice = [[[5], 1.0], [[5], 2.0]]
    for name, model in models:
        cases = [(dict(negative_prompt_attention_mask=torch.ones(1, 5).long(), **negative),
                  "negative_prompt_attention_mask has shape (1, 5), and negative_prompt_ids (1, 2)"),
                 (dict(negative_prompt_attention_mask=torch.tensor([[0, 0]]), **negative),
                  "negative_prompt_attention_mask has a row of only 0"),
                 (dict(sequence_bias=twice), "sequence_bias names the sequence [5] twice"),
                 (dict(stopping_criteria=StoppingCriteriaList([MaxLengthCriteria(3)])),
                  "stopping_criteria[0] is MaxLengthCriteria(max_length=3), and the prompt already holds 3 ids")]
        for keywords, said in cases:
            refused(lambda: model.generate(PROMPT, max_new_tokens=2, **keywords), f"{name}.generate: {said}")
        refused(lambda: model.generate(attention_mask=torch.ones(1, 3).long(), max_new_tokens=2, bos_token_id=1),
                f"{name}.generate: attention_mask has shape (1, 3), and no prompt is given")
        cache = model(PROMPT, use_cache=True).past_key_values
        refused(lambda: model.generate(PROMPT, past_key_values=cache, max_new_tokens=2),
                f"{name}.generate: past_key_values holds 3 position(s), as many as the prompt's ids")
        assert cache.get_seq_length() == 3
        nan = [lambda ids, scores: scores * float("nan")]
        assert model.generate(PROMPT, max_new_tokens=2, remove_invalid_values=True, logits_processor=nan).shape \
            == (1, 5)
        assert model.generate(PROMPT, max_new_tokens=2, sequence_bias=[[[5], 1.0], [[6], 2.0]],
                              **{k: v for k, v in negative.items()}).shape == (1, 5)
        load = LeviathanForCausalLM.from_pretrained if name == "LeviathanForCausalLM" else load_adopted
        folder = tmp_path / name
        model.save_pretrained(folder)
        settings = json.loads((folder / "generation_config.json").read_text())
        (folder / "generation_config.json").write_text(json.dumps({**settings, "sequence_bias": twice}))
        refused(lambda: load(folder), "sequence_bias names the sequence [5] twice")


def test_an_adopted_models_config_changed_in_memory_is_named(models):
    """AG224 (config.num_hidden_layers = 0: other ids without a word), AG370 (layer_types ['x']: the guard's line
    naming no argument), AG371 (a sliding window of -4: taken)."""
    name, adopted = models[1]
    config = adopted.config
    held = {key: getattr(config, key, None) for key in ("num_hidden_layers", "layer_types", "sliding_window")}
    cases = [(dict(num_hidden_layers=0), "model.config.num_hidden_layers is 0, and the model holds 1 decoder"),
             (dict(layer_types=["x"]), "model.config.layer_types holds 'x', which is no layer type"),
             (dict(layer_types=["sliding_attention"], sliding_window=-4),
              "model.config.layer_types has sliding_attention layers, and model.config.sliding_window is -4")]
    try:
        for settings, said in cases:
            for key, value in {**held, **settings}.items():
                setattr(config, key, value)
            refused(lambda: adopted.generate(PROMPT, max_new_tokens=2), f"{name}.generate: {said}")
    finally:
        for key, value in held.items():
            setattr(config, key, value)
    assert adopted.generate(PROMPT, max_new_tokens=2).shape == (1, 5)


def test_a_fixed_size_cache_setting_the_native_class_never_runs_is_not_saved(models, tmp_path):
    """AG347 (LeviathanForCausalLM's generation_config.cache_implementation = 'static', which every generate of the
    class refuses, AG351, saved over a good folder and loaded without a word); the adopted class runs it."""
    name, native = models[0]
    native.save_pretrained(tmp_path / "good")
    held = native.generation_config.cache_implementation
    native.generation_config.cache_implementation = "static"
    try:
        refused(lambda: native.save_pretrained(tmp_path / "good"), "cache_implementation 'static' asks for a "
                                                                   "fixed-size cache")
    finally:
        native.generation_config.cache_implementation = held
    assert "cache_implementation" not in json.loads((tmp_path / "good" / "generation_config.json").read_text())
    name, adopted = models[1]
    held = adopted.generation_config.cache_implementation
    adopted.generation_config.cache_implementation = "static"
    try:
        adopted.save_pretrained(tmp_path / "adopted")
    finally:
        adopted.generation_config.cache_implementation = held
