"""lm-eval's side of the bridge: ``offline_env`` (HF_DATASETS_OFFLINE, HF_HUB_OFFLINE for a call) and
``fitting_hflm``, lm-eval's ``HFLM`` with every log-likelihood request fitted into the model's window
(``eval/harness.py`` explains why and what is counted).
"""

from __future__ import annotations

import contextlib
import os


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
            return super()._loglikelihood_tokens(fitted, disable_tqdm=disable_tqdm, override_bs=override_bs)

    _FITTING_HFLM = FittingHFLM
    return FittingHFLM
