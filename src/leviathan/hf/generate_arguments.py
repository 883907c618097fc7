"""``generate``'s arguments held to what a generation can use, before transformers runs: one check for both of
leviathan's Hugging Face classes (``LeviathanForCausalLM`` and the adopted classes of ``hf.adoption``).

    check_generate_arguments(model, "LeviathanForCausalLM.generate", inputs, generation_config, kwargs)
    # ArgumentValueError: LeviathanForCausalLM.generate: max_new_tokens 0 must be a whole number >= 1 (or null); ...

Issue 30 round 31: transformers' own checks ended in its raw errors or none: ``max_new_tokens`` 0, -1 and '5' were
its ValueError / TypeError (AA90, AA91, AA93, AA523), ``max_length`` under the prompt its ValueError (AA97),
``num_beams=0`` a ZeroDivisionError (AA621, AA647), ``temperature=nan`` with sampling its logits processor's ValueError
(AA622), a prompt on the meta device torch's "Tensor.item() cannot be called on meta tensors" (AA626, AA646);
``min_new_tokens`` above what ``max_new_tokens`` allows, ``min_length`` past it and ``min_new_tokens=-1`` were taken
with at most a warning (AA89, AA619, AA620, AA648). The positions a generation reaches are counted from what the
prompt fills: a cached prefix (``past_key_values`` with only the new ids, AA105, AA649) and ``inputs_embeds`` (counted
as 0 ids, AA106, AA108) ran past the model's positions or named a wrong room (``positions.check_generation_room``).

The values are the ones transformers would use (a keyword, else the ``generation_config`` given, else the model's),
each held to ``generation_file.generation_value_problem``'s rule (the rule its generation_config.json is held to).
Issue 30 round 32: settings transformers refused with a traceback or took as nonsense (``num_return_sequences``
against the beams, ``typical_p`` 0, ``min_p`` 2, ``num_beam_groups``, ``early_stopping='maybe'``, a NaN
``length_penalty`` / ``guidance_scale`` / decay factor, ``epsilon_cutoff`` 1.5, ``max_time`` -1, switches given as 'yes'
or 1) are held to that rule too, then to transformers' own ``GenerationConfig.validate`` on the merged settings
(``_check_merged``); numpy scalars are taken as the Python values they equal (``_plain_settings``). The ids inside list
settings are ``generate_ids``' to check, the prompt, mask, cache and callables ``generate_inputs``'.

Footgun: only the lengths, counts, sampling numbers and switches listed there are checked by their own rule;
combinations transformers only warns about (``top_k`` without ``do_sample``) stay its warnings.
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentTypeError, ArgumentValueError
from ..positions import check_generation_room, model_positions
from .generation_file import _WHOLE, SAMPLING_ZEROS, SETTINGS, generation_value_problem

# the settings read here: those of the file's rule (lengths, counts, sampling numbers, switches)
_NAMES = SETTINGS
_DEFAULT_NEW = 20  # transformers' max_length when none is set anywhere: 20 new tokens (capped at the positions)


def generation_values(model: Any, generation_config: Any, kwargs: dict) -> dict[str, tuple[Any, str]]:
    """name -> (value, where it came from) for ``_NAMES``, as transformers merges them: a keyword of ``generate``,
    else the ``generation_config`` passed, else ``model.generation_config``; None values are left out."""
    found: dict[str, tuple[Any, str]] = {}
    sources = ((kwargs.get, "argument"), (_getter(generation_config), "generation_config"),
               (_getter(getattr(model, "generation_config", None)), "model.generation_config"))
    for name in _NAMES:
        for get, where in sources:
            value = get(name)
            if value is not None:
                found[name] = (value, where)
                break
    return found


def _getter(config: Any):
    return (lambda name: None) if config is None else (lambda name: getattr(config, name, None))


def check_generate_arguments(model: Any, api: str, inputs: Any, generation_config: Any, kwargs: dict) -> Any:
    """A UserError (``ArgumentValueError`` / ``ArgumentTypeError``) naming the argument and its fix when ``generate``
    would fail inside transformers, run past the model's positions, or take nonsense (the module docstring's
    findings); the inputs besides the settings are ``generate_inputs``' to check. Returns the ``generation_config``
    to hand transformers; ``kwargs`` is made ready in place: numpy scalars as Python's own (``_plain_settings``), a
    ``prefix_allowed_tokens_fn`` wrapped to name an id past the vocabulary (``generate_ids``)."""
    from .generate_callables import checked_callables
    from .generate_ids import check_listed_ids_layout, checked_prefix_function
    from .generate_inputs import check_generate_inputs

    from .generation_features import check_generate_features

    _check_kinds(model, api, inputs, generation_config, kwargs)
    generation_config = _plain_settings(generation_config, kwargs)
    check_generate_features(model, api, generation_config, kwargs)  # the allow-list (round 34)
    values = generation_values(model, generation_config, kwargs)
    _check_each(api, values)
    _check_sampling(api, values)
    check_listed_ids_layout(model, api, generation_config, kwargs)  # before the merge reads them (round 34, AG175)
    _check_merged(model, api, generation_config, kwargs, inputs)
    _refuse_meta_inputs(model, api, inputs, kwargs)
    new = values.get("max_new_tokens", (None,))[0]
    new = new if new is not None else (_DEFAULT_NEW if "max_length" not in values else None)
    expand = max(v if isinstance(v := values.get(name, (1,))[0], int) and v > 0 else 1
                 for name in ("num_beams", "num_return_sequences"))  # the rows transformers makes of each (AG413)
    check_generate_inputs(model, api, inputs, kwargs, values.get("guidance_scale", (None,))[0], new, expand)
    _check_lengths(model, api, values, _Prompt(inputs, kwargs))
    if kwargs.get("prefix_allowed_tokens_fn") is not None:
        vocab = getattr(getattr(model, "config", None), "vocab_size", None)
        kwargs["prefix_allowed_tokens_fn"] = checked_prefix_function(kwargs["prefix_allowed_tokens_fn"], vocab, api)
    cleaned = values.get("remove_invalid_values", (False,))[0] is True  # transformers' own cleaning (AG400)
    ids = inputs if inputs is not None else kwargs.get("input_ids")
    length = ids.shape[1] if isinstance(ids, torch.Tensor) and ids.dim() == 2 else None
    # the caller's processors and criteria (round 33)
    kwargs.update(checked_callables(model, api, kwargs, cleaned, length))
    return generation_config


# generate's parameters after (inputs, generation_config), in transformers' order
_POSITIONAL = ("logits_processor", "stopping_criteria", "prefix_allowed_tokens_fn", "synced_gpus", "assistant_model",
               "streamer", "negative_prompt_ids", "negative_prompt_attention_mask", "custom_generate")


def positional_into_keywords(api: str, args: tuple, kwargs: dict) -> None:
    """``generate``'s arguments given by position after ``generation_config`` moved into ``kwargs`` (in place) under
    their names, so that the same checks read them: by position they went to transformers unchecked (a processor
    returning None, a prefix function's id 400, synced_gpus=True in one process, streamer=5: raw errors; issue 30
    round 34, AG376-AG382)."""
    if len(args) > len(_POSITIONAL):
        raise ArgumentTypeError(f"{api}: takes at most {len(_POSITIONAL) + 2} arguments by position (inputs, "
                                f"generation_config, {', '.join(_POSITIONAL)}), got {len(args) + 2}; pass the "
                                f"settings as keywords")
    for name, value in zip(_POSITIONAL, args):
        if name in kwargs:
            raise ArgumentTypeError(f"{api}: {name} is given twice, by position and as a keyword; pass it once")
        kwargs[name] = value


def _plain_settings(generation_config: Any, kwargs: dict) -> Any:
    """numpy's ints, bools and floats among ``kwargs`` (in place) and the settings of ``generation_config`` (a copy,
    when it holds any) as Python's own. transformers takes ``np.int64(3)`` as a length, but reads ``do_sample=
    np.bool_(True)`` as not True (greedy) without a word; both were refused here as "must be a whole number" / "True or
    False" for the number they equal (issue 30 round 32, AC2, AC19, AC37, AC54, AC415): a value read from a numpy
    array is taken as the Python value it equals, as ``integers.is_integer`` takes it elsewhere."""
    import copy

    import numpy as np

    from .configuration import _plain

    numpy_scalar = (np.generic,)
    for name, value in list(kwargs.items()):
        if isinstance(value, numpy_scalar) or (isinstance(value, (list, tuple, dict)) and _holds_numpy(value)):
            kwargs[name] = _plain(value)
    if generation_config is None:
        return None
    held = {name: getattr(generation_config, name, None) for name in _NAMES}
    if not any(isinstance(value, numpy_scalar) for value in held.values()):
        return generation_config
    generation_config = copy.deepcopy(generation_config)
    for name, value in held.items():
        if isinstance(value, numpy_scalar):
            setattr(generation_config, name, _plain(value))
    return generation_config


def _holds_numpy(value: Any) -> bool:
    """Whether a numpy scalar is inside ``value`` (lists, tuples, a dict's keys and values, nested): a numpy bias in
    ``sequence_bias={(5,): np.float64(1.0)}`` (or its list of pairs) was torch's raw "Index put requires the source
    and destination dtypes match" (issue 30 round 33, AE389, AE393)."""
    import numpy as np

    if isinstance(value, np.generic):
        return True
    if isinstance(value, dict):
        return any(_holds_numpy(k) or _holds_numpy(v) for k, v in value.items())
    return isinstance(value, (list, tuple)) and any(_holds_numpy(v) for v in value)


def _check_merged(model: Any, api: str, generation_config: Any, kwargs: dict, inputs: Any = None) -> None:
    """The settings as transformers merges them (``_prepare_generation_config``: the keywords over the
    ``generation_config`` given over the model's) held to transformers' own ``GenerationConfig.validate``, its refusal
    turned into one line: ``num_return_sequences`` above ``num_beams`` or above 1 with greedy decoding (AC11, AC12,
    AC46, AC47), ``early_stopping='maybe'`` (AC413) were its raw ValueError (issue 30 round 32). Its warnings about
    combinations stay warnings. Then the generation mode: one transformers moved to code on the Hub
    (``num_beam_groups`` > 1: group beam search, AC26, AC61) is named with the setting that asks for it, unless the
    caller lets that code run (``trust_remote_code`` / ``custom_generate``); and ``exponential_decay_length_penalty``
    with no ``eos_token_id`` to push toward (torch's raw "Could not infer dtype of NoneType", AC123). One copy of the
    settings per call, as transformers makes."""
    from .generate_needs import check_generate_needs

    # its refusal is ``generate_guard``'s line (issue 30 round 33: its TypeError and AttributeError too)
    merged, _ = model._prepare_generation_config(generation_config, **kwargs)
    _check_mode(api, merged, kwargs)
    check_generate_needs(model, api, merged, kwargs, inputs)  # a tokenizer, a cache kind, synced_gpus (round 33)
    if merged.exponential_decay_length_penalty is not None and merged.eos_token_id is None:
        raise ArgumentValueError(f"{api}: exponential_decay_length_penalty raises the score of eos_token_id, and none "
                                 f"is set; pass eos_token_id= (the tokenizer's end-of-text id), or leave "
                                 f"exponential_decay_length_penalty out")


# generation modes transformers moved to code on the Hub -> the settings that ask for them
_HUB_MODES = {"group_beam_search": ("num_beam_groups", "pass num_beam_groups=1 (plain beam search)"),
              "contrastive_search": ("penalty_alpha", "leave penalty_alpha out (or 0)"),
              "constrained_beam_search": ("force_words_ids", "leave force_words_ids and constraints out"),
              "dola_generation": ("dola_layers", "leave dola_layers out")}


def _check_mode(api: str, merged: Any, kwargs: dict) -> None:
    """``ArgumentValueError`` for a generation mode transformers no longer runs itself (``_HUB_MODES``): it loads
    code from the Hub only with ``trust_remote_code=True``, and said so in its raw ValueError (AC26, AC61)."""
    if kwargs.get("trust_remote_code") or kwargs.get("custom_generate") is not None:
        return
    mode = merged.get_generation_mode(kwargs.get("assistant_model"))
    if (found := _HUB_MODES.get(getattr(mode, "value", mode))) is None:
        return
    name, fix = found
    said = str(getattr(mode, "value", mode)).replace("_", " ")
    raise ArgumentValueError(f"{api}: {name}={getattr(merged, name, None)!r} asks for {said}, "
                             f"which transformers no longer runs itself (it loads that code from the Hub); {fix}, or "
                             f"pass trust_remote_code=True to run the Hub's code")


def _check_kinds(model: Any, api: str, inputs: Any, generation_config: Any, kwargs: dict) -> None:
    """``ArgumentTypeError`` for a prompt that is no (batch, length) tensor (a list, 1-D ids: transformers' raw
    AttributeError / IndexError) or a ``generation_config`` that is no ``GenerationConfig`` ('x': its AttributeError);
    siblings of round 31's AA93. Issue 30 round 33: ``model.generation_config`` set to 'x' or None, and an
    ``assistant_model`` that is no model ('x'), were transformers' raw AttributeError (AE72, AE73, AE37)."""
    from transformers import GenerationConfig

    if generation_config is not None and not isinstance(generation_config, GenerationConfig):
        raise ArgumentTypeError(f"{api}: generation_config must be a transformers GenerationConfig, got "
                                f"{type(generation_config).__name__} {generation_config!r:.40}; pass "
                                f"GenerationConfig(...), the settings as keywords, or leave it out")
    own = getattr(model, "generation_config", None)
    if not isinstance(own, GenerationConfig):  # 'x' or None set on the model: transformers' raw AttributeError
        raise ArgumentTypeError(f"{api}: model.generation_config must be a transformers GenerationConfig, got "
                                f"{type(own).__name__} {own!r:.40}; set model.generation_config = "
                                f"GenerationConfig() (or GenerationConfig.from_model_config(model.config))")  # AE72
    assistant = kwargs.get("assistant_model")
    if assistant is not None and not (isinstance(assistant, torch.nn.Module) and hasattr(assistant, "config") and
                                      callable(getattr(assistant, "generate", None))):
        raise ArgumentTypeError(f"{api}: assistant_model must be a model that generates (a transformers model "
                                f"sharing this model's tokenizer), got {type(assistant).__name__} "
                                f"{assistant!r:.40}; pass one, or leave it out")  # AE37: its raw AttributeError
    for name, value in (("inputs", inputs), ("input_ids", kwargs.get("input_ids"))):
        if value is not None and not (isinstance(value, torch.Tensor) and value.dim() == 2):
            shown = f"a {value.dim()}-D tensor" if isinstance(value, torch.Tensor) else \
                f"{type(value).__name__} {value!r:.40}"
            raise ArgumentTypeError(f"{api}: {name} must be a (batch, length) tensor of token ids, got {shown}; "
                                    f"pass torch.tensor([ids]) (one row per prompt)")


def _fix(name: str, where: str) -> str:
    if where == "argument":
        return f"pass a usable {name}, or leave it out"
    if where == "generation_config":
        return f"set the generation_config's {name} to a usable value, or leave generation_config out"
    return f"set model.generation_config.{name} to a usable value (or None), or pass {name}= to generate"


def _check_each(api: str, values: dict) -> None:
    """Each value by its own rule (``generation_value_problem``): a text where a number belongs is the TypeError."""
    from ..integers import is_integer

    for name, (value, where) in values.items():
        problem = generation_value_problem({name: value})
        if problem is None:
            continue
        number = is_integer(value) if name in _WHOLE else (isinstance(value, (int, float, list, tuple)) and not
                                                           isinstance(value, bool))
        error = ArgumentValueError if number else ArgumentTypeError
        said = problem.replace("(or null)", "(or None)").replace("true or false", "True or False")  # Python's words
        raise error(f"{api}: {said}; {_fix(name, where)}")


def _check_sampling(api: str, values: dict) -> None:
    """With ``do_sample``, a temperature or top_p of 0 leaves nothing to sample from (transformers' raw ValueError
    from its logits processors); greedy decoding ignores both."""
    if values.get("do_sample", (False, ""))[0] is not True:
        return
    fixes = {"temperature": "pass temperature > 0, or do_sample=False for the likeliest tokens",
             "top_p": "pass top_p > 0 (1.0 keeps every token), or do_sample=False",
             "typical_p": "pass typical_p > 0 (1.0 keeps every token), or do_sample=False"}  # AC23, AC58, AC406
    for name, fix in ((name, fixes[name]) for name in SAMPLING_ZEROS):
        value, where = values.get(name, (None, ""))
        if value is not None and value == 0:
            raise ArgumentValueError(f"{api}: {name}=0 with do_sample=True leaves no token to sample; {fix}")


def _refuse_meta_inputs(model: Any, api: str, inputs: Any, kwargs: dict) -> None:
    """The prompt (ids, embeddings, mask) on the meta device (no values) given to a model that has values: torch's
    "Tensor.item() cannot be called on meta tensors" from transformers' mask code (AA626, AA646); forward refuses
    them (round 30, Y66). A model on meta (shapes only): the adopted class's was torch's raw "Tensor on device meta
    is not on the expected device cpu!" (issue 30 round 34, AG274; the native class's forward named it, AG275)."""
    from ..meta_device import is_meta, refuse_meta

    if is_meta(model):
        refuse_meta(model, f"{api}: the model", "load it with its weights (load_adopted(DIR) / from_pretrained(DIR)), "
                    "or call model.to_empty(device='cpu') and load a state dict first")
    for name, value in (("inputs", inputs), *((k, kwargs.get(k)) for k in ("input_ids", "inputs_embeds",
                                                                             "attention_mask"))):
        if isinstance(value, torch.Tensor):
            refuse_meta(value, f"{api}: {name}", "pass it with values (on the model's device)")


class _Prompt:
    """What the prompt fills: ``counted``, the length transformers counts (ids, or embeddings: it subtracts them
    from max_length); ``filled``, the positions taken before the first new id (a cached prefix included);
    ``said``, those in words."""

    def __init__(self, inputs: Any, kwargs: dict):
        embeds, self.embeds = kwargs.get("inputs_embeds"), False
        ids = inputs if inputs is not None else kwargs.get("input_ids")
        if isinstance(embeds, torch.Tensor) and embeds.dim() == 3:
            self.counted, what, self.embeds = embeds.shape[1], "embeddings (inputs_embeds)", True
        elif isinstance(ids, torch.Tensor) and ids.dim() >= 1:
            self.counted, what = ids.shape[-1], "ids"
        else:
            self.counted, what = None, "ids"
        self.filled, self.said = self.counted, f"{self.counted:,} {what}" if self.counted is not None else ""
        cache = kwargs.get("past_key_values", kwargs.get("cache"))
        past = cache.get_seq_length() if hasattr(cache, "get_seq_length") else 0
        if self.counted is None or not isinstance(past, int) or past <= 0:
            return
        mask = kwargs.get("attention_mask")
        mask_length = mask.shape[-1] if isinstance(mask, torch.Tensor) and mask.dim() == 2 else None
        if (mask_length is None or mask_length == self.counted) and self.counted > past:
            return  # the whole sequence, its first ``past`` cached (transformers slices them off)
        # only the new ids after the cache (the mask covers both: transformers does not slice them)
        self.filled = max(past + self.counted, mask_length or 0)
        self.said = f"{past:,} cached positions and {self.counted:,} {what}"


def _check_lengths(model: Any, api: str, values: dict, prompt: _Prompt) -> None:
    """max_length above the prompt, min_new_tokens / min_length within what max_new_tokens / max_length allow, and
    the positions reached within the model's (``check_generation_room``, counted from ``prompt.filled``)."""
    if prompt.counted is None:
        return
    limit = model_positions(model)
    max_new, where_new = values.get("max_new_tokens", (None, ""))
    max_length, where_length = values.get("max_length", (None, ""))
    if max_new is not None:
        new, bound = max_new, f"max_new_tokens={max_new:,}"
    elif max_length is not None:
        if max_length <= prompt.counted:
            raise ArgumentValueError(f"{api}: max_length={max_length:,} counts the prompt, and the prompt has "
                                     f"{prompt.said}, so nothing is left to generate; pass max_new_tokens (the new "
                                     f"ids alone), or max_length > {prompt.counted:,}")
        new, bound = max_length - prompt.counted, f"max_length={max_length:,}"
    else:
        # transformers: 20 more than the ids it counts (none for embeddings), capped at the positions
        counted = 0 if prompt.embeds else prompt.counted
        total = _DEFAULT_NEW + counted
        new, bound = max((min(total, limit) if limit is not None else total) - counted, 1), "the default max_length"
    min_new, _ = values.get("min_new_tokens", (None, ""))
    if min_new is not None and min_new > new:
        raise ArgumentValueError(f"{api}: min_new_tokens={min_new:,} is more than the {new:,} new ids {bound} "
                                 f"allows; pass min_new_tokens <= {new:,}, or a larger max_new_tokens")
    min_length, _ = values.get("min_length", (None, ""))
    if min_length is not None and min_new is None and min_length > prompt.counted + new:
        raise ArgumentValueError(f"{api}: min_length={min_length:,} (it counts the prompt's {prompt.said}) is more "
                                 f"than the {prompt.counted + new:,} tokens {bound} allows; pass min_length <= "
                                 f"{prompt.counted + new:,}, or min_new_tokens (the new ids alone)")
    if limit is not None and prompt.filled + new > limit:
        # the argument the caller gave names the fix; max_length counts what the prompt fills only without a cache
        by_length = max_new is None and max_length is not None and prompt.filled == prompt.counted
        given = max_new if max_new is not None else (None if by_length else new)
        check_generation_room(limit, prompt.filled + new, prompt.filled, given, api, prompt.said)
