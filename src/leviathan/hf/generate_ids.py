"""The token ids ``generate`` is given (``eos_token_id=``, ``pad_token_id=``, ... or the model's generation_config),
held to the model's vocabulary in both of leviathan's HF classes.

    check_generate_ids(model, generation_config, "LeviathanForCausalLM.generate")

``generate(..., eos_token_id=400)`` on a model of 300 ids generated to the end without a word, never able to stop at
an id the model cannot produce, and ``pad_token_id=-1`` was taken the same way (issue 30 round 31, AA623, AA624,
AA645), while the loaders and savers refuse such ids in config.json and generation_config.json (AA159, AA426;
``configuration.token_id_problem`` is the rule for all of them). The ids inside list settings (``suppress_tokens``,
``bad_words_ids``, ``sequence_bias``, ...) are held to ``setting_ids.setting_ids_problem`` the same way, and those a
``prefix_allowed_tokens_fn`` returns by ``checked_prefix_function`` (issue 30 round 32).
"""

from __future__ import annotations

from typing import Any

import torch


def check_generate_ids(model: Any, generation_config: Any, api: str) -> None:
    """``errors.ArgumentValueError`` (a UserError) naming ``api`` and the first of ``configuration.GENERATION_IDS`` of
    ``generation_config`` (generate's, its keywords merged in) that is not a token id of ``model``'s vocabulary
    (``config.vocab_size``); a tensor of ids is read once (a few values). Nothing is checked when the vocabulary is
    not a whole number."""
    from ..errors import ArgumentValueError
    from ..integers import is_integer
    from .configuration import GENERATION_IDS, token_id_problem
    from .setting_ids import LISTED_IDS, setting_ids_problem

    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    if generation_config is None or not is_integer(vocab):
        return
    for name in GENERATION_IDS:
        value = getattr(generation_config, name, None)
        if isinstance(value, torch.Tensor) and value.is_meta:  # torch's raw NotImplementedError (round 34, AG169)
            raise ArgumentValueError(f"{api}: {name} is a tensor on the meta device (no values); pass the id as a "
                                     f"number (or a tensor with values), or leave it out")
        if isinstance(value, torch.Tensor):  # transformers takes a tensor of ids too
            value = value.reshape(-1).tolist()
            value = value[0] if isinstance(value, list) and len(value) == 1 and name != "eos_token_id" else value
        if (problem := token_id_problem(name, value, vocab)) is not None:
            raise ArgumentValueError(f"{api}: {problem}; pass the tokenizer's id (below {vocab}) as {name}, or leave "
                                     f"it out (and set model.generation_config.{name} to such an id, or None)")
    for name in LISTED_IDS:  # issue 30 round 32: suppress_tokens, bad_words_ids, ... (``setting_ids``)
        if (problem := setting_ids_problem(name, getattr(generation_config, name, None), vocab)) is not None:
            raise ArgumentValueError(f"{api}: {problem}; pass the tokenizer's ids (below {vocab}) as {name}, or "
                                     f"leave it out (and set model.generation_config.{name} to such ids, or None)")


def checked_prefix_function(function: Any, vocab: Any, api: str) -> Any:
    """``prefix_allowed_tokens_fn`` wrapped so that an id it allows past the vocabulary (or negative) is an
    ``errors.ArgumentValueError`` naming it, where torch's raw "index 400 is out of bounds for dimension 0 with size
    300" came out of the logits processor (issue 30 round 32, AC91, AC118). The function's own cost is per token;
    the wrapper's is one pass over the list it returns (a tensor it returns is passed on unread: reading
    one would sync the device each token). None or a non-callable (``generate_inputs`` names it): ``function``
    unchanged. Issue 30 round 33: a function that takes no (batch_id, ids) (Python's raw TypeError, AE45, refused
    before any token), that returns None (transformers' raw TypeError, AE44) or no id (its raw ValueError, AE40,
    AE41) is named."""
    from ..errors import ArgumentTypeError, ArgumentValueError
    from ..integers import is_integer

    if function is None or not callable(function) or isinstance(function, type):
        return function
    _check_arity(function, api)
    vocab = vocab if is_integer(vocab) else None

    def allowed(batch_id, ids):
        result = function(batch_id, ids)
        if result.numel() == 0 if isinstance(result, torch.Tensor) else isinstance(result, (list, tuple)) and \
                not result:  # AE40, AE41 (a tensor's size, not its values: no device sync)
            raise ArgumentValueError(f"{api}: prefix_allowed_tokens_fn returned no id for row {batch_id}, so no token "
                                     f"can follow; return at least one allowed id for each row (all ids: "
                                     f"list(range(vocab_size)))")
        if isinstance(result, torch.Tensor) and (result.dtype.is_floating_point or result.dtype.is_complex or
                                                 result.dtype == torch.bool):  # round 34, AG66: raw IndexError
            raise ArgumentTypeError(f"{api}: prefix_allowed_tokens_fn returned a {result.dtype} tensor, not the "
                                    f"allowed ids; return a list of token ids (or a torch.long tensor of them)")
        if not isinstance(result, (list, tuple, torch.Tensor)):  # None: transformers' raw TypeError (AE44)
            raise ArgumentTypeError(f"{api}: prefix_allowed_tokens_fn returned {type(result).__name__} "
                                    f"{result!r:.30}, not the allowed ids; return a list of token ids")
        if vocab is not None and isinstance(result, (list, tuple)):
            # a list, not next(..., None): a None returned was taken for "none bad" (round 33, AE189's kind)
            if wrong := [i for i in result if not is_integer(i) or not 0 <= i < vocab]:
                bad = wrong[0]
                raise ArgumentValueError(f"{api}: prefix_allowed_tokens_fn returned {bad!r}, which is not a token id "
                                         f"of this model (whole numbers 0 to {vocab - 1}); return the tokenizer's ids "
                                         f"(below {vocab})")
        return result

    return allowed


