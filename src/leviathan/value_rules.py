"""The rules on values: each ``*_problem`` returns why a value breaks its rule (a text a message can quote), or None.

    problem = whole_problem(steps, 1, "a positive integer")    # None, or "must be a positive integer, got 0"
    api_check("prepare", "workers", thread_problem(w), "pass 1 to 4 x the usable cores")   # UserError when broken

One rule per kind of value, shared by the two boundaries that take values: the Python API (``api_check``,
``check_switches``, ``check_callback`` raise) and the command line (``commands.values`` parses the text and applies
the same rule, so a Python caller hears the flag's words). The library's modules import from here, not from the CLI
layer.
"""

from __future__ import annotations

import math
import os

from .errors import NUL, nul_byte  # noqa: F401  (NUL: the one character no path can hold; nul_byte its rule)


# A Python caller hears the flag's words: ``write_report(seed=True)`` was taken as seed 1 and ``ci=2`` as a
# '200% interval' (issue 30 round 16, C241-C245).
def whole_problem(value, minimum: int, what: str) -> str | None:
    """Why ``value`` is not a whole number >= ``minimum`` (a bool, a float, text are not: ``is_integer``)."""
    from .integers import is_integer

    if not is_integer(value):
        return f"expected {what}, got {value!r}"
    return f"must be {what}, got {value}" if value < minimum else None


MAX_BOOTSTRAP = 100_000  # draws: each refits the curve (~1 ms); 10**12 ran until memory ran out (round 9, M88)


MIN_BOOTSTRAP = 100  # draws below which no interval is called a 95% (or any ci) interval (round 28, T60)


def bootstrap_floor(ci: float) -> int:
    """The fewest draws whose percentile interval of coverage ``ci`` is one: ``MIN_BOOTSTRAP``, and more for a wider
    ``ci``, so that at least 2 draws lie beyond each end (0.99: 400). Below it the ends are the extreme draws or
    nearly, whatever ``ci`` says: ``analyze fit --bootstrap 1`` printed "95% bootstrap intervals" [1.75, 1.75] from
    one draw (issue 30 round 28, T60)."""
    return max(MIN_BOOTSTRAP, math.ceil(2 / ((1 - ci) / 2) - 1e-9))


def level_percent(ci: float) -> str:
    """An interval's coverage ``ci`` as the percentage it is, for "{level_percent(ci)}% interval": 0.999 is '99.9',
    0.95 '95'. ``int(100 * ci)`` called a 99.9% interval "99%" and a 97.5% one "97%" in analyze fit, the report and
    the demo (issue 30 round 29, V15); ten significant digits hide float noise (0.95 * 100 is 95.00000000000001)."""
    return f"{100 * ci:.10g}"


def few_draws(num_draws: int, ci: float) -> str | None:
    """The words for intervals from fewer draws than ``bootstrap_floor(ci)`` ("from only 2 bootstrap draws, not 95%
    intervals: ..."), naming the fix, --bootstrap; None for 0 draws (no interval) or enough of them."""
    floor = bootstrap_floor(ci)
    if num_draws == 0 or num_draws >= floor:
        return None
    return (f"intervals from only {num_draws} bootstrap draw{'s' if num_draws != 1 else ''}, not {level_percent(ci)}% "
            f"intervals: at least {floor} draws put 2 beyond each end; give --bootstrap {floor} or more (default 1000)")


def bootstrap_problem(value) -> str | None:
    """Why ``value`` is not a number of bootstrap draws: an integer in [0, ``MAX_BOOTSTRAP``]. Each draw
    refits the scaling curve (about a millisecond): ``report --bootstrap 1000000000000`` was accepted and, on a sweep
    of several sizes, drew until memory ran out (issue 30 round 9, M88)."""
    problem = whole_problem(value, 0, "a whole number >= 0")
    if problem is None and value > MAX_BOOTSTRAP:
        problem = f"must be at most {MAX_BOOTSTRAP:,} (each draw refits the curve; the default is 1,000), got {value:,}"
    return problem


MAX_BENCH_ROUNDS = 1_000  # bench's repeats or warmup rounds per model: the sections' defaults are 1 to 9 (Z157, Z166)


