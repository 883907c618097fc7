"""transformers' own handling of ``generate``'s arguments, run inside one guard: its refusal of an argument is one
UserError line naming the argument's words and a fix, for both of leviathan's Hugging Face classes
(``LeviathanForCausalLM`` and the adopted classes of ``hf.adoption`` take ``GenerateGuard`` as a base).

    class LeviathanForCausalLM(LeviathanPreTrainedModel, GenerateGuard, GenerationMixin): ...
    # model.generate(p, stop_strings=["x"])
    # ArgumentValueError: LeviathanForCausalLM.generate: transformers refuses the arguments as it makes the stopping
    # criteria (There are one or more stop strings, ... but we could not locate a tokenizer. ...); change or leave out
    # the argument it names (...)

Issue 30 round 33: checking each setting by hand kept finding more of transformers' raw errors (stop_strings without
a tokenizer, AE28, AE30, AE75, AE197; ``cache_implementation='quantized'`` without optimum-quanto, AE32, and
``'offloaded'`` without CUDA, AE34; a keyword transformers 5 no longer reads, AE80). The steps of
``GenerationMixin.generate`` that read only the arguments, before the first forward, are wrapped here: the merge of
the settings (``_prepare_generation_config``), the keywords the model does not take (``_validate_model_kwargs``),
the generation mode (``_validate_generation_mode``), the cache it makes (``_prepare_cache_for_generation``), the
logits processors and stopping criteria it builds (``_get_logits_processor``, ``_get_stopping_criteria``). Their
ValueError / TypeError / AttributeError / IndexError / KeyError / ImportError (the cache's also AssertionError and
RuntimeError: torch's "not compiled with CUDA enabled") become ``ArgumentValueError`` / ``ArgumentTypeError``;
a UserError of leviathan's own checks passes as it is, and so does torch's OutOfMemoryError (a RuntimeError: a full
GPU making the cache was told as the arguments' fault). None of these steps runs the model, so no error of the model's
own forward is turned into an argument's (those are bugs to see); the steps that do (``heal_tokens``, the decoding
loop, the processors' first call) are not wrapped, and their arguments have hand rules (``generate_arguments``,
``generate_inputs``, ``generate_callables``). Cost: a ``try`` per step, nothing per token.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch

from ..errors import ArgumentTypeError, ArgumentValueError, UserError

_ARGUMENT_ERRORS = (ValueError, TypeError, AttributeError, IndexError, KeyError, ImportError)
# the cache transformers makes: its offloading asks torch for CUDA (an AssertionError, AE34), nothing runs the model
_CACHE_ERRORS = (*_ARGUMENT_ERRORS, AssertionError, RuntimeError)
_FIX = ("change or leave out the argument it names (a keyword of generate, the generation_config given, or "
        "model.generation_config)")


@contextlib.contextmanager
def argument_errors(api: str, step: str, caught: tuple[type, ...] = _ARGUMENT_ERRORS) -> Iterator[None]:
    """transformers' refusal of ``generate``'s arguments in ``step`` (words: "the generation settings") as one
    UserError line: its first line, which names the argument, and the fix; a UserError passes as it is."""
    try:
        yield
    except (UserError, torch.OutOfMemoryError):  # memory is no argument's fault (a RuntimeError: the cache step's)
        raise
    except caught as e:
        said = str(e).strip().splitlines()
        said = " ".join(said[0].split())[:300] if said else type(e).__name__
        error = ArgumentTypeError if isinstance(e, (TypeError, AttributeError)) else ArgumentValueError
        raise error(f"{api}: transformers refuses these generation arguments as it {step} ({said}); {_FIX}") \
            from None


class GenerateGuard:
    """The argument steps of transformers' ``generate`` (module docstring), each inside ``argument_errors``; a base
    of both HF classes, before ``GenerationMixin`` (or the transformers class that holds it)."""

    def _generate_api(self) -> str:
        return f"{type(self).__name__}.generate"

    def _prepare_generation_config(self, *args, **kwargs):
        with argument_errors(self._generate_api(), "merges the generation settings"):
            return super()._prepare_generation_config(*args, **kwargs)

    def _validate_model_kwargs(self, *args, **kwargs):
        with argument_errors(self._generate_api(), "reads the keywords"):
            return super()._validate_model_kwargs(*args, **kwargs)

    def _validate_generation_mode(self, *args, **kwargs):
        with argument_errors(self._generate_api(), "picks the generation mode"):
            return super()._validate_generation_mode(*args, **kwargs)

    def _prepare_cache_for_generation(self, *args, **kwargs):
        with argument_errors(self._generate_api(), "makes the cache", _CACHE_ERRORS):
            return super()._prepare_cache_for_generation(*args, **kwargs)

    def _get_logits_processor(self, *args, **kwargs):
        with argument_errors(self._generate_api(), "makes the logits processors"):
            return super()._get_logits_processor(*args, **kwargs)

    def _get_stopping_criteria(self, *args, **kwargs):
        with argument_errors(self._generate_api(), "makes the stopping criteria"):
            return super()._get_stopping_criteria(*args, **kwargs)
