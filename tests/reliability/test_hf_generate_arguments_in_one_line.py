"""Both of leviathan's Hugging Face classes end ``generate``'s arguments that transformers refuses with a traceback, or
takes as nonsense, in one UserError line naming the argument and the fix (issue 30 round 33, the Python API's try
log, AE ids).

transformers' own argument steps run inside one guard (``hf.generate_guard``: stop_strings without a tokenizer,
``cache_implementation='quantized'`` without optimum-quanto, a keyword it no longer reads; a model's own error is not
turned into an argument's); what fails in a step that runs the model, or per token, has a hand rule: settings that
need a tokenizer, a cache kind or processes the call lacks (``hf.generate_needs``), a cache of another model, batch
or length (``hf.generate_cache``), the caller's processors, criteria and prefix function (``hf.generate_callables``,
``hf.generate_ids``), the kinds of the mask, negative prompt, assistant and model.generation_config
(``hf.generate_inputs``, ``hf.generate_arguments``), list settings as transformers lays them out (``hf.setting_ids``)
and the counts, switches and watermark of the generation rule, also in generation_config.json (``hf.generation_file``).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from hf_pair_support import PROMPT, refused, tiny_pair
from hf_pair_support import generate_call as _generate

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

VOCAB, LIMIT = 64, 32


@pytest.fixture(scope="module")
def models():
    return tiny_pair(VOCAB, LIMIT)


def _cache(rows: int, heads: int, length: int, width: int):
    from transformers import DynamicCache

    cache = DynamicCache()
    cache.update(torch.zeros(rows, heads, length, width), torch.zeros(rows, heads, length, width), 0)
    return cache


def _processors(*items):
    from transformers import LogitsProcessorList

    return LogitsProcessorList(items)


def _criteria(*items):
    from transformers import StoppingCriteriaList

    return StoppingCriteriaList(items)


def test_transformers_refusal_of_an_argument_is_one_line_and_a_models_own_error_is_not(models, monkeypatch):
    """AE80 (a keyword transformers 5 no longer reads), AE32 (quantized without optimum-quanto): the guard; a
    ValueError of the model's forward stays the ValueError it is (a bug to see, not an argument's fault)."""
    import importlib.util

    from leviathan.errors import UserError

    for name, model in models:
        refused(_generate(model, use_model_defaults="no"), f"{name}.generate: transformers refuses these generation "
                f"arguments as it reads the keywords (The following `model_kwargs` are not used by the model: "
                f"['use_model_defaults']", ValueError)
        if importlib.util.find_spec("optimum") is None:
            refused(_generate(model, cache_implementation="quantized"), "as it makes the cache (You need to install "
                    "optimum-quanto")
        monkeypatch.setattr(model, "forward", lambda *a, **k: (_ for _ in ()).throw(ValueError("the model's own")))
        with pytest.raises(ValueError, match="the model's own") as caught:
            model.generate(PROMPT, max_new_tokens=2)
        assert not isinstance(caught.value, UserError)
        monkeypatch.undo()


def test_memory_running_out_while_the_cache_is_made_is_not_told_as_the_arguments_fault(models, monkeypatch):
    """The cache step's guard takes RuntimeError (torch's "not compiled with CUDA", AE34); a full GPU there
    (torch.OutOfMemoryError, a RuntimeError) was told as "transformers refuses these generation arguments"."""
    from transformers import GenerationMixin

    def full(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(GenerationMixin, "_prepare_cache_for_generation", full)
    for name, model in models:
        with pytest.raises(torch.OutOfMemoryError, match="CUDA out of memory"):
            model.generate(PROMPT, max_new_tokens=2)


def test_what_a_setting_needs_and_the_call_lacks_is_named(models):
    """AE28, AE30, AE75 (stop_strings without a tokenizer, also in model.generation_config), AE86 (token_healing),
    AE31 (a static cache on LeviathanForCausalLM), AE34 (offloaded off CUDA), AE35, AE36 (synced_gpus)."""
    for name, model in models:
        for setting in ("stop_strings", "token_healing"):
            value = ["x"] if setting == "stop_strings" else True
            refused(_generate(model, **{setting: value}), f"{name}.generate: {setting}={value!r} ", ValueError)
        model.generation_config.stop_strings = ["x"]
        try:
            refused(_generate(model), "and no tokenizer is given; pass tokenizer=<the model's tokenizer>")
        finally:
            model.generation_config.stop_strings = None
        refused(_generate(model, synced_gpus="no"), f"{name}.generate: synced_gpus must be True or False", TypeError)
        refused(_generate(model, synced_gpus=True), "torch.distributed is not initialized (one process)", ValueError)
        if model.device.type != "cuda":
            refused(_generate(model, cache_implementation="offloaded"), f"{name}.generate: "
                    f"cache_implementation='offloaded' copies the cache between the CPU and a CUDA device")
    (native_name, native), (_, adopted) = models
    refused(_generate(native, cache_implementation="static"), f"{native_name}.generate: cache_implementation="
            f"'static' asks for a fixed-size cache")
    assert adopted.generate(PROMPT, max_new_tokens=2, cache_implementation="static").shape == (1, 5)


def test_an_argument_of_the_wrong_kind_is_named(models):
    """AE72, AE73 (model.generation_config a text or None), AE37 (assistant_model 'x'), AE321 (a list mask), AE60,
    AE397 (a list or numpy negative prompt), AE306 - AE308 (a class where an instance belongs), AE68, AE69 (ids and
    inputs_embeds of different shapes)."""
    from transformers import MaxLengthCriteria, TemperatureLogitsWarper, TextStreamer

    for name, model in models:
        own = model.generation_config
        for value in ("x", None):
            model.generation_config = value
            try:
                refused(_generate(model), f"{name}.generate: model.generation_config must be a transformers "
                        f"GenerationConfig, got {type(value).__name__}", TypeError)
            finally:
                model.generation_config = own
        cases = [(dict(assistant_model="x"), "assistant_model must be a model that generates"),
                 (dict(attention_mask=[[1, 1, 1]]), "attention_mask must be a (batch, length) tensor of 0 and 1, got "
                                                    "list"),
                 (dict(guidance_scale=2.0, negative_prompt_ids=[[5, 6]]), "negative_prompt_ids must be a (batch, "
                                                                         "length) integer tensor, got list"),
                 (dict(guidance_scale=2.0, negative_prompt_ids=np.array([[5, 6]])), "got ndarray"),
                 (dict(streamer=TextStreamer), "got the class TextStreamer, not an instance"),
                 (dict(logits_processor=_processors(TemperatureLogitsWarper)), "holding the class "
                                                                               "TemperatureLogitsWarper, not an "
                                                                               "instance"),
                 (dict(stopping_criteria=_criteria(MaxLengthCriteria)), "holding the class MaxLengthCriteria")]
        for keywords, said in cases:
            refused(_generate(model, **keywords), f"{name}.generate: ", TypeError)
            refused(_generate(model, **keywords), said)
    _, (name, adopted) = models
    embeds = adopted.get_input_embeddings()(torch.tensor([[1, 2, 3, 4, 5]])).detach()
    refused(_generate(adopted, inputs_embeds=embeds), f"{name}.generate: the ids given beside inputs_embeds are "
            f"(1, 3) (batch, length), and the embeddings (1, 5)", ValueError)
    assert adopted.generate(torch.tensor([[1, 2, 3, 4, 5]]), inputs_embeds=embeds, max_new_tokens=2).shape == (1, 7)


def test_a_cache_of_another_model_batch_or_length_is_named(models):
    """AE63 (4 kv heads against 2), AE64, AE65 (2 rows against 1), AE66, AE67 (6 positions against 3 ids), also as
    ``cache=`` (transformers 5's name); a cache of the prompt's first ids is still taken."""
    for name, model in models:
        width = 32 // 2
        refused(_generate(model, past_key_values=_cache(1, 4, 2, 8)), f"{name}.generate: past_key_values holds 4 kv "
                f"head(s) of width 8 per layer, and this model's attention has 2 of width {width}: it is another "
                f"model's cache", ValueError)
        refused(_generate(model, past_key_values=_cache(2, 2, 2, width)), f"{name}.generate: past_key_values was made "
                f"for 2 row(s), and the prompt has 1")
        refused(_generate(model, past_key_values=_cache(1, 2, 6, width)), f"{name}.generate: past_key_values holds 6 "
                f"position(s), and the prompt only 3 id(s)")
        refused(_generate(model, cache=_cache(2, 2, 2, width)), f"{name}.generate: cache was made for 2 row(s)")
        refused(_generate(model, cache="x"), f"{name}.generate: cache must be a transformers Cache", TypeError)
        with torch.no_grad():
            cache = model(PROMPT[:, :2], use_cache=True).past_key_values
        assert model.generate(PROMPT, past_key_values=cache, max_new_tokens=2).shape == (1, 5)


def test_the_callers_functions_are_held_to_what_the_decoding_loop_takes(models):
    """AE40, AE41 (a prefix function allowing nothing), AE44 (returning None), AE45 (of one argument), AE309, AE310,
    AE311 (a processor returning None, fewer columns, NaN), AE312 (a criterion returning a text), AE61, AE62 (a
    MaxLengthCriteria past the positions)."""
    from transformers import MaxLengthCriteria

    for name, model in models:
        api = f"{name}.generate: "
        refused(_generate(model, prefix_allowed_tokens_fn=lambda b, ids: []), f"{api}prefix_allowed_tokens_fn "
                f"returned no id for row 0", ValueError)
        refused(_generate(model, prefix_allowed_tokens_fn=lambda b, ids: None), f"{api}prefix_allowed_tokens_fn "
                f"returned NoneType None, not the allowed ids", TypeError)
        refused(_generate(model, prefix_allowed_tokens_fn=lambda b: [5]), f"{api}prefix_allowed_tokens_fn must take "
                f"two arguments (batch_id, ids)", TypeError)
        refused(_generate(model, logits_processor=_processors(lambda ids, scores: None)), f"{api}logits_processor[0] "
                f"returned NoneType None, not the scores", TypeError)
        refused(_generate(model, logits_processor=_processors(lambda ids, scores: scores[:, :5])),
                f"{api}logits_processor[0] returned a tensor of shape (1, 5), not the scores; return a tensor of the "
                f"scores' shape (1, {VOCAB})")
        refused(_generate(model, logits_processor=_processors(lambda ids, scores: scores * float("nan"))),
                f"{api}logits_processor[0] returned NaN scores", ValueError)
        refused(_generate(model, stopping_criteria=_criteria(lambda ids, scores: "x")), f"{api}stopping_criteria[0] "
                f"returned str 'x', not whether to stop", TypeError)
        refused(_generate(model, stopping_criteria=_criteria(MaxLengthCriteria(max_length=100))),
                f"{api}stopping_criteria[0] is MaxLengthCriteria(max_length=100), which takes the place of "
                f"max_new_tokens and reaches past the model's {LIMIT} positions", ValueError)
        out = model.generate(PROMPT, max_new_tokens=2, prefix_allowed_tokens_fn=lambda b, ids: [5],
                             logits_processor=_processors(lambda ids, scores: scores - 1.0),
                             stopping_criteria=_criteria(lambda ids, scores: torch.zeros(ids.shape[0], dtype=bool)))
        assert out[0, 3:].tolist() == [5, 5]


SETTINGS = [  # (keywords, what the line says, the error's kind)
    (dict(bad_words_ids=[[]]), "bad_words_ids [[]] is not a list of non-empty lists of token ids", ValueError),  # AE47
    (dict(bad_words_ids=((5,), (6, 7))), "bad_words_ids ((5,), (6, 7)) is not a list of non-empty lists", ValueError),
    (dict(bad_words_ids=[(5,), (6, 7)]), "bad_words_ids [(5,), (6, 7)] is not a list", ValueError),  # AE390, AE395
    (dict(sequence_bias={(): 1.0}), "sequence_bias {(): 1.0} is not a map of non-empty id tuples", ValueError),  # AE48
    (dict(sequence_bias={(5,): float("nan")}), "sequence_bias {(5,): nan} is not a map of non-empty id tuples to "
     "finite biases ({(id, ...): bias}): the bias nan is no finite number", ValueError),  # AE49
    (dict(sequence_bias={(5,): "x"}), "sequence_bias {(5,): 'x'} is not a map", ValueError),  # AE50
    # AE82-AE84: prompt-lookup and assisted decoding are refused as features since round 34 (generation_features)
    (dict(prompt_lookup_num_tokens=-1), "prompt_lookup_num_tokens=-1 asks for prompt-lookup decoding, which "
     "leviathan's classes do not support", ValueError),  # AE82
    (dict(prompt_lookup_num_tokens=3, max_matching_ngram_size=0), "prompt_lookup_num_tokens=3 asks for prompt-lookup "
     "decoding", ValueError),  # AE83
    (dict(num_assistant_tokens=-1), "num_assistant_tokens=-1 asks for assisted decoding", ValueError),  # AE84
    (dict(num_beams=2, early_stopping=1), "early_stopping 1 must be True or False, or 'never'", ValueError),  # AE392
    (dict(watermarking_config={"bias": "x"}), "watermarking_config's bias 'x' must be a finite number", TypeError),
]


@pytest.mark.parametrize("keywords, said, error", SETTINGS)
def test_a_setting_no_generation_can_use_is_refused_in_one_line(models, keywords, said, error):
    for name, model in models:
        refused(_generate(model, **keywords), f"{name}.generate: {said}", error)


def test_numpy_biases_are_taken_as_python_numbers(models):  # AE389, AE393
    for _, model in models:
        for bias in ({(np.int64(5),): np.float64(50.0)}, [[[5], np.float64(50.0)]]):
            assert model.generate(PROMPT, max_new_tokens=2, sequence_bias=bias)[0, 3:].tolist() == [5, 5]


@pytest.fixture(scope="module")
def saved(models, tmp_path_factory):
    root = tmp_path_factory.mktemp("saved-pair")
    for name, model in models:
        model.save_pretrained(root / name)
    return root


def _edited(saved, tmp_path, name, change):
    folder = tmp_path / name
    shutil.copytree(saved / name, folder)
    path = folder / "generation_config.json"
    path.write_text(json.dumps(change(json.loads(path.read_text()))))
    return folder


def test_the_settings_of_generation_config_json_are_held_to_the_same_rules(models, saved, tmp_path):
    """AE197, AE198 (stop_strings and a static cache from the file: refused at generate), AE200, AE201 (an empty
    banned word, a text watermark bias: refused at the load), AE204 (max_new_token, a misspelt max_new_tokens),
    AE212 (config.json's object in the file); a key of the caller's own is still kept."""
    from leviathan.errors import UserError
    from leviathan.hf import LeviathanForCausalLM, load_adopted

    (native_name, _), (adopted_name, _) = models
    loaders = {native_name: LeviathanForCausalLM.from_pretrained, adopted_name: load_adopted}
    for name, load in loaders.items():
        model = load(_edited(saved, tmp_path / "a", name, lambda g: {**g, "stop_strings": ["x"]}))
        refused(_generate(model), f"{name}.generate: stop_strings=['x'] ")
        for change, said in ((lambda g: {**g, "bad_words_ids": [[]]}, "bad_words_ids [[]] is not a list of non-empty "
                              "lists of token ids ([[id, ...], ...]); laid out as transformers' generate cannot read "
                              "it"),
                             (lambda g: {**g, "watermarking_config": {"bias": "x"}}, "watermarking_config's bias 'x' "
                              "must be a finite number"),
                             (lambda g: {**g, "max_new_token": 5}, "holds 'max_new_token', which is no generation "
                              "setting; it reads as a misspelt 'max_new_tokens'"),
                             (lambda g: json.loads((saved / name / "config.json").read_text()), "a key of a model's "
                              "config.json, not of a generation config")):
            folder = _edited(saved, tmp_path / str(len(said)), name, change)
            with pytest.raises(UserError, match="generation_config.json': ") as caught:
                load(folder)
            assert said in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
        kept = load(_edited(saved, tmp_path / "b", name, lambda g: {**g, "my_own_setting": 3}))
        assert kept.generate(PROMPT, max_new_tokens=2).shape == (1, 5)  # a key of the caller's own: taken
    static = _edited(saved, tmp_path / "c", native_name, lambda g: {**g, "cache_implementation": "static"})
    # refused at the load since round 34 (AG347: every generate refused it; the save wrote it without a word)
    refused(lambda: LeviathanForCausalLM.from_pretrained(static), "generation_config.json': cache_implementation "
            "'static' asks for a fixed-size cache, and LeviathanForCausalLM's attention runs on a growing one")
