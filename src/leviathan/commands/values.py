"""argparse ``type=`` functions for numbers that parse but make no sense: refused at the command line, one line each.

    parser.add_argument("--steps", type=positive_int)          # 0 -> "error: argument --steps: ..."
    parser.add_argument("--bootstrap", type=bootstrap_count)    # -3, 10**12 -> "error: argument --bootstrap: ..."
    parser.add_argument("--ci", type=open_fraction)             # nan, inf, 1.5 refused
    parser.add_argument("--lr", type=positive_float)
    parser.add_argument("--temperature", type=written_float)   # 1e-400 refused: it reads as 0.0 (underflow)
    parser.add_argument("--seed", type=seed)                    # -1, 2**40 refused (``leviathan.seeds``)
    parser.add_argument("--threads", type=thread_count)         # 0, 1000000 refused: at most 4 x the usable cores
    parser.add_argument("--vocab", type=bpe_vocab)              # 10 refused: a BPE needs 257 ids (its 256 bytes, EOT)
    parser.add_argument("--buckets", type=bucket_count)         # 1, 10**9 refused: 2 to eval.frequency.MAX_BUCKETS
    parser.add_argument("--device", type=device)                # tpu, cuda:x refused (``leviathan.devices``)

Python's ``int`` and ``float`` accept what no option means (a negative count, ``nan``, ``inf``), which ended in a
traceback, a silent clamp or a result that looked fine (``analyze fit --bootstrap -3``). argparse turns an
``ArgumentTypeError`` into ``leviathan VERB: error: argument --X: ...`` and exit status 2. Every verb takes its
number types from here (``generate`` checks its sampling options in ``run``: its callers expect a return of 2). Each
type applies the rule of ``leviathan.value_rules`` that the Python API applies to the same value.
"""

from __future__ import annotations

import argparse
import math

from ..float_text import FLOAT_SIZES, float_lost
from ..value_rules import (bench_rounds_problem, bootstrap_problem, eval_set_problem, fraction_problem,
                           thread_problem, whole_problem)


def _int_at_least(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    _refuse(whole_problem(value, minimum, what))
    return value


def _refuse(problem: str | None) -> None:
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)


def positive_int(text: str) -> int:
    """An integer >= 1 (counts and sizes: ``--batch-size 0`` is refused with a message, not a traceback)."""
    return _int_at_least(text, 1, "a positive integer")


def bpe_vocab(text: str) -> int:
    """A BPE vocabulary size to train (``demo --vocab``): ``tokenizer.check_bpe_vocab_size``'s rule, 257 to 262,144,
    at the command line. ``demo --vocab 10`` printed the committed verdict and "the cached demo corpus ... is out of
    date; rebuilding it" for a cache that did not exist before refusing 10 (issue 30 round 21, N313)."""
    from ..data.tokenizer import check_bpe_vocab_size  # here: the tokenizer module is heavier than a flag's parse
    from ..errors import UserError

    value = positive_int(text)
    try:
        return check_bpe_vocab_size(value)
    except UserError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def thread_count(text: str) -> int:
    """A number of threads (``--threads``, prepare's ``--workers``): an integer in [1, 4 x the usable cores]. More is
    no faster, and a huge count exhausts the machine: ``bench --threads 1000000`` had OpenMP start threads until it
    segfaulted, and meanwhile other processes on the machine could not start one and died (issue 30 round 6)."""
    value = positive_int(text)
    _refuse(thread_problem(value))
    return value


def bucket_count(text: str) -> int:
    """A number of training-frequency buckets: an integer in [2, ``eval.frequency.MAX_BUCKETS``].
    ``analyze embeddings --sweep --buckets 1000000000`` was accepted and looped over the buckets until memory ran
    out (issue 30 round 6); one bucket compares nothing."""
    from ..eval.frequency import MAX_BUCKETS

    value = _int_at_least(text, 2, "an integer >= 2")
    if value > MAX_BUCKETS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_BUCKETS} (each bucket averages a share of the "
                                         f"training tokens), got {value:,}")
    return value


def bootstrap_count(text: str) -> int:
    """A number of bootstrap draws (``bootstrap_problem``)."""
    value = _int_at_least(text, 0, "a whole number >= 0")
    _refuse(bootstrap_problem(value))
    return value


def add_bootstrap_option(parser) -> None:
    """``--bootstrap``, one definition for ``analyze fit``, ``analyze scaling`` and ``report``: its floor is said in
    the help, and a count under it is named in the output as intervals from too few draws (``value_rules.few_draws``,
    issue 30 round 28, T60)."""
    from ..value_rules import MIN_BOOTSTRAP

    parser.add_argument("--bootstrap", type=bootstrap_count, default=1000,
                        help=f"bootstrap draws for the scaling intervals (default 1000; 0: no intervals; under "
                             f"{MIN_BOOTSTRAP}, more for --ci above 0.95, the intervals are said to be from too few "
                             f"draws, not of the --ci coverage)")


