"""A stop in a script's first seconds, while it imports torch, is said in one line as later (issue 30 round 25, X33:
SIGTERM 1 s or 3 s into bench_corpus_softmax.py ended it with exit 143 and no output at all, where at 5 s it said
"stopped by SIGTERM before `python scripts/bench_corpus_softmax.py` finished ... run the same command again")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO  # noqa: E402

# the script run as its own program, SIGTERM sent to itself as the import of torch begins: a stop inside the import
# every time, whatever the machine's speed
STOP_IN_IMPORT = r"""
import os, runpy, signal, sys

class StopAtTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGTERM)
        return None

sys.meta_path.insert(0, StopAtTorch())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_bench_corpus_softmax_says_a_stop_that_came_while_it_imported(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-c", STOP_IN_IMPORT, str(REPO / "scripts" / "bench_corpus_softmax.py"),
                           str(tmp_path / "d5"), "--config", "tiny", "--repeats", "1"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 143, (done.returncode, done.stderr)
    assert "stopped by SIGTERM before `python scripts/bench_corpus_softmax.py` finished" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
