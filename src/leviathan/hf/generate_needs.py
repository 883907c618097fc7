"""What ``generate``'s settings need that the call, the model or the machine lacks, refused before the first forward
in one line, for both of leviathan's Hugging Face classes.

    check_generate_needs(model, "LeviathanForCausalLM.generate", merged, kwargs)
    # ArgumentValueError: LeviathanForCausalLM.generate: token_healing=True rewrites the prompt's last token with
    # the tokenizer's vocabulary, and no tokenizer is given; pass tokenizer=<the model's tokenizer>, or leave ...

Issue 30 round 33. Each of these failed inside a step that runs the model (so ``generate_guard`` cannot tell its
error from the model's own) or per token: ``token_healing`` without a tokenizer (transformers' raw ValueError from
``heal_tokens``, which generates, AE86; ``stop_strings`` the same, AE28, AE30, AE75, AE197, also refused by the guard:
one rule names both); ``cache_implementation='static'`` on LeviathanForCausalLM, whose attention runs only on a
growing cache (a plain ValueError naming an attn_mask never given, AE31, from generation_config.json AE198; a
``StaticCache`` given as past_key_values the same); ``'offloaded'`` with the model off CUDA (torch's raw "Torch not
compiled with CUDA enabled" AssertionError from the cache's first update, AE34); ``synced_gpus`` given as a text
(read by Python's truth, AE36) or True in one process (torch.distributed's raw "Default process group has not been
initialized" at the first token, AE35).
"""

from __future__ import annotations

from typing import Any

from ..errors import ArgumentTypeError, ArgumentValueError

# the settings that read the tokenizer's vocabulary -> what they do
_NEED_TOKENIZER = {"token_healing": "rewrites the prompt's last token with the tokenizer's vocabulary",
                   "stop_strings": "stops at texts, which are found in the tokenizer's vocabulary"}
# the cache implementations that copy each layer between the CPU and a CUDA device
_OFFLOADED = ("offloaded", "offloaded_static")


def check_generate_needs(model: Any, api: str, merged: Any, kwargs: dict, inputs: Any = None) -> None:
    """``ArgumentValueError`` / ``ArgumentTypeError`` naming the setting of ``merged`` (the generation settings as
    transformers merges them) or keyword of ``kwargs`` that needs what this call lacks (module docstring)."""
    _check_tokenizer(api, merged, kwargs)
    _check_cache_kind(model, api, merged, kwargs)
    _check_synced(api, kwargs.get("synced_gpus"))
    _check_beams(model, api, merged)
    _check_start_id(api, merged, kwargs, inputs)
    _check_pad_for_end_criteria(model, api, merged, kwargs.get("stopping_criteria"))


def _check_beams(model: Any, api: str, merged: Any) -> None:
    """More beams than the vocabulary has tokens: a million beams on 300 ids ran for minutes on copies of the same
    few sequences without a word (issue 30 round 34, AG198); the first step has only vocab_size distinct beams."""
    from ..integers import is_integer

    beams = getattr(merged, "num_beams", None)
    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    if is_integer(beams) and is_integer(vocab) and beams > vocab:
        raise ArgumentValueError(f"{api}: num_beams={beams} is more beams than the model's {vocab} tokens, so most "
                                 f"would be copies of the same sequences; pass num_beams <= {vocab} (a few: 2 to 8)")


def _check_start_id(api: str, merged: Any, kwargs: dict, inputs: Any) -> None:
    """No prompt (no ids, no embeddings) and no ``bos_token_id`` to start from: transformers' raw "`bos_token_id` has
    to be defined when no `input_ids` are provided." ValueError as it makes the inputs (issue 30 round 34, AG431)."""
    if inputs is not None or kwargs.get("input_ids") is not None or kwargs.get("inputs_embeds") is not None:
        return
    if getattr(merged, "bos_token_id", None) is None:
        raise ArgumentValueError(f"{api}: no prompt is given and no bos_token_id is set to start from; pass the "
                                 f"prompt's ids (inputs=), or bos_token_id= (the tokenizer's start id)")


def _check_pad_for_end_criteria(model: Any, api: str, merged: Any, criteria: Any) -> None:
    """A stopping criterion holding an ``eos_token_id`` (transformers' ``EosTokenCriteria``, or the caller's own)
    makes transformers fill each finished row with ``pad_token_id``; with no pad id and no end id set anywhere (from
    which transformers would take one) that was its raw "unsupported operand type(s) for *: 'NoneType' and 'Tensor'"
    at the first token (issue 30 round 34, seen by fix35a's first part; LeviathanForCausalLM sets no pad id). A
    criterion's id past the vocabulary is named first (``check_transformers_instances``, AG258). Greedy decoding and
    sampling only: beam search runs such a criterion without the pad fill."""
    from .generate_callables import check_transformers_instances

    check_transformers_instances(model, api, "stopping_criteria", criteria)
    if not isinstance(criteria, (list, tuple)) or getattr(merged, "pad_token_id", None) is not None \
            or getattr(merged, "eos_token_id", None) is not None or (getattr(merged, "num_beams", 1) or 1) > 1:
        return
    for i, item in enumerate(criteria):
        if hasattr(item, "eos_token_id"):
            raise ArgumentValueError(f"{api}: stopping_criteria[{i}] ({type(item).__name__}) stops rows at an end "
                                     f"id, and generate fills the finished rows with pad_token_id, which is not set; "
                                     f"pass pad_token_id= (the tokenizer's pad id, or its end-of-text id), or "
                                     f"eos_token_id= in place of the criterion")