def bench_repeats(text: str) -> int:
    """bench's ``--repeats``: 1 to ``MAX_BENCH_ROUNDS`` (``value_rules.bench_rounds_problem``, Z157)."""
    value = _int_at_least(text, 1, "a positive integer")
    _refuse(bench_rounds_problem(value, 1))
    return value


def bench_warmup(text: str) -> int:
    """bench's ``--warmup``: 0 to ``MAX_BENCH_ROUNDS`` (``value_rules.bench_rounds_problem``, Z166)."""
    value = _int_at_least(text, 0, "a whole number >= 0")
    _refuse(bench_rounds_problem(value, 0))
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0 (0 is meaningful: no bootstrap draws, no warmup rounds, no few-shot examples)."""
    return _int_at_least(text, 0, "a whole number >= 0")


def written_float(text: str) -> float:
    """``float`` refusing a number a 64-bit float cannot hold (``float_text.float_lost``): ``--temperature 1e-400``
    was 0.0, greedy decoding, and ``--lr 1e-400`` "must be > 0" (issue 30 round 26, P30's kind). nan and inf are left
    to the option's own rule (``generate`` names them with the option's range)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if (lost := float_lost(text, value)) is not None:
        raise argparse.ArgumentTypeError(f"{text!r} {lost}; {FLOAT_SIZES}")
    return value


def _finite(text: str) -> float:
    value = written_float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (a learning rate, a fraction of examples)."""
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def open_fraction(text: str) -> float:
    """A number strictly between 0 and 1 (an interval's coverage: ``fraction_problem``)."""
    value = _finite(text)
    _refuse(fraction_problem(value, shown=text))
    return value


def seed(text: str) -> int:
    """A seed: an integer in [0, 2^32 - 1] (``leviathan.seeds``)."""
    from ..seeds import seed_problem

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
    problem = seed_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def seed_list(text: str) -> list[int]:
    """Comma-separated seeds (``--seeds 0,1,2``), each checked like ``seed``, none twice, no empty item (``0,`` dropped
    the empty one without a word: issue 30 round 11, S212)."""
    values = [part.strip() for part in text.split(",")]
    if not any(values):
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds such as 0,1,2, got {text!r}")
    if not all(values):
        raise argparse.ArgumentTypeError(f"an empty item in {text!r}; give comma-separated seeds such as 0,1,2 with "
                                         f"nothing between two commas or at either end")
    seeds = [seed(part) for part in values]
    if len(set(seeds)) < len(seeds):
        twice = next(s for i, s in enumerate(seeds) if s in seeds[:i])
        raise argparse.ArgumentTypeError(f"seed {twice} is listed twice in {text!r}; list each seed once")
    return seeds


def eval_set_name(text: str) -> str:
    """``--eval-set``: the name of an eval set rows were evaluated on (``eval_set_problem``)."""
    _refuse(eval_set_problem(text))
    return text


def device(text: str) -> str:
    """A device: auto, cpu, cuda or cuda:N (``leviathan.devices``); ``eval --device tpu`` was a torch traceback."""
    from ..devices import device_problem

    problem = device_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def harness_device(text: str) -> str:
    """A device lm-evaluation-harness runs on: cpu, cuda or cuda:N. It ran ``--device tpu`` on the CPU without a
    word (issue 30 round 7)."""
    from ..devices import device_problem

    problem = device_problem(text, auto=False)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def utf8_text(text: str) -> str:
    """Text given on the command line that is UTF-8 (a prompt): bytes that are not were decoded by Python as lone
    surrogates, which no tokenizer takes (``generate --prompt $'a\\xff'`` ended in a TypeError traceback, issue 30
    round 5)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(text[e.start])
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"character U+{code:04X}"
        raise argparse.ArgumentTypeError(f"is not UTF-8 text ({what} at character {e.start}); give the text in UTF-8 "
                                         f"(your terminal's encoding may differ: check `locale`)") from None
    return text


def data_root_folder(text: str) -> str:
    """A ``--data-root`` folder: one that exists and is a folder. A regular file or a missing path was accepted by
    ``sweep`` without a word (unused by a grid with no text eval sets, issue 30 round 20 K133), and ``lm-eval`` said
    of a file "does not exist" (K217): both refused here, naming which of the two it is."""
    import os

    if os.path.isdir(text):
        return text
    from ..errors import not_a_folder_there

    what = not_a_folder_there(text) if os.path.lexists(text) else "does not exist"  # a pipe: "a file" (round 29, V27)
    raise argparse.ArgumentTypeError(f"{text!r} {what}; pass the data folder (the one holding the task or eval "
                                     f"text files, e.g. ../shared/data), or leave --data-root out to use "
                                     f"$LEVIATHAN_DATA")
