"""A stop after ``gpu_check.py env`` has printed and written its record says the command had finished (issue 30
round 28: T34, "unclear").

SIGTERM while the process spent its last seconds after the env report was printed and its --json written complete
said "stopped by SIGTERM before `scripts/gpu_check.py` finished ...; run the same command again". ``cmd_env`` now
marks its output in place (``stop_signals.output_in_place``, as the CLI verbs do) once written, when env is the verb
(not all's env stage), so the stop's line is ``finished_stop_line``. The script ends through ``cli.end_program``: with
``sys.exit(main())`` a stop during the interpreter's finalization killed it without a word, -15 (the CI of stop 55).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, wait_for  # noqa: E402


def test_a_sigterm_after_the_env_record_is_written_says_it_finished(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if k != "OUT"}, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(REPO / "src")}
    out = tmp_path / "gt.json"
    proc = subprocess.Popen([sys.executable, str(REPO / "scripts" / "gpu_check.py"), "env", "--device", "cpu",
                             "--json", str(out)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for(out.exists, proc, "the env record", timeout=120)
    proc.send_signal(signal.SIGTERM)
    printed, err = proc.communicate(timeout=60)
    # 0: the stop came as the process exited (after ``end_program``'s last step), as if after it; never a silent kill
    assert proc.returncode in (0, 143), err  # -15 where the script ended through finalization (the CI of stop 55)
    said = ("stopped by SIGTERM as `scripts/gpu_check.py` was ending, after it had finished: its work is complete "
            "(what it printed and wrote stands); nothing needs running again")
    assert err.strip().endswith(said) if proc.returncode else "stopped" not in err, err
    assert "run the same command again" not in err and "missing_packages: " in printed
    assert json.loads(out.read_text())["requested_device"] == "cpu"
