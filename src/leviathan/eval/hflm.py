"""lm-eval's side of the bridge: ``offline_env`` (HF_DATASETS_OFFLINE, HF_HUB_OFFLINE for a call) and
``fitting_hflm``, lm-eval's ``HFLM`` with every log-likelihood request fitted into the model's window
(``eval/harness.py`` explains why and what is counted), its largest batch checked against the memory there is
before it is scored, and an out-of-memory forward said in one line naming --batch-size (issue 30 round 28, T7: the
allocator's traceback from transformers' rotate_half, exit 1, as round 27 fixed for `eval`, R11).
"""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def offline_env():
    keys = ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM")
    old = {k: os.environ.get(k) for k in keys}
    os.environ.update({"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                       "TOKENIZERS_PARALLELISM": old["TOKENIZERS_PARALLELISM"] or "false"})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_FITTING_HFLM = None


def fitting_hflm():
    """lm-eval's ``HFLM`` with every loglikelihood request fitted into the model's window (see the
    module docstring). Built on first use: importing lm-eval is slow and it is an optional dependency."""
    global _FITTING_HFLM
    if _FITTING_HFLM is not None:
        return _FITTING_HFLM
    from lm_eval.models.huggingface import HFLM

    class FittingHFLM(HFLM):
        """``truncation``: {task name: {"requests", "context_truncated", "continuation_truncated"}}."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.truncation: dict[str, dict[str, int]] = {}
            self._request_tasks: list[str] | None = None

        def loglikelihood(self, requests, disable_tqdm: bool = False):
            # the base class tokenizes the Instances (which know their task) and hands the token
            # lists, in the same order, to _loglikelihood_tokens (which does not)
            self._request_tasks = [r.task_name for r in requests]
            try:
                return super().loglikelihood(requests, disable_tqdm=disable_tqdm)
            finally:
                self._request_tasks = None

        def _loglikelihood_tokens(self, requests, disable_tqdm: bool = False, override_bs: int | None = None):
            tasks = self._request_tasks
            if tasks is None or len(tasks) != len(requests):
                tasks = [None] * len(requests)  # loglikelihood_rolling: its windows fit by construction
            n = self.max_length
            fitted = []
            for task, (key, ctx, cont) in zip(tasks, requests):
                cut = None
                if len(cont) > n:  # HFLM asserts here; score the positions that fit
                    ctx, cont, cut = ctx + cont[:-n], cont[-n:], "continuation_truncated"
                if len(ctx) + len(cont) > n + 1:  # inputs are (ctx + cont)[:-1]: n + 1 tokens fill n positions
                    ctx, cut = ctx[len(ctx) + len(cont) - n - 1:], cut or "context_truncated"
                if task is not None:
                    stats = self.truncation.setdefault(
                        task, {"requests": 0, "context_truncated": 0, "continuation_truncated": 0})
                    stats["requests"] += 1
                    if cut:
                        stats[cut] += 1
                fitted.append((key, ctx, cont))
            _check_batch_memory(self, fitted)
            try:
                return super()._loglikelihood_tokens(fitted, disable_tqdm=disable_tqdm, override_bs=override_bs)
            except (RuntimeError, MemoryError) as e:
                refused = _out_of_memory_line(self, fitted, e)
                if refused is None:
                    raise
                print(file=sys.stderr)  # the harness's progress bar is left mid-line: the error gets a line of its own
                raise refused from None

    _FITTING_HFLM = FittingHFLM
    return FittingHFLM


def _largest_batch(lm, fitted: list) -> tuple[int, int]:
    """(rows, tokens) of the largest forward HFLM makes of the ``fitted`` requests: ``--batch-size`` of them (HFLM sorts
    the longest first and pads a batch to its longest), each at most the longest input, (context + continuation)
    less its last token."""
    rows = len(fitted) if lm.batch_size == "auto" else min(int(lm.batch_size), len(fitted))
    return rows, max(1, max(len(ctx) + len(cont) - 1 for _, ctx, cont in fitted))


def _batch_words(lm, fitted: list) -> tuple[str, str]:
    """The words naming the batch and the smaller --batch-size that fixes it."""
    rows, length = _largest_batch(lm, fitted)
    return (f"lm-eval --batch-size {lm.batch_size}: a forward of {rows} requests of up to {length} tokens",
            f"a smaller --batch-size (e.g. --batch-size {max(1, rows // 2)})")


def _check_batch_memory(lm, fitted: list) -> None:
    """``memory_preflight.check_harness_memory`` of the largest batch, on the CPU (a GPU's forward is the device's, as
    for `eval`; with ``--batch-size auto`` lm-eval finds a size that fits by itself)."""
    from ..memory_preflight import check_harness_memory

    if not fitted or lm.batch_size == "auto" or getattr(lm.device, "type", str(lm.device)) != "cpu":
        return
    what, fix = _batch_words(lm, fitted)
    check_harness_memory(lm.model.config, *_largest_batch(lm, fitted), what, fix)


def _out_of_memory_line(lm, fitted: list, error: BaseException):
    """The UserError of an out-of-memory ``error`` while scoring ``fitted``, None for any other error."""
    from ..errors import UserError
    from ..memory_preflight import allocator_words, out_of_memory

    if not out_of_memory(error) or not fitted:
        return None
    what, fix = _batch_words(lm, fitted)
    return UserError(f"{what} ran out of memory ({allocator_words(error)}); no results were written; use {fix}, or "
                     f"free memory")
