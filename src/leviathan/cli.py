"""Command line: ``leviathan <verb> ...`` and ``python -m leviathan <verb>`` (torchrun-compatible).

Each verb lives in ``leviathan.commands.<verb>`` and exposes ``add_arguments(parser)`` and ``run(args) -> int``;
modules are imported only when their verb runs, so ``leviathan params`` does not pay for importing the training
stack. A ``UserError`` (bad input, bad config) prints one line ``error: ...`` and exits with status 2, and so does
an ``OSError`` about the user's storage (``errors.storage_error_message``; also the failures torch.save and
safetensors report without an errno, ``leviathan.storage``); nothing else is swallowed. ``leviathan`` with no verb
prints the help on stderr and exits 2; ``leviathan --help`` prints it on stdout and exits 0. An option given twice is
argparse's usage error naming it, exit 2 (``leviathan.once_options``: the last one counted without a word). A SIGTERM
that arrives before a verb has its own handling (``train`` catches it from its session's first line) ends it with one
line saying what it stopped and exit status 143, after the verb's cleanup ran (temporary folders removed, locks
released).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading

from .errors import ReportedInterrupt, Stopped, StorageError, UserError, storage_error_message
from .printed import check_stdout_open, lost_output, reader_left, watched_stdout
from .storage import storage_oserror
from .warning_lines import one_line_warnings

# verb -> (module, one-line help)
VERBS: dict[str, tuple[str, str]] = {
    "demo": ("leviathan.commands.demo", "train dense-tied, dense-untied and leviathan side by side on the built-in "
                                        "corpus, beside the project's verdict (the main job)"),
    "prepare": ("leviathan.commands.prepare", "tokenize a corpus into memory-mapped token shards"),
    "train": ("leviathan.commands.train", "train a model from a YAML config and dotted overrides"),
    "eval": ("leviathan.commands.eval", "loss, perplexity and bits per byte of a checkpoint"),
    "generate": ("leviathan.commands.generate", "sample text from a checkpoint"),
    "export": ("leviathan.commands.export", "export a checkpoint as a Hugging Face directory"),
    "params": ("leviathan.commands.params", "parameter and FLOP table of any configuration"),
    "bench": ("leviathan.commands.bench", "side-by-side speed and memory benchmark"),
    "sweep": ("leviathan.commands.sweep", "run an experiment grid, resumable"),
    "analyze": ("leviathan.commands.analyze", "scaling fits, frequency buckets, sample efficiency"),
    "report": ("leviathan.commands.report", "Markdown report with figures from sweep results"),
    "lm-eval": ("leviathan.commands.lm_eval", "downstream tasks through lm-evaluation-harness, offline"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="leviathan", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"leviathan {_version()}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb, (module, help_text) in VERBS.items():
        sub.add_parser(verb, help=help_text, add_help=False)
    return parser


def _version() -> str:
    from . import __version__

    return __version__


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Options and positionals in any order: ``train --run-dir r model.hidden_size=64`` works like the reverse
    (plain ``parse_args`` would call a positional after the options 'unrecognized'). After ``--`` every word is a
    positional (a path starting with '-'): ``parse_intermixed_args`` dropped them, and ``eval -- -r`` said "the
    following arguments are required: checkpoint" (issue 30 round 20, K155); plain parsing honours the ``--``."""
    if "--" in argv:
        return parser.parse_args(argv)
    try:
        return parser.parse_intermixed_args(argv)
    except TypeError:  # a verb with sub-commands (analyze): argparse cannot intermix those
        return parser.parse_args(argv)


_VERB_PID = os.getpid()  # the process whose verb the stop handlers serve (set again by ``_stoppable``)


def _stop(signum, frame):
    """Raise ``Stopped``, unless the signal came while a module was being imported: then it is delivered again
    shortly, once the import is done (``_importing``). In a process forked from the verb's (lm-eval's bootstrap pool)
    the signal takes its default action: the handler, inherited, raised ``Stopped`` inside a pool worker the pool was
    ending, printed its traceback and at times left the pool waiting on it (issue 30 round 13, V8, V8a). Once a stop
    is unwinding the verb, a later one (a held stop's timer, a second SIGTERM) is let go: it was raised inside the
    first one's ``except`` and ended in a traceback, exit 1."""
    if os.getpid() != _VERB_PID:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    global _PENDING, _HELD
    with _HOLD_LOCK:
        if _STOPPING:
            return
        if _importing(frame):
            _PENDING, _HELD = signum, _HELD + 1  # round 15 (B258): the timer's may never come (``_stoppable``)
            timer = threading.Timer(0.05, _deliver_again, (signum, _HELD))
            timer.daemon = True
            timer.start()
            return
    _raise_stop(signum)


def _raise_stop(signum: int) -> None:
    """Raise ``Stopped(signum)``, first marking the stop as begun: no held stop's timer delivers after this."""
    global _PENDING, _STOPPING
    with _HOLD_LOCK:
        _PENDING, _STOPPING = None, True
    raise Stopped(signum)


