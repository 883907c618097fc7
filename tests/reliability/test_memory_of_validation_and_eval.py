"""A validation or `eval` batch this machine's memory cannot score is refused before it runs, and one that still runs
out of memory is one line naming the batch and the smaller setting (issue 30 round 27, R9, R11).

Round 26's pre-flight counted a training step's activations, not the validation's: under `ulimit -v 6000000` a run
whose step was 1 x 128 tokens passed it, trained its step, and its validation batch of 1,300 x 128 tokens (a width-1,024
model) ended in the allocator's raw RuntimeError, exit 1, the trained step not saved (R9); `eval --batch-size 1300`
the same, the fix (a smaller --batch-size) unsaid (R11). The children here set RLIMIT_AS a little above their own
imports (test_memory_preflight's ``_room``): no real exhaustion of the machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import train_tiny  # noqa: E402
from reliability_support import one_error, run_overrides  # noqa: E402
from test_memory_preflight import _room  # noqa: E402

pytestmark = [pytest.mark.reliability]

ROOM = 500 * 2**20  # above the imports: the model and its AdamW state (0.2 GiB) and a step fit, the validation not
# A wide MLP on one layer: a step of 1 x 128 tokens is small, and a forward of the val split's 25 windows of 128
# (3,200 tokens; 0.6 GiB by the estimate) is not
WIDE = {"model.embedding": "dense_tied", "model.hidden_size": 256, "model.intermediate_size": 16384,
        "model.num_attention_heads": 4, "model.num_hidden_layers": 1, "data.seq_len": 128, "micro_batch_size": 1,
        "batch_tokens": 128, "max_steps": 1, "schedule.warmup_steps": 0, "eval_tokens": "null",
        "eval_batch_size": 25, "checkpoint_interval": 0}


@pytest.fixture(scope="module")
def wide_run(data, tmp_path_factory) -> Path:
    """WIDE trained in this process (no limit), its validation in batches of 2."""
    return train_tiny(tmp_path_factory.mktemp("wide") / "run", run_overrides(data, **{**WIDE, "eval_batch_size": 2}))


def test_the_estimate_counts_a_validation_batch(monkeypatch):
    """R9's run: its step of 1 x 128 tokens holds little, its validation batch of 1,300 x 128 about 15 GiB."""
    from leviathan import memory_preflight
    from leviathan.errors import UserError
    from leviathan.run_config import load_run_config

    cfg = load_run_config("tiny", ["model.vocab_size=300", "micro_batch_size=1", "batch_tokens=128",
                                   "data.seq_len=128", "model.hidden_size=1024", "model.intermediate_size=4096",
                                   "model.num_attention_heads=8", "model.num_hidden_layers=4", "eval_tokens=168000",
                                   "eval_batch_size=1300"])
    monkeypatch.delenv(memory_preflight.SKIP, raising=False)
    monkeypatch.setattr(memory_preflight, "available_bytes", lambda: 6 * 2**30)  # R9's `ulimit -v 6000000`
    assert memory_preflight.larger_batch(cfg) == "validation batch (eval_batch_size 1300 x 128 tokens)"
    with pytest.raises(UserError, match=r"GiB of a training step's or validation's activations"):
        memory_preflight.check_run_memory([cfg], "x", "y")
    assert memory_preflight.validation_tokens(cfg) == 1300 * 128
    forward = memory_preflight.eval_activation_bytes(cfg.model, 1300 * 128)
    assert 8 * 2**30 < forward < 16 * 2**30, forward  # one layer's values: no gradients keep the others
    assert forward < memory_preflight.step_activation_bytes(cfg.model, 1300 * 128)


def test_train_refuses_a_validation_batch_no_memory_here_holds(data, tmp_path):
    done = _room(ROOM, ["train", *run_overrides(data, **WIDE), "device=cpu", "--run-dir", tmp_path / "run"], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "validation batch (eval_batch_size 25 x 128 tokens): training" in line, line
    assert "eval_batch_size (validation's windows per forward)" in line, line
    assert not (tmp_path / "run").exists()


def test_a_validation_out_of_memory_is_one_line_and_keeps_the_step(data, tmp_path):
    """With the check skipped, the validation's allocation fails: one line, and the step it followed is saved, so
    ``--resume auto`` with a smaller eval_batch_size validates it and finishes."""
    run = tmp_path / "run"
    done = _room(ROOM, ["train", *run_overrides(data, **WIDE), "device=cpu", "--run-dir", run], tmp_path,
                 LEVIATHAN_SKIP_MEMORY_CHECK="1")
    line = one_error(done.stderr)
    assert done.returncode == 2, done.stderr
    assert "the validation after step 1 ran out of memory scoring a batch of 25 x 128 tokens (eval_batch_size" in line
    assert "step 1 was saved in" in line and "eval_batch_size=12" in line and "--resume auto" in line, line
    assert [p.name for p in (run / "checkpoints").glob("step-*")] == ["step-00000001"]
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    summary = train(load_run_config(None, run_overrides(data, **{**WIDE, "eval_batch_size": 2})), run, resume="auto",
                    quiet=True)
    assert summary.steps == 1 and summary.final_val_loss > 0 and summary.resumed_from == 1


def test_eval_refuses_a_batch_no_memory_here_holds_and_says_an_out_of_memory_forward(wide_run, tmp_path):
    done = _room(400 * 2**20, ["eval", wide_run, "--batch-size", "25"], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "--batch-size 25: a forward of 25 windows of 128 tokens: scoring 3,200" in line
    assert "use a smaller --batch-size (e.g. --batch-size 12)" in line, line
    done = _room(400 * 2**20, ["eval", wide_run, "--batch-size", "25"], tmp_path, LEVIATHAN_SKIP_MEMORY_CHECK="1")
    line = one_error(done.stderr)
    assert done.returncode == 2 and "--batch-size 25: a forward of 25 windows of 128 tokens ran out of memory" in line
    assert "can't allocate memory" in line and "--batch-size 12" in line, line


def test_a_sweeps_evaluation_out_of_memory_is_one_line(finished_run, data, monkeypatch):
    """The same kind in ``evaluate_checkpoint`` (a sweep's evaluation of each run, ``analyze frequency --runs``): the
    allocator's error of a forward, made here by the scorer itself, is one line naming the set and the batch."""
    from leviathan.errors import UserError
    from leviathan.eval import score
    from leviathan.eval.stream import EvalStream

    def exhausted(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
                           "you tried to allocate 681574400 bytes. Error code 12 (Cannot allocate memory)")

    monkeypatch.setattr(score, "token_losses", exhausted)
    with pytest.raises(UserError, match=r"^scoring eval set 'val' in batches of 8 windows of 32 tokens ran out of "
                                        r"memory \(DefaultCPUAllocator: can't allocate memory: .*\); nothing was scored; "
                                        r"use a smaller batch_size \(e.g. 4: a grid's eval batch_size"):
        score.evaluate_checkpoint(finished_run, {"val": EvalStream.from_split(data, "val")}, batch_size=8)