def bench_rounds_problem(value, minimum: int) -> str | None:
    """Why ``value`` is not a number of bench rounds (``--repeats``: ``minimum`` 1, ``--warmup``: 0): a whole number in
    [``minimum``, ``MAX_BENCH_ROUNDS``]. ``bench --repeats 1000000000`` and ``--warmup 1000000000`` were taken without
    a word and ran until killed, the kind of a run of absurd length refused in train, demo and sweep (issue 30 round
    31, Z157, Z166; round 30, X54)."""
    problem = whole_problem(value, minimum, "a positive integer" if minimum else "a whole number >= 0")
    if problem is None and value > MAX_BENCH_ROUNDS:
        problem = (f"must be at most {MAX_BENCH_ROUNDS:,} (each round times every model once; the sections' defaults "
                   f"are 1 to 9), got {value:,}")
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

    if not isinstance(value, numbers.Real) or isinstance(value, _bools()):
        return f"expected {shown}, got {type(value).__name__} {value!r:.40}"
    if not math.isfinite(value) or (above is not None and not value > above):
        return f"must be {shown}, got {value!r}"
    return None


def hub_token_problem(value) -> str | None:
    """Why ``value`` is no Hugging Face Hub ``token`` (None, a token's text, or True/False: use, or not, the one
    logged in with): ``save_pretrained(d, token=5)`` was taken without a word, where every switch and size of the call
    is checked (issue 30 round 35, AI330), as ``from_pretrained``'s was."""
    if value is None or isinstance(value, _bools()) or (isinstance(value, str) and value.strip()):
        return None
    return (f"token must be a Hugging Face token (its text), True (the one you logged in with) or None, got "
            f"{value!r:.40}")


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
    return None if isinstance(value, _bools()) else f"must be True or False, got {value!r:.60}"


def _bools() -> tuple[type, ...]:
    """``bool``, and numpy's when numpy is loaded (a numpy bool exists only then). Importing numpy here broke
    gpu_check.sh's claim step, which runs on a bare python3 before anything is installed (issue 30 round 27, R20)."""
    import sys

    numpy = sys.modules.get("numpy")
    return (bool, numpy.bool_) if numpy is not None else (bool,)


def check_switches(api: str, **switches) -> None:
    """``errors.ArgumentTypeError`` (a UserError, still the TypeError it always was) ``API: NAME must be True or
    False, got ...; pass NAME=True or NAME=False`` for the first of ``switches`` (an API's bool parameters, by name)
    that ``switch_problem`` refuses; checked before any work."""
    from .errors import ArgumentTypeError

    for name, value in switches.items():
        problem = switch_problem(value)
        if problem is not None:
            raise ArgumentTypeError(f"{api}: {name} {problem}; pass {name}=True or {name}=False (a text such as 'no' or a "
                            f"number is not a switch)")


