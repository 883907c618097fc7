"""Frequency-stratified loss of one model on one stream (docs/DESIGN.md §7; paper v2: rarest tokens' perplexity falls by 81%, most frequent ~0).

Every validation target is put into a bucket by how often its id occurs in the *training* split (``train_freq.npy``
of the prepared data dir). Per bucket: the mean loss (nats), its perplexity and the number of targets; between two
models the relative perplexity reduction 1 - ppl_model / ppl_baseline (``experiments.method.frequency`` across a
sweep's rows). Two bucketing rules (``method``), both ordered from rarest (bucket 0) to most frequent:

- ``mass`` (default): equal shares of the training token-occurrence mass. Ids sorted by training count; ids with the
  same count form one slice of the cumulative share of all training occurrences (from the rarest id), and bucket j
  holds the slices whose midpoint lies in [j/n, (j+1)/n). Ids with the same count always share a bucket, so shares
  are only approximately equal, and a single very frequent id (a space token holding 30% of the text) can leave a
  neighbouring bucket empty. Each bucket holds about 1/n of the training tokens and, for in-domain text, of the
  validation targets: enough for a stable mean. The most frequent bucket holds a handful of ids, the rarest most of
  the vocabulary.
- ``log``: equal-width bins of log10(count) between the smallest and largest non-zero count. Easy to
  read ("ids seen 10-100 times") but the rare bins may hold very few validation targets.

Ids never seen in training (count 0) go to bucket 0 under both rules and are counted separately
(``num_unseen_targets``): their input row was never trained by their own occurrences, which is where the paper's
rare-token gain comes from. Inputs are plain arrays (``eval.perplexity.token_losses``: nats per predicted token, in
order), so this module needs no torch; ``targets`` must be aligned with ``losses`` one to one.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import UserError

METHODS = ("mass", "log")
MAX_COUNT = 2**62  # the counts in all: within int64 with room to add, far beyond any corpus (Fit.frequency's bound)
MAX_BUCKETS = 1000  # a bucket is a share of the training mass to average over; 10^9 looped until memory ran out


@dataclass
class Buckets:
    """A map token id -> bucket (0 = rarest) and a readable description of each bucket."""

    bucket_of: np.ndarray  # (V,) int64
    num_buckets: int
    method: str
    min_count: list[int]  # smallest training count of an id in each bucket (0 for empty)
    max_count: list[int]
    num_ids: list[int]  # ids (vocabulary entries) per bucket
    mass: list[float]  # share of training occurrences per bucket

    def labels(self) -> list[str]:
        return [f"{lo:,}-{hi:,}" if self.num_ids[j] else "(empty)"
                for j, (lo, hi) in enumerate(zip(self.min_count, self.max_count))]

    def as_dict(self) -> dict:
        return {"method": self.method, "num_buckets": self.num_buckets, "min_count": self.min_count,
                "max_count": self.max_count, "num_ids": self.num_ids, "mass": self.mass}


def checked_counts(train_freq) -> np.ndarray:
    """``train_freq`` as int64 counts, or a UserError naming the first id whose count is not a whole number >= 0 (that
    fits in 64 bits). A NaN was cast to a negative int64 (numpy's RuntimeWarning "invalid value encountered in cast")
    and blamed as "train_freq holds negative counts", and 2.5 was cut to 2 without a word (issue 30 round 18, G332)."""
    counts = np.asarray(train_freq)
    if counts.ndim != 1 or len(counts) == 0:
        raise UserError("train_freq must be a non-empty 1-D array of counts per token id")
    if counts.dtype.kind not in "iub" and counts.dtype.kind != "f":
        raise UserError(f"train_freq holds {counts.dtype} values, not counts; pass one whole-number count >= 0 per "
                        f"token id (np.load of a prepared data folder's train_freq.npy)")
    with np.errstate(invalid="ignore"):
        bad = (~np.isfinite(counts) | (counts < 0) | (counts != np.floor(counts)) | (counts >= 2.0 ** 63)
               if counts.dtype.kind == "f" else counts < 0)
    if np.any(bad):
        first = int(np.flatnonzero(bad)[0])
        raise UserError(f"train_freq[{first}] is {counts[first].item()!r}, not a count ({int(bad.sum()):,} of its "
                        f"{len(counts):,} values are not whole numbers >= 0 within 64 bits); pass one whole-number "
                        f"count >= 0 per token id (np.load of a prepared data folder's train_freq.npy)")
    if counts.astype(np.float64).sum() >= MAX_COUNT:  # summed as floats: int64's sum wraps around without a word
        # a count of 2^63 - 1 wrapped the sum negative and put id 0 in bucket -2 (issue 30 round 24, W555)
        raise UserError(f"train_freq's counts sum to {counts.astype(np.float64).sum():.4g}, past {MAX_COUNT:,} (2^62, "
                        f"more tokens than any corpus); pass the training counts per token id (np.load of a prepared "
                        f"data folder's train_freq.npy)")
    return counts.astype(np.int64)


def _check_ids_for_buckets(counts: np.ndarray, num_buckets: int, setting: str) -> None:
    """UserError when ``num_buckets`` is more than the ids that occur in training: each id sits in one bucket, so the
    buckets past them hold no id whatever the counts. ``frequency_groups(np.ones(300), 300, num_buckets=301)`` returned
    301 buckets, 300 of them empty, with the warning below only (issue 30 round 29, W670); the warning stays for
    buckets that ids could fill but these counts' few distinct values do not."""
    seen = int(np.count_nonzero(counts))
    if num_buckets > seen:
        fix = (f"lower {setting} to at most {seen:,}" if seen >= 2 else
               "pass the train_freq of a training split (np.load of a prepared data folder's train_freq.npy)")
        raise UserError(f"{setting} {num_buckets:,} is more than the {seen:,} ids that occur in training (counts > 0 "
                        f"in train_freq): {num_buckets - seen:,} of the buckets would hold no id; {fix}")


def make_buckets(train_freq: np.ndarray, num_buckets: int = 5, method: str = "mass",
                 setting: str = "num_buckets") -> Buckets:
    """Bucket every token id by its training count (see module docstring for the rules). ``setting`` names
    ``num_buckets`` where the caller took it (a grid's eval.buckets, --buckets) in the line refusing more buckets
    than ids."""
    counts = checked_counts(train_freq)
    from ..integers import is_integer

    # 5.0 passed the range test and ended in range()'s "'float' object cannot be interpreted as an integer" (round 18,
    # G333): the rule of --buckets (commands.values.bucket_count)
    if not is_integer(num_buckets) or not 2 <= num_buckets <= MAX_BUCKETS:
        raise UserError(f"num_buckets must be a whole number between 2 and {MAX_BUCKETS} (each bucket averages a share "
                        f"of the training tokens), got {num_buckets!r}; pass e.g. num_buckets=5")
    if method not in METHODS:
        raise UserError(f"unknown bucketing method {method!r}; choose one of {', '.join(METHODS)}")
    total = int(counts.sum())
    if total == 0:
        raise UserError("train_freq is all zeros; was the training split empty?")
    _check_ids_for_buckets(counts, num_buckets, setting)

    if method == "mass":
        values = np.unique(counts)  # ascending distinct counts
        mass_per_value = np.bincount(np.searchsorted(values, counts), weights=counts.astype(float))
        # midpoint of each count's slice of the cumulative occurrence share, counted from the rarest
        mid_share = (np.cumsum(mass_per_value) - mass_per_value / 2) / total
        value_bucket = np.minimum((mid_share * num_buckets).astype(np.int64), num_buckets - 1)
        bucket_of = value_bucket[np.searchsorted(values, counts)]
    else:
        nz = counts[counts > 0]
        lo, hi = math.log10(nz.min()), math.log10(nz.max())
        if hi <= lo:
            bucket_of = np.where(counts > 0, num_buckets - 1, 0)
        else:
            edges = np.linspace(lo, hi, num_buckets + 1)
            with np.errstate(divide="ignore"):
                logc = np.log10(np.maximum(counts, 1))
            bucket_of = np.clip(np.searchsorted(edges, logc, side="right") - 1, 0, num_buckets - 1)
        bucket_of = np.where(counts > 0, bucket_of, 0)
    bucket_of[counts == 0] = 0
    bucket_of = bucket_of.astype(np.int64)

    min_count, max_count, num_ids, mass = [], [], [], []
    for j in range(num_buckets):
        sel = counts[bucket_of == j]
        num_ids.append(int(len(sel)))
        min_count.append(int(sel.min()) if len(sel) else 0)
        max_count.append(int(sel.max()) if len(sel) else 0)
        mass.append(float(sel.sum()) / total)
    empty = num_ids.count(0)
    if empty > num_buckets // 2:  # --buckets 1000 over 137 seen ids printed 897 empty rows, no word (round 14, B292)
        warnings.warn(f"{empty:,} of the {num_buckets:,} frequency buckets hold no ids (the training counts take "
                      f"{len(np.unique(counts[counts > 0])):,} distinct values); ask for fewer buckets", stacklevel=2)
    return Buckets(bucket_of, num_buckets, method, min_count, max_count, num_ids, mass)


@dataclass
class BucketLosses:
    """Per-bucket mean loss of one model on one evaluation set."""

    loss: list[float | None]  # mean nats per target; None for an empty bucket
    count: list[int]
    num_unseen_targets: int = 0
    overall_loss: float = math.nan
    buckets: dict = field(default_factory=dict)  # Buckets.as_dict()

    @property
    def ppl(self) -> list[float | None]:
        return [None if v is None else ppl_of(v) for v in self.loss]

    def as_dict(self) -> dict:
        return {"loss": self.loss, "ppl": self.ppl, "count": self.count, "num_unseen_targets": self.num_unseen_targets,
                "overall_loss": self.overall_loss, "buckets": self.buckets}


def bucket_losses(losses: np.ndarray, targets: np.ndarray, buckets: Buckets,
                  train_freq: np.ndarray | None = None) -> BucketLosses:
    """Mean loss per frequency bucket. ``losses[i]`` is the loss of predicting ``targets[i]``.

    Footguns refused: losses and targets of one count but other shapes ((2, 3) and (3, 2)) were paired by flat order,
    and no target at all gave an overall loss of NaN without a word (issue 30 round 26, Q536; ``summarize`` and
    ``linear_cross_entropy`` refuse a loss over no target)."""
    if np.shape(losses) != np.shape(targets):  # equal counts were paired by flat order (round 26, Q83's kind)
        raise UserError(f"losses {np.shape(losses)} and targets {np.shape(targets)} must align one to one (the same "
                        f"shape); pass the targets the losses predict (aligned_targets(tokens, len(losses)))")
    losses = np.asarray(losses, dtype=np.float64).ravel()
    targets = _target_ids(targets, len(buckets.bucket_of))
    if len(losses) == 0:
        raise UserError("bucket_losses: losses and targets hold no target, so every loss would be a mean over none "
                        "(NaN); pass the losses of at least one predicted token")
    vocab = len(buckets.bucket_of)
    if train_freq is not None and len(np.asarray(train_freq)) != vocab:  # a shorter one was IndexError (round 23)
        raise UserError(f"train_freq has {len(np.asarray(train_freq)):,} ids and the buckets {vocab:,}; pass the "
                        f"train_freq the buckets were made from")
    b = buckets.bucket_of[targets]
    sums = np.bincount(b, weights=losses, minlength=buckets.num_buckets)
    counts = np.bincount(b, minlength=buckets.num_buckets)
    mean = [float(s / c) if c else None for s, c in zip(sums, counts)]
    unseen = int(np.sum(np.asarray(train_freq)[targets] == 0)) if train_freq is not None else 0
    return BucketLosses(loss=mean, count=[int(c) for c in counts], num_unseen_targets=unseen,
                        overall_loss=float(losses.mean()), buckets=buckets.as_dict())


def _target_ids(targets, vocab: int) -> np.ndarray:
    """``targets`` as (n,) int64 token ids, or a UserError naming the first that is no id of the bucketed vocabulary
    [0, ``vocab``): they were cast to int64 first (2.5 cut to 2 without a word, NaN after numpy's RuntimeWarning), and
    target -1 was named as the largest target, "target id 5 is outside" (issue 30 round 23, found beside U456)."""
    targets = np.asarray(targets).ravel()
    if targets.size and targets.dtype.kind not in "iu":
        raise UserError(f"targets hold {targets.dtype} values, not token ids; pass the integer ids the losses predict "
                        f"(aligned_targets(tokens, len(losses)))")
    bad = np.flatnonzero((targets < 0) | (targets >= vocab))
    if len(bad):
        raise UserError(f"target id {int(targets[bad[0]])} is outside the bucketed vocabulary ({vocab} ids); use the "
                        f"train_freq of the same tokenizer")
    return targets.astype(np.int64)


def aligned_targets(tokens: np.ndarray, num_losses: int) -> np.ndarray:
    """Targets of next-token losses over ``tokens``: ``tokens[1 : 1 + num_losses]``.

    ``token_losses`` predicts tokens[1:] in order (it may drop a tail that does not fill a window);
    more losses than tokens - 1 means the two disagree about the evaluated text, and a negative count is no count
    (-1 gave an empty array without a word: issue 30 round 23, U456).
    """
    from ..value_rules import api_check, whole_problem

    api_check("aligned_targets", "num_losses", whole_problem(num_losses, 0, "a whole number >= 0"),
              "pass len(losses), the number of next-token losses over tokens")
    tokens = np.asarray(tokens)
    if num_losses > len(tokens) - 1:
        raise UserError(f"{num_losses} losses for {len(tokens)} tokens: at most len(tokens) - 1 targets exist")
    return tokens[1: 1 + num_losses]


def relative_reduction(baseline: list[float | None], model: list[float | None]) -> list[float | None]:
    """Per-bucket relative perplexity reduction 1 - ppl_model / ppl_baseline = 1 - exp(L_m - L_b).

    Positive = the model is better. 0.81 means the model's perplexity is 81% lower in that bucket; -inf means the
    model's perplexity is past float range times the baseline's (a diverged run).
    """
    for name, values in (("baseline", baseline), ("model", model)):
        _check_bucket_losses(name, values)
    if len(baseline) != len(model):
        raise UserError("bucket lists differ in length; were they made with the same buckets?")
    return [None if (b is None or m is None) else _reduction(b, m) for b, m in zip(baseline, model)]


def _check_bucket_losses(name: str, values) -> None:
    """ArgumentTypeError unless ``values`` is a list of bucket losses (numbers, None for an empty bucket), as
    ``BucketLosses.loss`` holds them: ``relative_reduction('ab', 'cd')`` was Python's "unsupported operand type(s)
    for -: 'str' and 'str'" (issue 30 round 25, Y566; ``ppl_of`` names its argument, round 24, W557). NaN is carried."""
    import numbers

    from ..errors import ArgumentTypeError

    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, np.ndarray)):
        bad = f"{type(values).__name__} {values!r:.40}"
    else:
        wrong = [v for v in values if v is not None and (not isinstance(v, numbers.Real)
                                                         or isinstance(v, (bool, np.bool_)))]
        bad = f"{type(wrong[0]).__name__} {wrong[0]!r:.40} among them" if wrong else None
    if bad is not None:
        raise ArgumentTypeError(f"relative_reduction: {name}: expected a list of bucket losses (nats, None for an "
                                f"empty bucket), got {bad}; pass BucketLosses.loss of each run")