def _check_arity(function: Any, api: str) -> None:
    """``ArgumentTypeError`` when ``function`` cannot be called as transformers calls it, (batch_id, ids)."""
    import inspect

    from ..errors import ArgumentTypeError

    try:
        inspect.signature(function).bind(0, None)
    except ValueError:
        return  # no signature to read (a builtin): called as it is
    except TypeError:
        raise ArgumentTypeError(f"{api}: prefix_allowed_tokens_fn must take two arguments (batch_id, ids), and "
                                f"{getattr(function, '__name__', type(function).__name__)} takes "
                                f"{inspect.signature(function)}; pass a function of (batch_id, ids) -> allowed ids"
                                ) from None


def check_listed_ids_layout(model: Any, api: str, generation_config: Any, kwargs: dict) -> None:
    """The id lists of the settings (``setting_ids.LISTED_IDS``) held to their layout before transformers merges
    them: ``suppress_tokens=[[5]]`` was the guard's line about an unhashable list, naming no argument (issue 30 round
    34, AG175). The same rule ``check_generate_ids`` reads after the merge, read earlier."""
    from ..errors import ArgumentValueError
    from ..integers import is_integer
    from .setting_ids import LISTED_IDS, setting_ids_problem

    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    if not is_integer(vocab):
        return
    _check_special_ids_layout(api, generation_config, kwargs)
    for name in LISTED_IDS:
        value = kwargs.get(name)
        if value is None:
            value = getattr(generation_config, name, None)
        if value is not None and (problem := setting_ids_problem(name, value, vocab)) is not None:
            raise ArgumentValueError(f"{api}: {problem}; pass the tokenizer's ids (below {vocab}) as {name}, or "
                                     f"leave it out (and set model.generation_config.{name} to such ids, or None)")


def _check_special_ids_layout(api: str, generation_config: Any, kwargs: dict) -> None:
    """The special ids as transformers merges them: ``eos_token_id=[]`` (no id: its raw IndexError, AG250), a pad,
    bos or decoder-start id of several values (``pad_token_id=torch.tensor([5, 6])``: torch's raw "Boolean value of
    Tensor with more than one value", AG251), a numpy array of ids (numpy's raw "truth value of an array", AG314), ids
    in rows (``eos_token_id=torch.tensor([[5, 6]])``: torch's raw size error, AG444) are named before the merge (issue
    30 round 34). The values are read only where a tensor or array is given."""
    import numpy as np

    from ..errors import ArgumentTypeError, ArgumentValueError

    for name in ("eos_token_id", "pad_token_id", "bos_token_id", "decoder_start_token_id"):
        value = kwargs.get(name)
        if value is None:
            value = getattr(generation_config, name, None)
        if isinstance(value, np.ndarray):
            raise ArgumentTypeError(f"{api}: {name} is a numpy array; pass the id as a number (or a list of ids: "
                                    f"{name}={value.tolist()!r:.40}), or leave it out")
        count = value.numel() if isinstance(value, torch.Tensor) else len(value) if isinstance(value, (list, tuple)) \
            else 1
        if count == 0:
            raise ArgumentValueError(f"{api}: {name} {value!r:.40} names no token; pass a token id (or, for "
                                     f"eos_token_id, a non-empty list of them), or leave it out")
        if isinstance(value, torch.Tensor) and value.dim() > 1 or isinstance(value, (list, tuple)) and any(
                isinstance(v, (list, tuple, torch.Tensor)) for v in value):  # AG444: torch's raw size error
            raise ArgumentValueError(f"{api}: {name} {value!r:.40} is laid out in rows; pass one token id (or, for "
                                     f"eos_token_id, a flat list of them: {name}=[5, 6]), or leave it out")
        if count > 1 and name != "eos_token_id":
            raise ArgumentValueError(f"{api}: {name} holds {count} ids, and transformers reads one; pass one token "
                                     f"id, or leave it out")
