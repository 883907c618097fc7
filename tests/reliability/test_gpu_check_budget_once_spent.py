"""gpu_check.sh's skipped rows name a GPU_CHECK_BUDGET_S that runs the stage even when the budget is already spent
(issue 30 round 29, V51).

With GPU_CHECK_BUDGET_S=1 the setup took 8 s, and the rows said "0s of the 1s budget left ... set GPU_CHECK_BUDGET_S
to 221 or more": computed from the time left clamped to 0, not the -7 s really left, so at 221 the stage still had
under 20 s and was skipped again (228 works). ``run_stage`` now computes the budget from the time really left; the
row's shown time stays 0 (fix28f's rows, test_gpu_check_skip_names_the_budget.py).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from test_gpu_check_verb_rules import _shell  # noqa: E402

ROW = re.compile(r"=== \[(\d+)s\] (\S+): skipped \((\d+)s of the 1s budget left, and the later stages need (\d+)s: "
                 r"under 20s for this stage; set GPU_CHECK_BUDGET_S to (\d+) or more to run it\)")


def test_the_budget_named_covers_the_time_already_past_it(tmp_path):
    proc = _shell(tmp_path, GPU_CHECK_BUDGET_S="1")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, err  # a rehearsal: NOT ALL PASSED
    rows = ROW.findall(out)
    assert {r[1] for r in rows} == {"gpu-tests", "fsdp", "bench"}, out
    for elapsed, stage, left, reserve, budget in rows:
        # the stage starts `elapsed` s in: a budget that leaves it 20 s after the reserve is elapsed + reserve + 20
        # (the second the row is printed in may end just after the one `elapsed` read)
        assert int(left) == 0 and int(budget) >= int(elapsed) + int(reserve) + 20 - 1, (stage, out)