def ppl_of(loss: float) -> float:
    """exp(loss), inf past float range (``eval.perplexity``'s rule): a diverged run's bucket loss of ~340,000 ended
    `analyze frequency` in an OverflowError traceback (issue 30 round 14, B295). A loss that is no number >= 0 is an
    ArgumentTypeError / ArgumentValueError: -1.0 gave a perplexity of 0.37, below 1, and '5' was a raw TypeError
    (issue 30 round 24, W556, W557); NaN is carried, as ``relative_reduction`` carries it (round 23, U454)."""
    import numbers

    from ..errors import ArgumentTypeError, ArgumentValueError

    if not isinstance(loss, numbers.Real) or isinstance(loss, (bool, np.bool_)):
        raise ArgumentTypeError(f"ppl_of: loss: expected a loss (nats, a number >= 0), got {type(loss).__name__} "
                                f"{loss!r:.40}; pass a mean cross-entropy in nats")
    if loss < 0:  # NaN is carried; +inf (a diverged run) is inf
        raise ArgumentValueError(f"ppl_of: loss: must be a number >= 0 (a loss in nats), got {loss!r}; pass a mean "
                                 f"cross-entropy in nats (no model's is below 0)")
    return math.inf if loss >= 700 else math.exp(loss)


def _reduction(b: float, m: float) -> float:
    """1 - exp(m - b), -inf where exp overflows: a diverged run (a val loss of 339,989 against 5.6) ended
    `analyze frequency` in an OverflowError traceback (issue 30 round 14, B295)."""
    gap = m - b
    return -math.inf if gap > 700 else 1.0 - math.exp(gap)


