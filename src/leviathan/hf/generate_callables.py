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

import numpy as np
import torch

from ..errors import ArgumentTypeError, ArgumentValueError


def checked_callables(model: Any, api: str, kwargs: dict, cleaned: bool = False, length: int | None = None) -> dict:
    """The ``logits_processor`` / ``stopping_criteria`` of ``kwargs`` with the caller's functions wrapped (module
    docstring), the same list kinds; after ``check_max_length_criteria``. Only the names given are returned. A
    function of the caller's that cannot be called with (ids, scores) is refused before any token (issue 30 round 34:
    three required arguments, transformers' raw TypeError at the first token, AG52). ``cleaned``: remove_invalid_values
    is on, so transformers' own processor, run after the caller's, turns NaN and infinite scores into numbers; the
    first scores' NaN / inf rule then does not hold (it refused what the caller asked to have cleaned, AG400)."""
    check_max_length_criteria(model, api, kwargs.get("stopping_criteria"), length)
    for name in ("logits_processor", "stopping_criteria"):
        check_transformers_instances(model, api, name, kwargs.get(name))
    found = {}
    import functools

    processor = functools.partial(_checked_processor, read_first=not cleaned)
    for name, wrap in (("logits_processor", processor), ("stopping_criteria", _checked_criterion)):
        value = kwargs.get(name)
        if isinstance(value, (list, tuple)) and any(_callers(item) for item in value):
            for i, item in enumerate(value):
                _check_arity(item, f"{api}: {name}[{i}]")
            kind = type(value) if isinstance(value, list) else list
            found[name] = kind(wrap(item, f"{api}: {name}[{i}]") if _callers(item) else item
                               for i, item in enumerate(value))
    return found


def _callers(item: Any) -> bool:
    """Whether ``item`` is the caller's function (not one of transformers' classes, whose type transformers matches
    against its defaults) with a signature to read. Issue 30 round 34: one taking ``**kwargs`` is the caller's too
    (it was not wrapped, and its None result torch's raw TypeError, AG53)."""
    if isinstance(item, type) or not callable(item) or type(item).__module__.startswith("transformers."):
        return False
    try:
        inspect.signature(item)
    except (TypeError, ValueError):
        return False
    return True


def _check_arity(item: Any, said: str) -> None:
    if not _callers(item):
        return
    try:
        inspect.signature(item).bind(None, None)
    except TypeError:
        raise ArgumentTypeError(f"{said} takes {inspect.signature(item)}, and the decoding loop calls it with (ids, "
                                f"scores); make it a function of (input_ids, scores) (more parameters need "
                                f"defaults)") from None


def _checked_processor(function: Any, said: str, read_first: bool = True):
    first = [read_first]

    def processor(input_ids, scores):
        result = function(input_ids, scores)
        if not isinstance(result, torch.Tensor) or result.shape != scores.shape:
            shown = f"a tensor of shape {tuple(result.shape)}" if isinstance(result, torch.Tensor) else \
                f"{type(result).__name__} {result!r:.30}"
            raise ArgumentTypeError(f"{said} returned {shown}, not the scores; return a tensor of the scores' shape "
                                    f"{tuple(scores.shape)} (the scores given, changed) from it")
        if result.device != scores.device:  # moved to meta: torch's raw device error (round 34, AG366)
            raise ArgumentTypeError(f"{said} returned scores on {result.device}, and the scores given are on "
                                    f"{scores.device}; return them on {scores.device} (the scores given, changed)")
        if not result.dtype.is_floating_point:  # scores truncated to integers, taken (round 34, AG46)
            raise ArgumentTypeError(f"{said} returned a {result.dtype} tensor, not the scores; return "
                                    f"{scores.dtype} scores (the scores given, changed)")
        if first[0]:
            first[0] = False
            _check_first_scores(result, said)
        return result

    return processor


def _check_first_scores(result: torch.Tensor, said: str) -> None:
    """At the first token only (one device sync per call): NaN scores (round 33), or a row of scores all -inf, which
    forbids every token (greedy decoding emitted id 0 without a word, AG49; sampling was torch's raw multinomial
    error, AG50: issue 30 round 34). Footgun: made only at a later token, neither is seen (AG51)."""
    if result.is_meta or result.numel() == 0:
        return
    nan, closed, high = torch.stack([torch.isnan(result).any(), torch.isneginf(result).all(dim=-1).any(),
                                     torch.isposinf(result).any()]).tolist()
    if nan:
        raise ArgumentValueError(f"{said} returned NaN scores, from which no token can be chosen; return "
                                 f"finite scores (-inf to rule a token out)")
    if high:  # +inf everywhere: greedy took id 0 without a word (round 34, AG369)
        raise ArgumentValueError(f"{said} returned +inf scores, which no softmax can rank; return finite scores "
                                 f"(-inf to rule a token out)")
    if closed:
        raise ArgumentValueError(f"{said} returned a row of scores all -inf, which rules out every token, so none "
                                 f"can be chosen; leave at least one token finite in each row")


