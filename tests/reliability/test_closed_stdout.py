"""A command run with its standard output closed (``>&-``) says so and does nothing, as one given ``/dev/full`` does,
instead of printing its result into nothing with exit 0 (issue 30 round 20, K152)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_error  # noqa: E402

pytestmark = [pytest.mark.reliability]


def closed_stdout(argv: list) -> subprocess.CompletedProcess:
    """``python -m leviathan ARGV >&-`` in a real process (its standard error captured)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run(["sh", "-c", 'exec "$0" -m leviathan "$@" >&-', sys.executable, *map(str, argv)],
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("argv", [["params", "--preset", "cpu-tiny"], ["eval", "RUN", "--max-tokens", "64"]],
                         ids=["params", "eval"])
def test_a_verb_with_its_standard_output_closed_says_so(finished_run, argv):
    proc = closed_stdout([finished_run if a == "RUN" else a for a in argv])
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert line.startswith("error: the standard output is closed (>&-)") and "> /dev/null to discard it" in line, line