def check_callback(api: str, name: str, value) -> None:
    """TypeError when ``value`` is neither None nor a function (a ``report=`` or ``log=`` that takes one message):
    ``read_results(path, report='yes')`` was taken while no line was damaged (E27) and was called as a function at
    the first torn one, "'str' object is not callable" (issue 30 round 17, E30). ``errors.ArgumentTypeError``, a
    UserError that is still the TypeError it was, so the CLI and callers read it as one line (round 30, Y431). A
    function that cannot be called with the one message is refused too, before any work: ``folder_lock(log=lambda:
    None)`` took over a dead writer's lock and then ended in "<lambda>() takes 0 positional arguments but 1 was given"
    (issue 30 round 31, AA281, AA714: ``lambda m, extra: None``). A callable whose signature Python cannot read (some
    builtins) is taken as it is."""
    import inspect

    from .errors import ArgumentTypeError

    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{api}: {name} must be a function taking one message (such as print), or None for the "
                        f"default, got {value!r:.60}; pass one")
    if value is None:
        return
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):  # no signature to read (a builtin of C): left to the call
        return
    try:
        signature.bind("message")
    except TypeError:
        shown = getattr(value, "__qualname__", type(value).__name__)
        raise ArgumentTypeError(f"{api}: {name} must be a function taking one message (such as print), or None for the "
                                f"default, got {shown}{signature}, which cannot be called with one message; pass a "
                                f"function of one argument (lambda message: ...)") from None


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
    round 19 (J244: ``to_hf(m, None)`` was os.fspath's TypeError naming no argument). A NUL byte is refused here,
    where every writer's and reader's place passes: no file name can hold one, and each writer ended in Python's raw
    "ValueError: embedded null byte" from its first os.stat (issue 30 round 27, S95, S110, S227, S474, S551-S559)."""
    check_switches("path_problem", many=many)  # 'no' was true (round 30, Y621's kind)
    values = list(value) if many and isinstance(value, (list, tuple)) else [value]
    if not values:
        return "is an empty list: no results folder was given"
    for v in values:
        if not isinstance(v, (str, os.PathLike)) or not isinstance(text := os.fspath(v), str):
            return f"expected a path (a str or a pathlib.Path), got {v!r:.60}"
        if text == "":
            return "is an empty path (''), which would be read as the current folder"
        if (nul := nul_byte(text)) is not None:  # the wording errors.missing gives a reader (round 30, Y569)
            # the path whole: cut at 80 characters, a long path lost the NUL the line is about (the CI of ad3fd6e)
            return f"{text!r} {nul} (remove it)"
    return None


def model_problem(value) -> str | None:
    """Why ``value`` is not a model (a torch module), naming its type and never its repr, which for a module is many
    lines (``generate``'s one line was three, issue 30 round 25, Y413); ``load_model``'s (model, config) pair is named
    with its fix, ``load_model(RUN)[0]`` (``evaluate`` of the pair was "'tuple' object has no attribute 'parameters'",
    Y404)."""
    import torch

    if isinstance(value, torch.nn.Module):
        return None
    if isinstance(value, tuple):
        parts = ", ".join(type(v).__name__ for v in value[:3]) + (", ..." if len(value) > 3 else "")
        pair = " (load_model returns the model and its config: take load_model(RUN)[0])" if value and isinstance(
            value[0], torch.nn.Module) else ""
        return f"expected a model (a torch module such as leviathan's CausalLM), got a tuple of ({parts}){pair}"
    shown = f" {value!r:.40}" if isinstance(value, (str, bytes, int, float)) or value is None else ""  # one line
    return f"expected a model (a torch module such as leviathan's CausalLM), got {type(value).__name__}{shown}"


def api_check(api: str, name: str, problem: str | None, fix: str) -> None:
    """UserError ``API: NAME: PROBLEM; FIX`` (as argparse's ``argument --FLAG: PROBLEM``) for a Python argument that
    breaks its rule (``problem`` None: it keeps it)."""
    from .errors import UserError

    if problem is not None:
        raise UserError(f"{api}: {name}: {problem}; {fix}")


def check_whole(api: str, name: str, value, low: int, high: int | None = None, fix: str = "") -> int:
    """``value`` as a plain int when it is a whole number in [``low``, ``high``] (``high`` None: no upper bound); else
    one line ``API: NAME must be a whole number in RANGE, got VALUE; FIX``: an ``ArgumentTypeError`` for a bool, a
    float or text (a bool is an int to Python: ``bake(True)`` baked one row), an ``ArgumentValueError`` outside the
    range (``bake(0)``, ``bake(batch_size=-3)`` ended in torch's errors; issue 30 round 22, S225-S237, S480, S481).
    Both are UserErrors and still the TypeError / ValueError torch's convention expects."""
    from .errors import ArgumentTypeError, ArgumentValueError
    from .integers import is_integer

    bounds = f">= {low:,}" if high is None else f"in [{low:,}, {high:,}]"
    tail = f"; {fix}" if fix else ""
    if not is_integer(value):
        raise ArgumentTypeError(f"{api}: {name} must be a whole number {bounds}, got {type(value).__name__} "
                                f"{value!r:.40}{tail}")
    if value < low or (high is not None and value > high):
        raise ArgumentValueError(f"{api}: {name} must be a whole number {bounds}, got {value:,}{tail}")
    return int(value)


def check_read_path(api: str, name: str, value, fix: str, many: bool = False) -> None:
    """UserError ``API: NAME: PROBLEM; FIX`` when a public reader's ``value`` is not a path (``path_problem``):
    ``read_meta(None)``, ``load_grid(123)``, ``load_model(None)`` ... were os.fspath's bare "TypeError: expected str,
    bytes or os.PathLike object, not NoneType", naming no argument and no fix (issue 30 round 20, M333-M350: the J244
    kind, fixed for the API writers in round 19, not for the readers). ``many``: a non-empty list of paths. A file's
    path typed as a folder's ('run1/config.yaml/') is refused too, as the CLI's path options refuse it
    (``empty_paths.refuse_file_typed_as_folder``): ``Path`` drops the '/', so ``load_yaml`` read the file without a
    word (issue 30 round 28, U779)."""
    check_switches("check_read_path", many=many)  # 'no' was true (round 30, Y621's kind)
    from .empty_paths import refuse_file_typed_as_folder

    api_check(api, name, path_problem(value, many), fix)
    for text in (value if many and isinstance(value, (list, tuple)) else [value]):
        refuse_file_typed_as_folder(text, f"{api}: {name}")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one, else every core)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