def _check_tokenizer(api: str, merged: Any, kwargs: dict) -> None:
    """A setting that reads the tokenizer's vocabulary without one (round 33), and a ``tokenizer`` that is none:
    ``tokenizer=5`` taken without a word (issue 30 round 34, AG126), 'gpt2' the guard's line naming no argument
    (AG151), with token_healing transformers' raw AttributeError (AG161)."""
    from transformers import PreTrainedTokenizerBase

    tokenizer = kwargs.get("tokenizer")
    if tokenizer is not None and not isinstance(tokenizer, PreTrainedTokenizerBase):
        raise ArgumentTypeError(f"{api}: tokenizer must be a transformers tokenizer (AutoTokenizer.from_pretrained"
                                f"(...)), got {type(tokenizer).__name__} {tokenizer!r:.40}; pass the model's "
                                f"tokenizer, or leave tokenizer out")
    if tokenizer is not None:
        return
    for name, does in _NEED_TOKENIZER.items():
        value = getattr(merged, name, None)
        if value is not None and value is not False:
            raise ArgumentValueError(f"{api}: {name}={value!r:.40} {does}, and no tokenizer is given; pass "
                                     f"tokenizer=<the model's tokenizer> to generate, or leave {name} out (also of "
                                     f"model.generation_config)")


def _check_cache_kind(model: Any, api: str, merged: Any, kwargs: dict) -> None:
    """A fixed-size cache on a model whose attention grows its cache (``_leviathan_growing_cache_only``), and an
    offloaded cache off CUDA."""
    from transformers.generation.configuration_utils import ALL_STATIC_CACHE_IMPLEMENTATIONS

    kind = getattr(merged, "cache_implementation", None)
    cache = kwargs.get("past_key_values", kwargs.get("cache"))
    fixed = kind in ALL_STATIC_CACHE_IMPLEMENTATIONS or bool(getattr(cache, "is_compileable", False))
    if fixed and getattr(model, "_leviathan_growing_cache_only", False):
        said = f"cache_implementation={kind!r}" if kind is not None else f"past_key_values={type(cache).__name__}"
        raise ArgumentValueError(f"{api}: {said} asks for a fixed-size cache, and {type(model).__name__}'s attention "
                                 f"runs on a growing one (DynamicCache); leave cache_implementation out (also of "
                                 f"model.generation_config), or pass 'dynamic'")
    device = getattr(model, "device", None)
    offloaded = kind in _OFFLOADED or bool(getattr(cache, "offloading", False))
    if offloaded and getattr(device, "type", None) != "cuda":
        said = f"cache_implementation={kind!r}" if kind in _OFFLOADED else "past_key_values (an offloading cache)"
        raise ArgumentValueError(f"{api}: {said} copies the cache between the CPU and a CUDA device, and the model "
                                 f"is on {device}; leave cache_implementation out (or pass 'dynamic'), or move the "
                                 f"model to a CUDA device")


def fixed_cache_problem(model: Any, generation: Any) -> str | None:
    """Why ``generation``'s (a model's generation settings) ``cache_implementation`` is one ``model`` never runs: a
    fixed-size cache on a class whose attention grows its cache. Every generate refuses it (AG351), and it was saved
    and loaded without a word (issue 30 round 34, AG347): the savers and the loader ask this rule too."""
    from transformers.generation.configuration_utils import ALL_STATIC_CACHE_IMPLEMENTATIONS

    kind = getattr(generation, "cache_implementation", None)
    if kind in ALL_STATIC_CACHE_IMPLEMENTATIONS and getattr(model, "_leviathan_growing_cache_only", False):
        return (f"cache_implementation {kind!r} asks for a fixed-size cache, and {type(model).__name__}'s attention "
                f"runs on a growing one (every generate refuses it)")
    return None


def _check_synced(api: str, synced: Any) -> None:
    """``synced_gpus``: a switch, and True only where torch.distributed runs (several processes in step)."""
    import torch.distributed as dist

    from ..value_rules import check_switches

    if synced is None:
        return
    check_switches(api, synced_gpus=synced)
    if synced and not (dist.is_available() and dist.is_initialized()):
        raise ArgumentValueError(f"{api}: synced_gpus=True keeps several processes generating in step, and "
                                 f"torch.distributed is not initialized (one process); leave synced_gpus out (or "
                                 f"pass False), or call torch.distributed.init_process_group first")
