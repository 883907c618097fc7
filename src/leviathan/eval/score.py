"""Scoring a trained run: its latest checkpoint on several streams, overall and per training-frequency bucket, for
the sweep (``experiments.machinery.sweep.evaluate_run``) and ``leviathan analyze frequency --runs``.

    evals, bucketed = evaluate_checkpoint("runs/m-leviathan-s0", {"val": EvalStream.from_split(data, "val")},
                                          buckets=make_buckets(train_freq), freq=train_freq)
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from ..checkpoint.read import check_tokenizer, find_checkpoint, load_model
from ..errors import UserError
from .frequency import aligned_targets, bucket_losses
from .perplexity import summarize, token_losses
from .result import EvalResult
from .stream import EvalStream, run_seq_len


def summarize_losses(losses: np.ndarray, num_bytes: float) -> EvalResult:
    """loss (nats/token), ppl, bits per byte, tokens of per-token losses (``eval.perplexity.summarize``)."""
    losses = np.asarray(losses, dtype=np.float64)
    return summarize(float(losses.sum()), len(losses), num_bytes)


def evaluate_checkpoint(run_dir: str | os.PathLike, streams: dict[str, EvalStream], *, seq_len: int | None = None,
                        batch_size: int = 8, buckets=None, freq: np.ndarray | None = None,
                        bucket_sets: list[str] | None = None) -> tuple[dict[str, EvalResult], dict]:
    """Score a run's latest checkpoint on each stream: ``({name: EvalResult}, {name: BucketLosses})``.

    Windows of ``seq_len`` tokens (default: the run's ``data.seq_len``); with ``buckets`` (of the data's ``train_freq``)
    the per-token losses are also grouped by their target's training frequency, for the streams in ``bucket_sets``
    (None: all). A model with a restricted softmax (``data.softmax: corpus``) is scored on the targets inside its id set
    (``targets_outside``, ``share_outside`` say how many were left out; models with the same set pair) without bits per
    byte.
    """
    _check_some_stream(streams)
    model, cfg = load_model(str(run_dir))
    seq_len = run_seq_len(cfg, seq_len, "seq_len")
    check_stream_tokenizers(run_dir, streams)
    _check_buckets(buckets, bucket_sets)
    evals, bucketed = {}, {}
    for name, stream in streams.items():
        losses = _losses(model, stream, name, seq_len, batch_size)
        targets = aligned_targets(stream.tokens, len(losses))
        inside = ~np.isnan(losses)  # all True unless a restricted softmax cannot predict some targets
        if not inside.any():  # summarize refuses a loss over no target (round 21, P392): say which set and why
            raise UserError(f"none of the {len(losses):,} targets of eval set {name!r} is among the ids this model "
                            f"predicts (trained with data.softmax=corpus): evaluate text of the data it was trained "
                            f"on, or a model trained with data.softmax=full")
        evals[name] = summarize_losses(losses[inside], stream.num_bytes)
        if not inside.all():
            # scored on the targets inside the model's softmax set only: bits per byte would divide the
            # nats of some targets by the bytes of all, so it is not reported
            evals[name] = replace(evals[name], bpb=None, targets_outside=int((~inside).sum()),
                                  share_outside=float((~inside).mean()))
        if buckets is not None and (bucket_sets is None or name in bucket_sets):
            bucketed[name] = bucket_losses(losses[inside], targets[inside], buckets, freq)
    return evals, bucketed


def _losses(model, stream: EvalStream, name: str, seq_len: int, batch_size: int) -> np.ndarray:
    """``token_losses`` of one eval set; a forward that runs out of memory is one line naming the set, the batch and
    the smaller batch_size (a sweep's grid ``eval: batch_size``, analyze's --batch-size): it was the allocator's
    traceback, as validation's and `eval`'s were (issue 30 round 27, R9, R11's kind)."""
    from ..memory_preflight import allocator_words, out_of_memory

    try:
        return token_losses(model, stream.tokens, seq_len, batch_size, outside="nan")
    except (RuntimeError, MemoryError) as e:
        if not out_of_memory(e):
            raise
        said = allocator_words(e)
    raise UserError(f"scoring eval set {name!r} in batches of {batch_size} windows of {seq_len} tokens ran out of "
                    f"memory ({said}); nothing was scored; use a smaller batch_size (e.g. {max(1, batch_size // 2)}: "
                    f"a grid's eval batch_size, analyze's --batch-size), or free memory")


def _check_some_stream(streams) -> None:
    """UserError for an empty ``streams`` mapping, before the model is loaded: ``evaluate_checkpoint(run, {})`` scored
    nothing and returned ``({}, {})`` without a word (issue 30 round 29, W407). Other kinds are
    ``check_stream_tokenizers``'."""
    from collections.abc import Mapping

    if isinstance(streams, Mapping) and not streams:
        raise UserError("evaluate_checkpoint: streams is empty, so there is nothing to score; pass at least one eval "
                        "set, e.g. {'val': EvalStream.from_split(data_dir, 'val')}")


def check_stream_tokenizers(run_dir: str | os.PathLike, streams) -> None:
    """UserError unless ``streams`` is a dict of ``EvalStream`` and each stream of a prepared split
    (``EvalStream.data_dir``) was prepared with the tokenizer the run's checkpoint saved (``checkpoint.read.
    check_tokenizer``, what `leviathan eval RUN --data D` applies): a stream of another BPE's data folder was scored,
    loss 5.28, no word, its ids meaning other strings (issue 30 round 22, S397). A text file's stream is tokenized by
    its caller, who chooses the tokenizer; a hand-made stream names no folder. Each key is an eval set's name."""
    from collections.abc import Mapping

    from ..value_rules import api_check, eval_set_problem

    if not isinstance(streams, Mapping):
        raise UserError(f"evaluate_checkpoint: streams must be a dict of name -> EvalStream, got {streams!r:.60}; "
                        f"pass e.g. {{'val': EvalStream.from_split(data_dir, 'val')}}")
    checked = set()
    for name, stream in streams.items():
        # a results row's eval set named by nothing: '' was scored and returned under the key '' (round 28, U784)
        api_check("evaluate_checkpoint", "streams' key", eval_set_problem(name),
                  "name each stream by its eval set, e.g. {'val': EvalStream.from_split(data_dir, 'val')}")
        if not isinstance(stream, EvalStream):
            raise UserError(f"evaluate_checkpoint: streams[{name!r}] must be an EvalStream, got {stream!r:.60}; "
                            f"build it with EvalStream.from_split or EvalStream.from_text")
        if stream.data_dir is not None and stream.data_dir not in checked:
            check_tokenizer(find_checkpoint(run_dir), stream.data_dir, f"evaluate {str(run_dir)!r} on eval set "
                                                                       f"{name!r}")
            checked.add(stream.data_dir)


def _check_buckets(buckets, bucket_sets) -> None:
    """UserError naming ``evaluate_checkpoint``'s bucket argument of the wrong kind: ``buckets=5`` ended in
    "'int' object has no attribute 'bucket_of'" after the model was loaded, and ``bucket_sets='val'`` was read as the
    letters of a text ('v' in 'val'), no word (issue 30 round 22)."""
    from .frequency import Buckets

    if buckets is not None and not isinstance(buckets, Buckets):
        raise UserError(f"evaluate_checkpoint: buckets must be a Buckets (make_buckets(train_freq)) or None, got "
                        f"{buckets!r:.60}; pass make_buckets of the data's train_freq.npy")
    if bucket_sets is not None and not (isinstance(bucket_sets, (list, tuple)) and all(isinstance(name, str) for name
                                                                                        in bucket_sets)):
        raise UserError(f"evaluate_checkpoint: bucket_sets must be a list of eval set names or None (all), got "
                        f"{bucket_sets!r:.60}; pass e.g. ['val']")
