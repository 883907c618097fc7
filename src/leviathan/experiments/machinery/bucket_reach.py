"""Every frequency bucket is reached by the targets a grid scores, checked before any run trains.

    check_buckets_reached(grid, eval_data)   # sweep.check_eval_sets: UserError naming the set, the reach and the fix

A sweep's row holds each bucketed eval set's loss per training-frequency bucket, and ``append_result`` refuses a
bucket without a loss (``None``: no target fell in it). A grid with ``eval.max_tokens: 1`` scored one target, reached
one bucket of three, trained its run, and only then was its row refused, naming a row the user never sees ("correct
that value"); a rerun trained again to the same end (issue 30 round 26, P43). The minimum is the data's: the fewest
predictions of the set whose targets fall in every bucket, said in the line. Footgun: the whole set (no cap) can miss
a bucket too (fewer distinct training counts than buckets, a set of a few tokens): then the fix is fewer buckets.
"""

from __future__ import annotations

import numpy as np

from ...errors import UserError


def reach(tokens: np.ndarray, bucket_of: np.ndarray, num_buckets: int) -> tuple[int, int | None]:
    """(buckets the targets of ``tokens`` — ``tokens[1:]``, what ``token_losses`` predicts — fall in, the fewest
    predictions whose targets fall in every one, or None when all of them together do not). A target past
    ``bucket_of`` (another tokenizer's ids) is left to the evaluation's own check: it reaches every bucket here."""
    targets = np.asarray(tokens[1:], dtype=np.int64)
    if targets.size and (targets.min() < 0 or targets.max() >= len(bucket_of)):
        return num_buckets, 0
    found, first = np.unique(bucket_of[targets], return_index=True)
    return len(found), int(first.max()) + 1 if len(found) == num_buckets else None


def check_buckets_reached(grid, eval_data) -> None:
    """UserError for the first bucketed eval set of ``grid`` (``eval.bucket_sets``, None: all) whose scored targets
    (capped by ``eval.max_tokens``) leave a frequency bucket empty; ``eval_data``: the sweep's ``EvalData``."""
    opts = grid.eval_options
    buckets, _ = eval_data.buckets()
    for es in grid.eval_sets:
        stream = eval_data.stream(es) if opts.bucket_sets is None or es.name in opts.bucket_sets else None
        if stream is None:
            continue
        reached, _ = reach(stream.tokens, buckets.bucket_of, buckets.num_buckets)
        if reached == buckets.num_buckets:
            continue
        scored = len(stream.tokens) - 1
        whole = eval_data.whole(es) if opts.max_tokens is not None else stream
        whole_reached, need = reach(whole.tokens, buckets.bucket_of, buckets.num_buckets)
        said = (f"grid {grid.name!r}: eval set {es.name!r} scores {scored:,} target(s)"
                f"{f' (eval.max_tokens: {opts.max_tokens:,})' if whole is not stream else ''}, which fall in "
                f"{reached} of the eval.buckets: {buckets.num_buckets} training-frequency buckets, and a run's row "
                f"needs a loss in each (it would be refused after training)")
        if need is not None:
            raise UserError(f"{said}; set eval.max_tokens to at least {need:,} (or null: the whole set)")
        raise UserError(f"{said}; the whole set reaches {whole_reached} of them: "
                        f"lower eval.buckets, or score a larger set (or leave this one out of eval.bucket_sets)")
