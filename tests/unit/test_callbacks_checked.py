"""Every public function's ``log=`` / ``report=`` callback goes through ``value_rules.check_callback`` (issue 30
round 31, AA281, AA714).

``folder_lock(log=lambda: None)`` and ``log=lambda m, extra: None`` were checked only as callable: the dead writer's
lock was taken over, then the call of the note ended in Python's raw "takes 0 positional arguments but 1 was given".
``check_callback`` now also asks that the function can be called with the one message. This sweep reads the source of
src/leviathan (public functions, the CLI's ``commands`` package aside, as ``test_switches_checked``'s): a parameter
named ``log`` or ``report`` must be named in a ``check_callback(API, NAME, NAME)`` call in the function's own body,
or the function listed in ``CHECKED_ELSEWHERE`` with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

from source_sweep import ROOT, public_functions


CALLBACKS = ("log", "report")

# checked, before the call, by the function named
CHECKED_ELSEWHERE = {
    "experiments/machinery/sweep.py:run_sweep": "_check_sweep_call (check_callback('run_sweep', 'log', log))",
    **{f"bench/sections/{m}.py:run": "run_benchmark, the one caller of each section's run, checks its log first"
       for m in ("decode", "generator", "hf", "memory", "modes", "train", "width")},
}




def _checked(fn: ast.FunctionDef) -> set[str]:
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "check_callback":
            names.update(a.value for a in node.args[1:2] if isinstance(a, ast.Constant))
    return names


def unchecked_callbacks(root: Path = ROOT) -> list[str]:
    found = []
    for rel, fn in public_functions(root):
        if f"{rel}:{fn.name}" in CHECKED_ELSEWHERE:
            continue
        a = fn.args
        given = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg in CALLBACKS]
        missing = [name for name in given if name not in _checked(fn)]
        if missing:
            found.append(f"{rel}:{fn.lineno} {fn.name} ({', '.join(missing)})")
    return found


def test_every_public_callback_goes_through_check_callback():
    found = unchecked_callbacks()
    assert not found, ("public functions calling a log=/report= callback unchecked (route it through "
                       "value_rules.check_callback, or list the function here with the reason):\n" + "\n".join(found))


def test_the_listed_exceptions_still_exist():
    keys = {f"{rel}:{fn.name}" for rel, fn in public_functions(ROOT)}
    assert not sorted(set(CHECKED_ELSEWHERE) - keys)


def test_the_sweep_finds_what_it_says(tmp_path):
    (tmp_path / "m.py").write_text("def f(a, log=print):\n    log(a)\n"
                                   "def g(a, report=None):\n    check_callback('g', 'report', report)\n")
    assert unchecked_callbacks(tmp_path) == ["m.py:1 f (log)"]


def test_check_callback_asks_for_one_message():
    import pytest

    from leviathan.errors import UserError
    from leviathan.value_rules import check_callback

    for fine in (print, None, lambda m: None, lambda *a: None, lambda m, extra=1: None, [].append):
        check_callback("f", "log", fine)
    for wrong in (lambda: None, lambda m, extra: None, lambda *, m: None):
        with pytest.raises(UserError, match="which cannot be called with one message"):
            check_callback("f", "log", wrong)
