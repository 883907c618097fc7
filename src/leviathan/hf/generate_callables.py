"""The caller's own functions in ``generate``'s ``logits_processor`` and ``stopping_criteria`` lists, held to what
the decoding loop takes from them, in both of leviathan's Hugging Face classes.

    kwargs.update(checked_callables(model, "LeviathanForCausalLM.generate", kwargs))
    # ArgumentTypeError: LeviathanForCausalLM.generate: logits_processor[0] returned NoneType None, not the scores;
    # return a tensor of the scores' shape (1, 300) (the scores given, changed) from it

Issue 30 round 33: a processor returning None was torch's raw "argmax(): argument 'input' must be Tensor" (AE309),
one returning 5 columns of 300 made ids among the first 5 without a word (AE310), one returning NaN made id 0 at each
position without a word (AE311); a criterion returning a text was transformers' raw "unsupported operand type(s) for
|" (AE312); a ``MaxLengthCriteria`` of the caller's past the model's positions (it takes the place of max_new_tokens)
ran until the forward refused a position_ids never passed (AE61, AE62).

Each function of the caller (not transformers' own processors and criteria, nor one taking more than the ids and
the scores) is wrapped: its result's kind and shape are read each token (no value, no device sync); its scores'
values once, at the first token (one sync per ``generate`` call). Footgun: a processor making NaN only later is not
seen.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from ..errors import ArgumentTypeError, ArgumentValueError


def checked_callables(model: Any, api: str, kwargs: dict) -> dict:
    """The ``logits_processor`` / ``stopping_criteria`` of ``kwargs`` with the caller's functions wrapped (module
    docstring), the same list kinds; after ``check_max_length_criteria``. Only the names given are returned."""
    check_max_length_criteria(model, api, kwargs.get("stopping_criteria"))
    found = {}
    for name, wrap, takes in (("logits_processor", _checked_processor, _two),
                              ("stopping_criteria", _checked_criterion, _callers)):
        value = kwargs.get(name)
        if isinstance(value, (list, tuple)) and any(takes(item) for item in value):
            kind = type(value) if isinstance(value, list) else list
            found[name] = kind(wrap(item, f"{api}: {name}[{i}]") if takes(item) else item
                               for i, item in enumerate(value))
    return found


def _callers(item: Any) -> bool:
    """Whether ``item`` is the caller's function of (ids, scores) (a criterion's may take ``**kwargs`` too), not one
    of transformers' classes."""
    if isinstance(item, type) or not callable(item) or type(item).__module__.startswith("transformers."):
        return False
    try:
        parameters = inspect.signature(item).parameters.values()
    except (TypeError, ValueError):
        return False
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters) == 2 and \
        all(p.kind != p.VAR_POSITIONAL for p in parameters)


def _two(item: Any) -> bool:
    """A processor transformers calls with (ids, scores) only: exactly two parameters (``LogitsProcessorList``)."""
    return _callers(item) and len(inspect.signature(item).parameters) == 2


def _checked_processor(function: Any, said: str):
    first = [True]

    def processor(input_ids, scores):
        result = function(input_ids, scores)
        if not isinstance(result, torch.Tensor) or result.shape != scores.shape:
            shown = f"a tensor of shape {tuple(result.shape)}" if isinstance(result, torch.Tensor) else \
                f"{type(result).__name__} {result!r:.30}"
            raise ArgumentTypeError(f"{said} returned {shown}, not the scores; return a tensor of the scores' shape "
                                    f"{tuple(scores.shape)} (the scores given, changed) from it")
        if first[0]:
            first[0] = False
            if not result.is_meta and bool(torch.isnan(result).any()):
                raise ArgumentValueError(f"{said} returned NaN scores, from which no token can be chosen; return "
                                         f"finite scores (-inf to rule a token out)")
        return result

    return processor


def _checked_criterion(function: Any, said: str):
    takes_more = any(p.kind == p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())

    def criterion(input_ids, scores, **kwargs):
        result = function(input_ids, scores, **kwargs) if takes_more else function(input_ids, scores)
        if not isinstance(result, bool) and not (isinstance(result, torch.Tensor) and result.dtype == torch.bool):
            raise ArgumentTypeError(f"{said} returned {type(result).__name__} {result!r:.30}, not whether to stop; "
                                    f"return True / False, or a bool tensor with one value per row")
        return result

    return criterion


def check_max_length_criteria(model: Any, api: str, criteria: Any) -> None:
    """``ArgumentValueError`` for a ``MaxLengthCriteria`` among ``criteria`` whose max_length is past the model's
    positions (it takes the place of generate's own, AE61, AE62)."""
    from transformers import MaxLengthCriteria

    from ..positions import model_positions

    if not isinstance(criteria, (list, tuple)):
        return
    limit = model_positions(model)
    for i, item in enumerate(criteria):
        length = getattr(item, "max_length", None) if isinstance(item, MaxLengthCriteria) else None
        if isinstance(limit, int) and isinstance(length, int) and length > limit:
            raise ArgumentValueError(f"{api}: stopping_criteria[{i}] is MaxLengthCriteria(max_length={length}), which "
                                     f"takes the place of max_new_tokens and reaches past the model's {limit} "
                                     f"positions (max_position_embeddings); pass max_length <= {limit} to it, or "
                                     f"leave it out and pass max_new_tokens")
