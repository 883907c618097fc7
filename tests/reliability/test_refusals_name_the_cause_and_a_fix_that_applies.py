"""Refusals that named a fix the command cannot take, or not the cause (issue 30 round 27: R18, R21, R51, R59, R61,
R73, R76, "unclear").

Each was one clean line, exit 2, yet followed it led nowhere: ``gpu_check.py bench --quick --preset nope`` told to
drop --quick, which met "not a model preset" (R61); the rest are named in their tests. Each line now names the
cause first and a fix this very command takes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_gpu_check_output_rules import gc, refused  # noqa: E402,F401 - fixtures
from test_gpu_check_verb_rules import QUICK  # noqa: E402


# ---- R61: an unknown preset named as such before the --quick conflict -------------------------------
def test_an_unknown_preset_with_quick_is_named_as_no_preset(tmp_path, refused):
    line = refused(["bench", *QUICK, "--json", tmp_path / "b.json", "--preset", "nope", "--repeats", "1"])
    assert "--preset 'nope' is not a model preset" in line and "cpu-tiny" in line and "--quick" not in line
    assert not (tmp_path / "b.json").exists()


def test_the_preset_quick_measures_is_taken_with_quick(gc):
    from argparse import Namespace

    args = Namespace(quick=True, preset="cpu-tiny", batch=None, seq=None, repeats=None, warmup=None)
    assert gc.bench.bench_sizes(args)["preset"] == "cpu-tiny"