def _check_table_parts(names: list[str], results: list[BucketLosses], labels: list[str], baseline) -> None:
    """UserError unless ``format_table`` has one result per name, one label per bucket of every result and a
    ``baseline`` index among the names: names and results of different lengths were IndexError "list index out of
    range" (issue 30 round 23, U461), and a name without a result was left out of the table without a word."""
    from ..value_rules import api_check, whole_problem

    api_check("format_table", "results", f"holds {len(results):,} results for {len(names):,} names"
              if len(results) != len(names) else None, "pass one BucketLosses per name, in the same order")
    sizes = sorted({len(r.loss) for r in results})
    api_check("format_table", "labels", f"holds {len(labels):,} labels for results of {' or '.join(map(str, sizes))} "
              f"buckets" if sizes != [len(labels)] and results else None,
              "pass Buckets.labels() of the buckets the results were made with")
    api_check("format_table", "baseline", whole_problem(baseline, 0, "a whole number >= 0") or (
        f"must index one of the {len(names):,} names, got {baseline}" if baseline >= len(names) else None),
        "pass the index of the baseline's name (0: the first)")


def format_table(names: list[str], results: list[BucketLosses], labels: list[str], baseline: int = 0) -> str:
    """Plain-text table: per bucket, count, ppl of each model and the reduction vs ``names[baseline]``."""
    _check_table_parts(names, results, labels, baseline)
    head = f"{'bucket':>8} {'train count':>20} {'targets':>9} " + " ".join(f"{n[:14]:>14}" for n in names)
    others = [i for i in range(len(names)) if i != baseline]
    head += "".join(f" {'red. ' + names[i][:9]:>15}" for i in others)
    lines = [head, "-" * len(head)]
    reds = {i: relative_reduction(results[baseline].loss, results[i].loss) for i in others}
    for j, lab in enumerate(labels):
        row = f"{j:>8} {lab:>20} {results[baseline].count[j]:>9,} "
        row += " ".join(f"{p:>14.3f}" if p is not None else f"{'-':>14}" for p in (r.ppl[j] for r in results))
        row += "".join(f" {reds[i][j]:>14.1%}" if reds[i][j] is not None else f" {'-':>14}" for i in others)
        lines.append(row)
    return "\n".join(lines)