def _deliver_again(signum: int, held: int) -> None:
    """The timer's delivery of the ``held``-th stop held over an import. Once sent it is no longer pending: the handler
    then in place takes it, and that may be the verb's own (train's stop flag, which says the stop and saves or exits
    0). It stayed pending, and ``_stoppable`` raised it a second time after train had said it: three stop lines for one
    SIGHUP, exit 129 after "exit status 0" was announced (issue 30 round 17, E160).

    Footguns (session 2026-12-05, a SIGTERM into ``analyze throughput``, which imports through most of its run): the
    kill's own delivery may come during an import again and be held anew before this thread clears ``_PENDING``, and
    clearing it then dropped that stop: exit 0, the table printed (1 of 142 tries under load). And a timer that fired
    after ``_stoppable`` had raised the stop delivered it a second time, inside the first one's ``except``: a
    traceback, exit 1 (2 of 600). Both are decided under ``_HOLD_LOCK``: only the last hold's timer delivers, never
    once the stop has begun."""
    global _PENDING
    with _HOLD_LOCK:
        if _STOPPING or held != _HELD:
            return
        os.kill(os.getpid(), signum)
        _PENDING = None


# A stop that came during an import and whose delivery again (a timer thread's kill) has not come yet. The timer
# thread may not run before the verb ends (the main thread held the GIL through torch's import), and the stop was
# lost: the table printed and exit 0, as if no signal came (issue 30 round 15, B258). ``_stoppable`` raises it then.
_PENDING: int | None = None
_HELD = 0  # how many stops were held over an import: only the last hold's timer delivers
_STOPPING = False  # a Stopped was raised: later stops are let go
_HOLD_LOCK = threading.RLock()  # reentrant: the handler runs in the main thread, which may hold it


