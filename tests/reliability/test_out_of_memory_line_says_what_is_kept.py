"""A training step that runs out of memory before any checkpoint says the run holds none (issue 30 round 29, V30).

With LEVIATHAN_SKIP_MEMORY_CHECK=1 an out-of-memory at step 1 said "'rbig' keeps its checkpoints of whole steps" of
a run folder that held config.yaml, metrics.jsonl and run.json and no checkpoint. ``_out_of_memory_message`` now asks
``latest_checkpoint`` and says "holds no checkpoint yet" then (--resume auto starts such a run from step 0).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error, run_overrides  # noqa: E402
from test_memory_preflight import BIG_STEP, _room  # noqa: E402


def test_an_out_of_memory_at_step_one_says_no_checkpoint_is_kept(data, tmp_path):
    run = tmp_path / "run"
    done = _room(512 * 2**20, ["train", *run_overrides(data, **BIG_STEP), "device=cpu", "--run-dir", run], tmp_path,
                 LEVIATHAN_SKIP_MEMORY_CHECK="1")
    line = one_error(done.stderr)
    assert done.returncode == 2 and "step 1 ran out of memory" in line, done.stderr
    assert f"'{run}' holds no checkpoint yet" in line and "keeps its checkpoints" not in line, line
    assert not list(run.glob("checkpoints/step-*"))
