"""argparse ``type=`` functions for numbers that parse but make no sense: refused at the command line, one line each.

    parser.add_argument("--steps", type=positive_int)          # 0 -> "error: argument --steps: ..."
    parser.add_argument("--bootstrap", type=bootstrap_count)    # -3, 10**12 -> "error: argument --bootstrap: ..."
    parser.add_argument("--ci", type=open_fraction)             # nan, inf, 1.5 refused
    parser.add_argument("--lr", type=positive_float)
    parser.add_argument("--seed", type=seed)                    # -1, 2**40 refused (``leviathan.seeds``)
    parser.add_argument("--threads", type=thread_count)         # 0, 1000000 refused: at most 4 x the usable cores
    parser.add_argument("--buckets", type=bucket_count)         # 1, 10**9 refused: 2 to eval.frequency.MAX_BUCKETS
    parser.add_argument("--device", type=device)                # tpu, cuda:x refused (``leviathan.devices``)

Python's ``int`` and ``float`` accept what no option means (a negative count, ``nan``, ``inf``), which ended in a
traceback, a silent clamp or a result that looked fine (``analyze fit --bootstrap -3``). argparse turns an
``ArgumentTypeError`` into ``leviathan VERB: error: argument --X: ...`` and exit status 2. Every verb takes its
number types from here (``generate`` checks its sampling options in ``run``: its callers expect a return of 2).
"""

from __future__ import annotations

import argparse
import math
import os


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


# The rules on values (a Python API's arguments, an option once parsed): each returns why ``value`` is not one, or
# None. The option types above and below parse the text and apply the same rule, so a Python caller hears the flag's
# words: ``write_report(seed=True)`` was taken as seed 1 and ``ci=2`` as a '200% interval' (issue 30 round 16,
# C241-C245). ``api_check`` raises the UserError.
def whole_problem(value, minimum: int, what: str) -> str | None:
    """Why ``value`` is not a whole number >= ``minimum`` (a bool, a float, text are not: ``is_integer``)."""
    from ..integers import is_integer

    if not is_integer(value):
        return f"expected {what}, got {value!r}"
    return f"must be {what}, got {value}" if value < minimum else None


MAX_BOOTSTRAP = 100_000  # draws: each refits the curve (~1 ms); 10**12 ran until memory ran out (round 9, M88)


def bootstrap_problem(value) -> str | None:
    """Why ``value`` is not a number of bootstrap draws: an integer in [0, ``MAX_BOOTSTRAP``]. Each draw
    refits the scaling curve (about a millisecond): ``report --bootstrap 1000000000000`` was accepted and, on a sweep
    of several sizes, drew until memory ran out (issue 30 round 9, M88)."""
    problem = whole_problem(value, 0, "a whole number >= 0")
    if problem is None and value > MAX_BOOTSTRAP:
        problem = f"must be at most {MAX_BOOTSTRAP:,} (each draw refits the curve; the default is 1,000), got {value:,}"
    return problem


def fraction_problem(value, shown=None) -> str | None:
    """Why ``value`` is not a number strictly between 0 and 1 (an interval's coverage); ``shown``: as typed."""
    import numbers

    shown = value if shown is None else shown
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return f"expected a number, got {shown!r}"
    if not math.isfinite(value):
        return f"must be a finite number, got {shown!r}"
    return None if 0 < value < 1 else f"must lie strictly between 0 and 1, got {shown!r}"


def number_problem(value, above: float | None = None, shown: str = "a finite number") -> str | None:
    """Why ``value`` is not a finite real number (> ``above`` when given; a numpy float counts, a bool, a text and
    a tensor do not); ``shown`` names what is expected. One rule for the method functions' numbers: a NaN target,
    a negative learning rate and a text among the values were taken or ended in numpy's errors (issue 30 round 19,
    J280, J288, J289)."""
    import numbers

    import numpy as np

    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        return f"expected {shown}, got {type(value).__name__} {value!r:.40}"
    if not math.isfinite(value) or (above is not None and not value > above):
        return f"must be {shown}, got {value!r}"
    return None


