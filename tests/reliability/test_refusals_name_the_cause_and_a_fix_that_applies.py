"""Refusals that named a fix the command cannot take, or not the cause (issue 30 round 27: R18, R21, R51, R59, R61,
R73, R76, "unclear").

Each was one clean line, exit 2, yet followed it led nowhere: ``gpu_check.py bench --quick --preset nope`` told to
drop --quick, which met "not a model preset" (R61); gpu_check.sh took PYTHON=/bin/true (it exits 0) for a python,
and every stage then failed on a work folder never made, no line naming PYTHON (R21); the rest are named in their
tests. Each line now names the
cause first and a fix this very command takes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error  # noqa: E402
from test_gpu_check_output_rules import gc, refused  # noqa: E402,F401 - fixtures
from test_gpu_check_verb_rules import QUICK, _shell  # noqa: E402


# ---- R61: an unknown preset named as such before the --quick conflict -------------------------------
def test_an_unknown_preset_with_quick_is_named_as_no_preset(tmp_path, refused):
    line = refused(["bench", *QUICK, "--json", tmp_path / "b.json", "--preset", "nope", "--repeats", "1"])
    assert "--preset 'nope' is not a model preset" in line and "cpu-tiny" in line and "--quick" not in line
    assert not (tmp_path / "b.json").exists()


def test_the_preset_quick_measures_is_taken_with_quick(gc):
    from argparse import Namespace

    args = Namespace(quick=True, preset="cpu-tiny", batch=None, seq=None, repeats=None, warmup=None)
    assert gc.bench.bench_sizes(args)["preset"] == "cpu-tiny"


# ---- R21: PYTHON must print a Python's version, not merely exit 0 ------------------------------------
def _fake_python(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "fakepy"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize("body, says", [
    ("exit 0", "is not a Python interpreter that runs (missing, not executable, or not a python"),
    ('echo "$@"', "is not a Python interpreter that runs"),
    ('echo "old 3.8"', "is Python 3.8, older than the 3.10 this checkout needs; set PYTHON to a Python 3.10"),
], ids=["true", "echo", "python-3.8"])
def test_a_python_setting_that_is_no_python_is_named(tmp_path, body, says):
    exe = _fake_python(tmp_path, body)
    proc = _shell(tmp_path, PYTHON=str(exe))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err[-2000:]
    line = one_error(err)
    assert str(exe) in line and says in line, line
    assert not (tmp_path / "gw").exists()
