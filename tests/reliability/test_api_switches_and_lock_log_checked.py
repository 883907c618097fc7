"""API switches that took a text or a number, and folder_lock's log= (issue 30 round 30).

Y621, Y622, Y627-Y629, Y631, Y635, Y711, Y713: ``folder_lock(again='yes')``, ``folder_lock(beside=1)``,
``to_digits(check='no')`` (the check ran) and ``check=0`` (the unchecked id 400 came back as another id's digits),
``window(with_derivative='no')``, ``default_mode(directory='yes')``, ``open_source(strict=1)``,
``check_typed_rows(one_per_arm='yes')`` and ``device_problem('auto', auto='no')`` were read by truthiness without a
word. Each now goes through ``value_rules.check_switches``: one ``ArgumentTypeError`` line (a UserError, still a
TypeError) naming the argument and the fix, before any work. tests/unit/test_switches_checked.py holds every other
public switch to the same rule.

Y431, Y619: ``folder_lock(log='print')`` and ``log=None`` were called only when a killed writer's lock was taken
over: Python's "'str' object is not callable" / "'NoneType' object is not callable". ``log`` is now checked at the
call (``value_rules.check_callback``, now a UserError too), and None means the default, as read_results' report=.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import torch

from leviathan import devices
from leviathan import io as lio
from leviathan.errors import ArgumentTypeError, UserError
from leviathan.experiments.machinery.results import check_typed_rows
from leviathan.data.sources import open_source
from leviathan.locking import folder_lock
from leviathan.model import bspline, digits

pytestmark = [pytest.mark.reliability]


def _line(name: str, value) -> str:
    return f"{name} must be True or False, got {value!r}; pass {name}=True or {name}=False"


@pytest.mark.parametrize("keyword, value", [("again", "yes"), ("beside", 1), ("again", None)])
def test_folder_lock_switches_are_switches(tmp_path, keyword, value):
    folder = tmp_path / "lk"
    with pytest.raises(ArgumentTypeError) as caught:
        with folder_lock(folder, "export", **{keyword: value}):
            pass
    assert str(caught.value).startswith(f"folder_lock: {_line(keyword, value)}")
    assert not folder.exists() and not (tmp_path / ".lk.lock").exists()  # refused before any work


@pytest.mark.parametrize("keyword, value", [("fix", 5), ("fix", ""), ("who", 3)])
def test_folder_lock_words_are_words(tmp_path, keyword, value):
    """Round 33, AE289: fix=5 (the refusal's advice) was taken and kept for a later refusal's "or 5"."""
    folder = tmp_path / "lk"
    with pytest.raises(UserError, match=rf"^folder_lock: {keyword}: expected .*, as text, got {value!r}; pass "):
        with folder_lock(folder, "export", **{keyword: value}):
            pass
    assert not folder.exists()


@pytest.mark.parametrize("value", ["no", 0])
def test_to_digits_check_is_a_switch(value):
    with pytest.raises(ArgumentTypeError) as caught:
        digits.to_digits(torch.tensor([400]), 7, 3, check=value)
    assert str(caught.value).startswith(f"to_digits: {_line('check', value)}")
    assert digits.to_digits(torch.tensor([342]), 7, 3, check=False).tolist() == [[6, 6, 6]]


@pytest.mark.parametrize("call, api, name, value", [
    (lambda: bspline.window(torch.tensor([0.5]), 8, with_derivative="no"), "window", "with_derivative", "no"),
    (lambda: lio.default_mode(directory="yes"), "default_mode", "directory", "yes"),
    (lambda: devices.device_problem("auto", auto="no"), "device_problem", "auto", "no"),
    (lambda: devices.unavailable_line("cpu", "--device ", auto=1), "unavailable_line", "auto", 1),
    (lambda: check_typed_rows([], "x", one_per_arm="yes"), "check_typed_rows", "one_per_arm", "yes"),
    (lambda: check_typed_rows([], "x", compared="no"), "check_typed_rows", "compared", "no"),
])
def test_api_switches_refuse_a_text_or_a_number(call, api, name, value):
    with pytest.raises(ArgumentTypeError) as caught:
        call()
    assert str(caught.value).startswith(f"{api}: {_line(name, value)}")


def test_open_source_strict_is_a_switch(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    with pytest.raises(ArgumentTypeError) as caught:
        open_source(str(tmp_path), strict=1)
    assert str(caught.value).startswith(f"open_source: {_line('strict', 1)}")
    assert type(open_source(str(tmp_path), strict=True)).__name__ == "TextFiles"


def test_switches_still_take_bools():
    assert bspline.window(torch.tensor([0.5]), 8, with_derivative=False) is not None
    assert lio.default_mode(directory=True) & 0o700 == 0o700
    assert devices.device_problem("auto", auto=True) is None and devices.device_problem("auto", auto=False)


def _dead_holder(folder, tmp_path) -> None:
    """A real process takes ``folder``'s lock and is killed holding it (the lock file stays, naming it)."""
    held = tmp_path / "held"
    if held.exists():
        held.unlink()
    code = (f"from leviathan.locking import folder_lock\nimport time\nwith folder_lock({str(folder)!r}, 'export'):\n"
            f"    open({str(held)!r}, 'w').close(); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ))
    t0 = time.time()
    while not held.exists() and time.time() - t0 < 60:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    assert held.exists()


def test_folder_lock_log_text_is_refused_at_the_call(tmp_path):
    folder = tmp_path / "lk431"
    _dead_holder(folder, tmp_path)
    with pytest.raises(UserError) as caught:
        with folder_lock(folder, "export", log="print"):
            pass
    assert isinstance(caught.value, TypeError)
    assert str(caught.value) == ("folder_lock: log must be a function taking one message (such as print), or None "
                                 "for the default, got 'print'; pass one")
    assert (folder / ".lock").exists()  # the dead writer's lock is left as it was


def test_folder_lock_log_none_is_the_default(tmp_path, capsys):
    folder = tmp_path / "lk619"
    _dead_holder(folder, tmp_path)
    with folder_lock(folder, "export", log=None):
        result = "locked"
    assert result == "locked"
    assert "took over the lock of" in capsys.readouterr().err
    said = []
    _dead_holder(folder, tmp_path)
    with folder_lock(folder, "export", log=said.append):
        pass
    assert len(said) == 1 and said[0].startswith("note: took over the lock of")


@pytest.mark.parametrize("log, shown", [(lambda: None, r"<lambda>\(\)"), (lambda m, extra: None, r"<lambda>\(m, extra\)")])
def test_folder_lock_log_of_the_wrong_arity_is_refused_at_the_call(tmp_path, log, shown):
    """Round 31, AA281, AA714: a callback that cannot take the one message took over the dead writer's lock and then
    ended in Python's raw "takes 0 positional arguments but 1 was given"."""
    folder = tmp_path / "lk714"
    _dead_holder(folder, tmp_path)
    with pytest.raises(UserError, match=rf"folder_lock: log must be a function taking one message .*got .*{shown}, "
                                        r"which cannot be called with one message; pass a function of one argument"):
        with folder_lock(folder, "export", log=log):
            pass
    assert (folder / ".lock").exists()  # the dead writer's lock is left as it was


def test_the_callback_siblings_refuse_the_wrong_arity_before_any_work(tmp_path):
    """Round 31, AA714's siblings: merge_sweeps, read_records and adopt_rows called their report/log unchecked."""
    from leviathan.experiments.machinery.embedding_files import read_records
    from leviathan.experiments.machinery.shards import merge_sweeps

    for call, who in ((lambda: merge_sweeps([tmp_path / "none"], report=lambda: None), "merge_sweeps: report"),
                      (lambda: read_records(tmp_path / "none", report=lambda a, b: None), "read_records: report")):
        with pytest.raises(UserError, match=rf"^{who} must be a function taking one message"):
            call()