def _checked_criterion(function: Any, said: str):
    takes_more = any(p.kind == p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())

    def criterion(input_ids, scores, **kwargs):
        result = function(input_ids, scores, **kwargs) if takes_more else function(input_ids, scores)
        if isinstance(result, np.bool_):  # numpy's bool is a bool (round 34, AG358)
            result = bool(result)
        if not isinstance(result, bool) and not (isinstance(result, torch.Tensor) and result.dtype == torch.bool):
            raise ArgumentTypeError(f"{said} returned {type(result).__name__} {result!r:.30}, not whether to stop; "
                                    f"return True / False, or a bool tensor with one value per row")
        if isinstance(result, torch.Tensor) and tuple(result.shape) not in ((), (input_ids.shape[0],)):
            # 2 answers for 1 row were broadcast without a word (issue 30 round 34, AG57)
            raise ArgumentValueError(f"{said} returned a bool tensor of shape {tuple(result.shape)}, and the batch "
                                     f"has {input_ids.shape[0]} row(s); return one value per row (shape "
                                     f"({input_ids.shape[0]},)), or True / False for all")
        return result

    return criterion


def check_max_length_criteria(model: Any, api: str, criteria: Any, length: int | None = None) -> None:
    """``ArgumentValueError`` for a ``MaxLengthCriteria`` among ``criteria`` whose max_length is past the model's
    positions (it takes the place of generate's own, AE61, AE62), or not past the prompt's ``length`` ids: one token
    was made past a length already reached without a word (issue 30 round 34, AG260; max_length=2 as a keyword is
    refused)."""
    from transformers import MaxLengthCriteria

    from ..positions import model_positions

    if not isinstance(criteria, (list, tuple)):
        return
    limit = model_positions(model)
    for i, item in enumerate(criteria):
        most = getattr(item, "max_length", None) if isinstance(item, MaxLengthCriteria) else None
        if isinstance(limit, int) and isinstance(most, int) and most > limit:
            raise ArgumentValueError(f"{api}: stopping_criteria[{i}] is MaxLengthCriteria(max_length={most}), which "
                                     f"takes the place of max_new_tokens and reaches past the model's {limit} "
                                     f"positions (max_position_embeddings); pass max_length <= {limit} to it, or "
                                     f"leave it out and pass max_new_tokens")
        if isinstance(length, int) and isinstance(most, int) and most <= length:
            raise ArgumentValueError(f"{api}: stopping_criteria[{i}] is MaxLengthCriteria(max_length={most}), and "
                                     f"the prompt already holds {length} ids; pass max_length > {length} (the "
                                     f"prompt's ids and the new ones), or leave it out and pass max_new_tokens")


# transformers' own processors' and criteria's attributes that hold token ids
_ID_ATTRIBUTES = ("eos_token_id", "suppress_tokens", "begin_suppress_tokens", "bad_word_ids")


def check_transformers_instances(model: Any, api: str, name: str, items: Any) -> None:
    """transformers' own processors and criteria the caller builds, held to what generate's keywords of the same
    settings are held to (issue 30 round 34): an id past the vocabulary inside ``SuppressTokensLogitsProcessor``,
    ``ForcedEOSTokenLogitsProcessor``, ``EosTokenCriteria`` (taken without a word, AG255, AG256, AG258) or
    ``NoBadWordsLogitsProcessor`` (its raw ValueError at the first token, AG257), a ``MaxTimeCriteria`` of no time
    (AG259). Read once per call (a few ids)."""
    from transformers import MaxTimeCriteria

    from ..integers import is_integer

    if not isinstance(items, (list, tuple)):
        return
    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    for i, item in enumerate(items):
        if not type(item).__module__.startswith("transformers."):
            continue
        said = f"{api}: {name}[{i}] ({type(item).__name__})"
        if isinstance(item, MaxTimeCriteria) and not (isinstance(item.max_time, (int, float)) and item.max_time > 0):
            raise ArgumentValueError(f"{said} has max_time {item.max_time!r}, no time to generate in; pass a number "
                                     f"of seconds above 0")
        for attribute in _ID_ATTRIBUTES:
            value = getattr(item, attribute, None)
            if value is None or not is_integer(vocab):
                continue
            if isinstance(value, torch.Tensor):
                ids = [] if value.is_meta else value.reshape(-1).tolist()
            else:
                ids = [i for row in value for i in (row if isinstance(row, (list, tuple)) else [row])] \
                    if isinstance(value, (list, tuple)) else [value]
            if bad := [j for j in ids if not is_integer(j) or not 0 <= j < vocab]:
                raise ArgumentValueError(f"{said} holds {bad[0]!r} among its ids, which is not a token id of this "
                                         f"model (whole numbers 0 to {vocab - 1}); build it with the tokenizer's ids")