def _importing(frame) -> bool:
    """Whether ``frame`` runs inside Python's import machinery. A stop raised there can leave a module half set up
    (in ``sys.modules`` but not yet an attribute of its package), and a C extension's initialisation may swallow the
    exception: the verb then went on and failed on the broken module (issue 30 round 8: SIGTERM 0.8 s into `train`
    ended in a RecursionError traceback from ``numpy.linalg`` while torch was importing)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _run_verb(module, args, verb: str) -> int:
    """``module.run(args)`` with SIGTERM (and SIGHUP: ``stop_signals``) turned into ``Stopped`` (main thread only),
    reported in one line."""
    return _stoppable(verb, lambda: module.run(args))


def _start_verb(module_name: str, help_text: str, verb: str, rest: list[str]) -> int:
    """Import the verb's module, parse its arguments and run it: all inside ``_stoppable``. The stop handlers were
    set only once the module was imported, and ``leviathan bench``'s import (torch) takes seconds: a SIGTERM then
    killed it without a word, exit 143 (issue 30 round 10, Q132)."""
    from .empty_paths import refuse_empty_paths
    from .negative_values import negative_values
    from .once_options import once_options

    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"leviathan {verb}", description=help_text)
    module.add_arguments(parser)
    once_options(parser)  # `--out ra --out rb` wrote only rb, without a word (issue 30 round 24, V130)
    negative_values(parser)  # `--sizes -1e6,2e6` was "expected one argument" (issue 30 round 35, AH162)
    args = _parse(parser, rest)
    refuse_empty_paths(parser, args)  # "" is not '.' (issue 30 round 15, B186, B185)
    return module.run(args)


def _stoppable(verb: str, call, command: str | None = None, ending: bool = False) -> int:
    """``call()``'s status with the stop signals turned into ``Stopped`` and reported in one line (naming ``command``,
    by default ``leviathan VERB``: scripts/collect_results.py says its own, issue 30 round 15, B254). ``ending``: the
    call is the whole program, and the late-stop handlers (``_say_late_stops``) take over from these as the call's last
    step, inside the ``try``: putting the previous (default) actions back first left microseconds in which a stop
    killed it without a word (10 of 10 tries of `leviathan params`, Ctrl-C as its last line came), and a Ctrl-C while
    they were set from the ``finally`` was a KeyboardInterrupt traceback."""
    from . import stop_signals as stops

    global _VERB_PID, _PENDING, _STOPPING
    _VERB_PID, _PENDING, _STOPPING = os.getpid(), None, False
    stops.output_in_place = False
    stops.final_output(None)
    stop_signals = stops.stop_signals
    main_thread = threading.current_thread() is threading.main_thread()
    previous, late = {}, False
    try:
        for sig in stop_signals() if main_thread else ():  # inside the try: a stop as the second is set is raised
            previous[sig] = signal.getsignal(sig)  # by the first, and was a traceback (1 of 600 SIGTERMs, 2026-12-05)
            signal.signal(sig, _stop)
        status = int(call() or 0)
        if _PENDING is not None:  # a stop held over an import and not yet delivered again (B258)
            _raise_stop(_PENDING)
        if ending and main_thread:
            _say_late_stops(verb, command)
            late = True
        return status
    except Stopped as e:
        print(_stopped_line(signal.Signals(e.signum).name, verb, command), file=sys.stderr)
        return 128 + e.signum
    except ReportedInterrupt:  # the verb said what it stopped (train: the checkpoint it saved)
        return 130
    except KeyboardInterrupt:
        print(_stopped_line("Ctrl-C (SIGINT)", verb, command), file=sys.stderr)
        return 130
    finally:
        if not late:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _stopped_line(name: str, verb: str, command: str | None = None) -> str:
    """The line of a stop that ended ``verb``: its output was not made, or (``stop_signals.output_in_place``) it was
    already in place, complete. `prepare` stopped just after renaming its data folder into place said its temporary
    files were removed and to run it again, beside a complete folder (issue 30 round 22, Q106)."""
    from . import stop_signals

    command = command or f"leviathan {verb}"
    if stop_signals.output_in_place:
        return finished_stop_line(name, command)
    return (f"stopped by {name} before `{command}` finished: its temporary files are removed and nothing "
            f"half-written is taken as valid; run the same command again")


def main(argv: list[str] | None = None) -> int:
    as_program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # no verb is a usage error, as for any command missing its argument: the help on stderr, status 2
        print(build_parser().format_help().rstrip(), file=sys.stderr)
        print("\nerror: no verb given; run `leviathan VERB --help` for a verb's options (start with `leviathan demo`)",
              file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help", "--version") or argv[0] not in VERBS:
        parser = build_parser()
        if argv[0] not in ("-h", "--help", "--version"):
            parser.error(f"unknown verb {argv[0]!r}; choose one of: {', '.join(VERBS)}")
        parser.parse_args(argv)
        return 0
    verb, rest = argv[0], argv[1:]
    module_name, help_text = VERBS[verb]
    with one_line_warnings():  # a library's warning is one line too (issue 30 round 10, P101)
        status = one_line_errors(
            lambda: _stoppable(verb, lambda: _start_verb(module_name, help_text, verb, rest), ending=as_program), verb)
    if as_program:
        end_program(status)
    return status


def end_program(status: int) -> None:
    """End the program with ``status`` without the interpreter's finalization. Finalization first puts the signals'
    default actions back, and a Ctrl-C or SIGTERM in the tenths of a second it then takes (torch's teardown) killed
    the process without a word, status -2 after its result was printed (the landing CI of 3b9aad4, in
    scripts/collect_results.py). What finalization is for still runs first, under the late-stop handlers: the
    ``atexit`` functions (logging's flush, tempfile's and multiprocessing's cleanups), the threads a library left
    running, the standard streams' flush. Footgun: only for the program itself, never under a caller's ``main(argv)``
    (tests, scripts importing the CLI)."""
    import atexit

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _say_late_stops(verb: str, command: str | None = None) -> None:
    """Once the verb has returned, a stop (SIGTERM, SIGHUP, Ctrl-C) that arrives while the process ends (torch's
    teardown takes a moment) says so in one line and ends the process with the stop's status: it killed the process
    without a word, exit 143 (issue 30 round 9, M114: a SIGTERM as `analyze embeddings` finished). The verb's work is
    complete by then. Only in the program itself (``main()`` reading ``sys.argv``), never in a caller's process."""
    from .stop_signals import stop_and_interrupt_signals

    def late(signum, frame):
        name = "Ctrl-C (SIGINT)" if signum == signal.SIGINT else signal.Signals(signum).name
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        print(finished_stop_line(name, command or f"leviathan {verb}"), file=sys.stderr, flush=True)
        os._exit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        for sig in stop_and_interrupt_signals():
            signal.signal(sig, late)


def finished_stop_line(name: str, shown: str) -> str:
    """The line of a stop (``name``: "SIGTERM") that came once the command ``shown`` had done its work: nothing is to be
    run again (scripts/collect_results.py said "run the same command again" of files it had put in place, round 17,
    E387)."""
    return (f"stopped by {name} as `{shown}` was ending, after it had finished: its work is complete (what it printed "
            f"and wrote stands); nothing needs running again")


def one_line_errors(call, verb: str | None = None) -> int:
    """``call()``'s exit status, with a ``UserError`` or a storage failure printed as one line ``error: ...``, exit
    status 2 (``leviathan.errors``); anything else keeps its traceback. Shared with the repository's scripts
    (scripts/collect_results.py ended in a traceback for every storage failure, issue 30 round 8)."""
    try:
        with watched_stdout():
            check_stdout_open()
            return int(call() or 0)
    except StorageError as e:  # an API's write failed under a verb: the fix names the verb's option, not the argument
        print(f"error: {storage_error_message(e, verb) or e}", file=sys.stderr)
        return 2
    except UserError as e:
        from .checkpoint.vanished import pruned_while_read

        print(f"error: {pruned_while_read(str(e)) or e}", file=sys.stderr)  # a step pruned under a reader (A208)
        return 2
    except Exception as e:  # numpy's short write, torch.save and safetensors carry no errno: leviathan.storage
        if reader_left(e):
            return 141
        failed = storage_oserror(e)
        message = storage_error_message(failed, verb)
        if message is None:
            raise
        stdout = lost_output(failed)
        print(f"error: {stdout or message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