def eval_set_problem(value) -> str | None:
    """Why ``value`` is not the name of an eval set: '' was accepted and printed "ppl -" for every run (issue 30
    round 11, S119, S121)."""
    if not isinstance(value, str) or not value.strip():
        shown = "an empty name" if isinstance(value, str) else repr(value)
        return f"expected the name of an eval set such as val or wikitext2, got {shown}"
    return None


def switch_problem(value) -> str | None:
    """Why ``value`` is not a switch: True or False (numpy's bool too). Text and numbers are not: Python reads any
    non-empty text as true, so ``prepare(..., overwrite='no')`` replaced a data folder and ``train(..., quiet='no')``
    printed nothing (issue 30 round 17, E194, E190, E19; ``to_hf``'s overwrite since round 8)."""
    import numpy as np

    return None if isinstance(value, (bool, np.bool_)) else f"must be True or False, got {value!r:.60}"


def check_switches(api: str, **switches) -> None:
    """TypeError ``API: NAME must be True or False, got ...; pass NAME=True or NAME=False`` for the first of
    ``switches`` (an API's bool parameters, by name) that ``switch_problem`` refuses; checked before any work."""
    for name, value in switches.items():
        problem = switch_problem(value)
        if problem is not None:
            raise TypeError(f"{api}: {name} {problem}; pass {name}=True or {name}=False (a text such as 'no' or a "
                            f"number is not a switch)")


def check_callback(api: str, name: str, value) -> None:
    """TypeError when ``value`` is neither None nor a function (a ``report=`` or ``log=`` that takes one message):
    ``read_results(path, report='yes')`` was taken while no line was damaged (E27) and was called as a function at
    the first torn one, "'str' object is not callable" (issue 30 round 17, E30)."""
    if value is not None and not callable(value):
        raise TypeError(f"{api}: {name} must be a function taking one message (such as print), or None for the "
                        f"default, got {value!r:.60}; pass one")


def thread_problem(value) -> str | None:
    """Why ``value`` is not a number of threads: an integer in [1, 4 x the usable cores] (``thread_count``)."""
    problem = whole_problem(value, 1, "a positive integer")
    cores = usable_cores()
    if problem is None and value > 4 * cores:
        problem = f"must be at most {4 * cores} (4 x the {cores} cores this process may use), got {value}"
    return problem


def path_problem(value, many: bool = False) -> str | None:
    """Why ``value`` is not a path (or, with ``many``, a non-empty list of them); '' is the current folder to
    ``Path`` (issue 30 round 15, B186). ``write_report``'s rule (round 16), and every API writer's place since
    round 19 (J244: ``to_hf(m, None)`` was os.fspath's TypeError naming no argument)."""
    values = list(value) if many and isinstance(value, (list, tuple)) else [value]
    if not values:
        return "is an empty list: no results folder was given"
    for v in values:
        if not isinstance(v, (str, os.PathLike)):
            return f"expected a path (a str or a pathlib.Path), got {v!r:.60}"
        if os.fspath(v) == "":
            return "is an empty path (''), which would be read as the current folder"
    return None


def api_check(api: str, name: str, problem: str | None, fix: str) -> None:
    """UserError ``API: NAME: PROBLEM; FIX`` (as argparse's ``argument --FLAG: PROBLEM``) for a Python argument that
    breaks its rule (``problem`` None: it keeps it)."""
    from ..errors import UserError

    if problem is not None:
        raise UserError(f"{api}: {name}: {problem}; {fix}")


def positive_int(text: str) -> int:
    """An integer >= 1 (counts and sizes: ``--batch-size 0`` is refused with a message, not a traceback)."""
    return _int_at_least(text, 1, "a positive integer")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one, else every core)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


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


def non_negative_int(text: str) -> int:
    """An integer >= 0 (0 is meaningful: no bootstrap draws, no warmup rounds, no few-shot examples)."""
    return _int_at_least(text, 0, "a whole number >= 0")


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
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
