"""`leviathan lm-eval`'s largest batch is checked against the memory there is before it is scored, and a forward that
still runs out of memory is one line naming --batch-size and a smaller one (issue 30 round 28, T7).

T7: `lm-eval RUN --batch-size 1000` of a width-1,024 model under `ulimit -v 6000000` ended in the allocator's
RuntimeError traceback from transformers' rotate_half, exit 1, --out left holding its marker alone: round 27 (fix27d)
gave train, sweep, demo and eval a pre-flight and the out-of-memory line, not lm-eval. Real ``leviathan lm-eval``
processes on the tiny finished run: one told this machine has 1 MiB free (``memory_preflight.available_bytes``), one
whose harness forward raises the CPU allocator's own error (``HFLM._model_call``), so no real exhaustion is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")
pytest.importorskip("accelerate", reason="lm-eval's hf model needs accelerate (pip install 'lm-eval[hf]')")

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_error  # noqa: E402
from test_companions import _piqa_root  # noqa: E402

pytestmark = [pytest.mark.reliability]

ALLOCATOR = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to "
             "allocate 209715200 bytes. Error code 12 (Cannot allocate memory)")
# a `leviathan` process with the memory there is, or the harness's forward, made scarce in the child itself
CHILD = r"""
import sys
how, said = sys.argv[1], sys.argv[2]
if how == "little":
    from leviathan import memory_preflight
    memory_preflight.available_bytes = lambda: 2**20
else:
    from lm_eval.models.huggingface import HFLM
    def exhausted(self, *args, **kwargs):
        raise RuntimeError(said)
    HFLM._model_call = exhausted
sys.argv = ["leviathan", *sys.argv[3:]]
from leviathan.cli import main
sys.exit(main())
"""


def _lm_eval(how: str, argv: list, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), "TOKENIZERS_PARALLELISM": "false"}
    env.pop("LEVIATHAN_SKIP_MEMORY_CHECK", None)
    return subprocess.run([sys.executable, "-c", CHILD, how, ALLOCATOR, "lm-eval", *map(str, argv)], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def _refused_at_batch_4(how: str, finished_run: Path, tmp_path: Path) -> tuple[str, Path]:
    """piqa scored at --batch-size 4 under the allocator ``how``: its one error line (exit 2, naming the batch) and
    the --out folder."""
    root, out = _piqa_root(tmp_path / "tasks"), tmp_path / "lmw"
    done = _lm_eval(how, [finished_run, "--tasks", "piqa", "--data-root", root, "--threads", "1",
                          "--batch-size", "4", "--out", out], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2, done.stderr
    assert "lm-eval --batch-size 4: a forward of 4 requests of up to " in line, line
    return line, out


def test_a_batch_no_memory_here_holds_is_refused_before_it_is_scored(finished_run, tmp_path):
    line, out = _refused_at_batch_4("little", finished_run, tmp_path)
    assert "nothing was scored; use a smaller --batch-size (e.g. --batch-size 2)" in line, line
    assert not (out / "lm_eval.json").exists()


def test_an_out_of_memory_forward_is_one_line_naming_the_batch_size(finished_run, tmp_path):
    line, out = _refused_at_batch_4("exhausted", finished_run, tmp_path)
    assert "ran out of memory (DefaultCPUAllocator: can't allocate memory" in line, line
    assert "use a smaller --batch-size (e.g. --batch-size 2), or free memory" in line, line
    assert not (out / "lm_eval.json").exists()


def test_the_estimate_of_t7s_batch():
    """T7's export (width 1,024, MLP 4,096, 8 heads, vocabulary 300): 800 requests of 128 tokens need more than its
    `ulimit -v 6000000`; 100 of them well under a GiB and a half."""
    import transformers

    from leviathan.memory_preflight import harness_activation_bytes

    config = transformers.LlamaConfig(vocab_size=300, hidden_size=1024, intermediate_size=4096, num_attention_heads=8,
                                      num_key_value_heads=8, head_dim=128, num_hidden_layers=4)
    assert harness_activation_bytes(config, 800, 128) > 6 * 10**9
    assert harness_activation_bytes(config, 100, 128) < 1.5 * 2**30
    assert harness_activation_bytes(object(), 100, 128) is None
