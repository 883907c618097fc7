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
Footgun: only the lengths, counts and sampling numbers listed there are checked; combinations transformers only warns
about (``top_k`` without ``do_sample``) stay its warnings.
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentTypeError, ArgumentValueError
from ..positions import check_generation_room, model_positions
from .generation_file import _RANGES, _WHOLE, generation_value_problem

# the settings read here: those of the file's rule, and the switch that makes temperature and top_p matter
_NAMES = (*_WHOLE, *_RANGES, "do_sample")
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


def check_generate_arguments(model: Any, api: str, inputs: Any, generation_config: Any, kwargs: dict) -> None:
    """A UserError (``ArgumentValueError`` / ``ArgumentTypeError``) naming the argument and its fix when ``generate``
    would fail inside transformers or run past the model's positions (the module docstring's findings)."""
    _check_kinds(api, inputs, generation_config, kwargs)
    values = generation_values(model, generation_config, kwargs)
    _check_each(api, values)
    _check_sampling(api, values)
    _refuse_meta_inputs(model, api, inputs, kwargs)
    _check_lengths(model, api, values, _Prompt(inputs, kwargs))


def _check_kinds(api: str, inputs: Any, generation_config: Any, kwargs: dict) -> None:
    """``ArgumentTypeError`` for a prompt that is no (batch, length) tensor (a list, 1-D ids: transformers' raw
    AttributeError / IndexError) or a ``generation_config`` that is no ``GenerationConfig`` ('x': its AttributeError);
    siblings of round 31's AA93."""
    from transformers import GenerationConfig

    if generation_config is not None and not isinstance(generation_config, GenerationConfig):
        raise ArgumentTypeError(f"{api}: generation_config must be a transformers GenerationConfig, got "
                                f"{type(generation_config).__name__} {generation_config!r:.40}; pass "
                                f"GenerationConfig(...), the settings as keywords, or leave it out")
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
        number = is_integer(value) if name in _WHOLE else (isinstance(value, (int, float)) and not
                                                           isinstance(value, bool))
        error = ArgumentValueError if number else ArgumentTypeError
        said = problem.replace("(or null)", "(or None)").replace("true or false", "True or False")  # Python's words
        raise error(f"{api}: {said}; {_fix(name, where)}")


def _check_sampling(api: str, values: dict) -> None:
    """With ``do_sample``, a temperature or top_p of 0 leaves nothing to sample from (transformers' raw ValueError
    from its logits processors); greedy decoding ignores both."""
    if values.get("do_sample", (False, ""))[0] is not True:
        return
    for name, fix in (("temperature", "pass temperature > 0, or do_sample=False for the likeliest tokens"),
                      ("top_p", "pass top_p > 0 (1.0 keeps every token), or do_sample=False")):
        value, where = values.get(name, (None, ""))
        if value is not None and value == 0:
            raise ArgumentValueError(f"{api}: {name}=0 with do_sample=True leaves no token to sample; {fix}")


def _refuse_meta_inputs(model: Any, api: str, inputs: Any, kwargs: dict) -> None:
    """The prompt (ids, embeddings, mask) on the meta device (no values) given to a model that has values: torch's
    "Tensor.item() cannot be called on meta tensors" from transformers' mask code (AA626, AA646); forward refuses
    them (round 30, Y66)."""
    from ..meta_device import is_meta, refuse_meta

    if is_meta(model):
        return
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
