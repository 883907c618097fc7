"""A model this machine's memory cannot train is refused in one line before it is built (issue 30 round 25, X70:
`demo --preset paper-1.2b` under `ulimit -v` ended in the allocator's RuntimeError traceback after building most of
the model; X71: without a limit it grew to 21 GB of 23 until the out-of-memory killer ended it, nothing said).

Round 26: the estimate counted no activations, so `train --config paper-109m` under `ulimit -v 4000000` passed it and
its first step ended in the allocator's traceback (P18; a step that still runs out of memory is now one line too);
`sweep` (P21), scripts/gpu_check.py bench (P20) and scripts/bench_corpus_softmax.py (P52) had no pre-flight."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_error, one_run_grid, run_overrides  # noqa: E402

LIMIT = 6 * 2**30  # `ulimit -v` of X70: room for python and torch, none for a 1.2B model's 18 GiB


def _limited(argv: list, cwd: Path, **env) -> subprocess.CompletedProcess:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    full = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), **env}
    return subprocess.run([sys.executable, "-m", "leviathan", *map(str, argv)], env=full, cwd=cwd, preexec_fn=limit,
                          capture_output=True, text=True, timeout=300)


def test_demo_refuses_a_preset_no_memory_here_holds(data, tmp_path):
    done = _limited(["demo", "--data-dir", data, "--steps", "2", "--variants", "dense_tied", "--run-dir",
                     tmp_path / "dm2", "--preset", "paper-1.2b", "--quiet"], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "--preset paper-1.2b: training 1,219,207,168 parameters needs at least" in line
    assert "a smaller --preset" in line and "LEVIATHAN_SKIP_MEMORY_CHECK=1" in line, line
    assert not (tmp_path / "dm2").exists()


def test_train_refuses_a_model_no_memory_here_holds(data, tmp_path):
    done = _limited(["train", *run_overrides(data, **{"model.preset": "paper-1.2b"}), "device=cpu", "--run-dir",
                     tmp_path / "run"], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "the run's model (model.*) and micro batch (4 x 32 tokens): training" in line, line
    assert not (tmp_path / "run").exists()


def test_the_skip_setting_takes_1_or_0_and_refuses_anything_else(monkeypatch):
    """Round 26 (P17): ``LEVIATHAN_SKIP_MEMORY_CHECK=false``, a user turning the check on, was read as "skip"."""
    import pytest

    from leviathan.errors import UserError
    from leviathan.memory_preflight import SKIP, check_training_memory

    huge = [2**60]  # more than any machine holds
    for value in ("false", "yes", "2"):
        monkeypatch.setenv(SKIP, value)
        with pytest.raises(UserError, match=f"{SKIP}='{value}' is neither 1 .* nor 0"):
            check_training_memory(huge, "--preset x", "a smaller --preset")
    for value in ("0", ""):
        monkeypatch.setenv(SKIP, value)
        with pytest.raises(UserError, match="--preset x: training .* parameters needs at least"):
            check_training_memory(huge, "--preset x", "a smaller --preset")
    monkeypatch.setenv(SKIP, "1")
    check_training_memory(huge, "--preset x", "a smaller --preset")  # skipped: nothing said


# What the import of the training code takes of the address space is this process's own; the step is what the limit
# leaves no room for. A child imports, reads its VmSize and sets RLIMIT_AS that much above it, then runs the CLI.
ROOM_ABOVE_IMPORTS = """
import resource, sys
import torch, leviathan.cli, leviathan.train.loop, leviathan.experiments.machinery.sweep
used = int(next(l for l in open('/proc/self/status') if l.startswith('VmSize')).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (used + int(sys.argv[1]), used + int(sys.argv[1])))
from leviathan.cli import main
sys.exit(main(sys.argv[2:]))
"""
# cpu-tiny's width with 16 layers: a micro batch of 64 x 128 tokens keeps 1.1 GiB of activations for 0.8M
# parameters, so the forward meets the limit in a few seconds of arithmetic
BIG_STEP = {"model.num_hidden_layers": 16, "data.seq_len": 128, "micro_batch_size": 64, "batch_tokens": 8192,
            "max_steps": 1, "checkpoint_interval": 0, "schedule.warmup_steps": 0}


def _room(room: int, argv: list, cwd: Path, **env) -> subprocess.CompletedProcess:
    full = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), **env}
    return subprocess.run([sys.executable, "-c", ROOM_ABOVE_IMPORTS, str(room), *map(str, argv)], env=full, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_estimate_counts_a_steps_activations(monkeypatch):
    """Round 26 (P18): paper-109m's 124M parameters are 1.9 GiB at 16 bytes each, and its step of 32 x 512 tokens
    keeps several GiB more; the check held only the first against the memory there is."""
    import pytest

    from leviathan import memory_preflight
    from leviathan.errors import UserError
    from leviathan.run_config import load_run_config

    cfg = load_run_config("paper-109m", [])
    monkeypatch.delenv(memory_preflight.SKIP, raising=False)
    monkeypatch.setattr(memory_preflight, "available_bytes", lambda: 4 * 2**30)  # P18's `ulimit -v 4000000`
    with pytest.raises(UserError, match=r"micro batch \(32 x 512 tokens\): training 124,199,040 parameters needs at "
                                         r"least .* GiB of a training step's or validation's activations\)"):
        memory_preflight.check_run_memory([cfg], "the run's model (model.*) and micro batch (32 x 512 tokens)", "x")
    steps = memory_preflight.step_activation_bytes(cfg.model, 32 * 512)
    assert 4 * 2**30 < steps < 12 * 2**30, steps  # 7.2 GiB by the documented bound
    half = memory_preflight.step_activation_bytes(cfg.model, 16 * 512)
    assert half < steps and memory_preflight.step_activation_bytes(cfg.model, 32 * 512, chunked_loss=False) > steps


def test_train_refuses_a_micro_batch_no_memory_here_holds(data, tmp_path):
    """Round 26 (P18): a small model whose micro batch's activations (1.1 GiB here) do not fit is refused before it
    is built, naming the micro batch and the smaller micro_batch_size."""
    done = _room(512 * 2**20, ["train", *run_overrides(data, **BIG_STEP), "device=cpu", "--run-dir", tmp_path / "run"],
                 tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "micro batch (64 x 128 tokens): training" in line, line
    assert "a smaller micro_batch_size" in line and "activations" in line, line
    assert not (tmp_path / "run").exists()


def test_a_step_out_of_memory_is_one_line_and_keeps_no_part_of_it(data, tmp_path):
    """Round 26 (P18): with the check skipped, the step's allocation failure was a 90-line traceback, exit 1; now one
    line naming the step, the micro batch and the fix, exit 2; the run folder holds no checkpoint of the failed step
    (``--resume auto`` continues from its whole steps: tests/integration/test_resume.py)."""
    run = tmp_path / "run"
    done = _room(512 * 2**20, ["train", *run_overrides(data, **BIG_STEP), "device=cpu", "--run-dir", run], tmp_path,
                 LEVIATHAN_SKIP_MEMORY_CHECK="1")
    line = one_error(done.stderr)
    assert done.returncode == 2, done.stderr
    assert "step 1 ran out of memory training a micro batch of 64 x 128 tokens" in line, line
    assert "micro_batch_size=32" in line and "--resume auto" in line and "LEVIATHAN_SKIP_MEMORY_CHECK=1" in line, line
    assert (run / "config.yaml").is_file() and not list(run.glob("checkpoints/step-*"))  # nothing of the failed step


def test_sweep_refuses_a_run_no_memory_here_holds(data, tmp_path):
    """Round 26 (P21): the sweep had no pre-flight; a run too large met the allocator's traceback in its first
    forward. Now refused before the folder is marked."""
    import yaml

    grid = yaml.safe_load(one_run_grid(data, tmp_path).read_text())
    grid["sizes"]["a"] = {"preset": "cpu-tiny", "num_hidden_layers": 16}
    grid["base"].update({"data": {"seq_len": 128}, "micro_batch_size": 64, "batch_tokens": 8192, "device": "cpu"})
    (tmp_path / "g.yaml").write_text(yaml.safe_dump(grid))
    done = _room(512 * 2**20, ["sweep", "--grid", tmp_path / "g.yaml", "--out", tmp_path / "sw"], tmp_path)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "run a-dense_tied-s0 of the grid" in line and "GiB" in line, line
    assert "micro_batch_size in the grid" in line, line
    assert not (tmp_path / "sw" / "grid.json").exists()


def test_gpu_check_bench_refuses_models_no_memory_here_holds(tmp_path):
    """Round 26 (P20): `gpu_check.py bench` built two paper-1.2b models and met the allocator's traceback."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_check.py"), "bench", "--device", "cpu",
                           "--preset", "paper-1.2b", "--no-compile", "--dtype", "fp32", "--batch", "1", "--seq", "16",
                           "--repeats", "1", "--warmup", "0", "--json", tmp_path / "gb1.json"], env=env, cwd=tmp_path,
                          preexec_fn=limit, capture_output=True, text=True, timeout=300)
    line = one_error(done.stderr)
    assert done.returncode == 2 and "--preset paper-1.2b with --batch 1 x --seq 16: training" in line, line
    assert "a smaller --preset" in line and not (tmp_path / "gb1.json").exists(), line


def test_bench_corpus_softmax_refuses_models_no_memory_here_holds(script_module, tmp_path, monkeypatch, capsys):
    """Round 26 (P52): the script built the paper configuration's four models, and AdamW's first step met the
    allocator's traceback. In this process (the script's refusals are tested so: torch's import takes seconds), with
    the memory there is read as 1 MiB: refused before any model is built or the JSON written."""
    from leviathan import memory_preflight

    sys.path.insert(0, str(REPO / "tests" / "integration"))
    from test_train import make_data

    data = make_data(tmp_path, vocab=512)  # the tokenizer of the ``tiny`` configuration
    monkeypatch.delenv(memory_preflight.SKIP, raising=False)
    monkeypatch.setattr(memory_preflight, "available_bytes", lambda: 2**20)
    built = []
    bench = script_module("bench_corpus_softmax.py")
    monkeypatch.setattr(bench, "build_model", lambda *a, **k: built.append(a))
    status = bench.main([str(data), "--config", "tiny", "--batch", "8", "--repeats", "1", "--json",
                         str(tmp_path / "b.json")])
    line = one_error(capsys.readouterr().err)
    assert status == 2 and "--config tiny with --batch 8: training" in line and "a smaller --config or --batch" in line
    assert not built and not (tmp_path / "b.json").exists(), line


def test_the_bench_verbs_training_section_refuses_models_no_memory_here_holds(monkeypatch):
    """Round 26, P20's and P52's kind in `leviathan bench`'s training section: both models are built and stepped with
    AdamW; with the memory there is read as 1 MiB, refused in one line before either is built."""
    import pytest
    import torch

    from leviathan import memory_preflight
    from leviathan.bench.configs import CONFIGS
    from leviathan.bench.sections import train as section
    from leviathan.errors import UserError

    monkeypatch.delenv(memory_preflight.SKIP, raising=False)
    monkeypatch.setattr(memory_preflight, "available_bytes", lambda: 2**20)
    monkeypatch.setattr(section, "build_model", lambda *a, **k: pytest.fail("a model was built"))
    batches = [(torch.zeros(2, 64, dtype=torch.long), torch.zeros(2, 64, dtype=torch.long))]
    with pytest.raises(UserError, match="the benchmark configuration 'tiny': training .* a smaller --config"):
        section.bench_training(CONFIGS["tiny"], batches, repeats=1)


def test_the_benchmarks_rule_adds_every_copys_parameters_and_the_largest_step(monkeypatch):
    """``check_models_memory``, the one rule of the three benchmarks (bench's training section, gpu_check.py bench,
    bench_corpus_softmax.py, which each repeated it): the models are held at once, so their parameters (times
    ``copies``) add up, and stepped one at a time, so the activations are the largest one step's."""
    import pytest

    from leviathan import memory_preflight
    from leviathan.errors import UserError
    from leviathan.model.accounting import count_config
    from leviathan.presets import preset

    cfgs = [preset("cpu-tiny", embedding=v) for v in ("dense_tied", "leviathan")]
    params = sum(count_config(c).total for c in cfgs)
    steps = max(memory_preflight.step_activation_bytes(c, 256) for c in cfgs)
    need = 2 * params * memory_preflight.BYTES_PER_PARAMETER + steps
    monkeypatch.delenv(memory_preflight.SKIP, raising=False)
    monkeypatch.setattr(memory_preflight, "available_bytes", lambda: need)
    memory_preflight.check_models_memory(cfgs, 256, "w", "f", copies=2)  # exactly fits
    monkeypatch.setattr(memory_preflight, "available_bytes", lambda: need - 1)
    with pytest.raises(UserError, match=r"^w: training .* parameters needs at least .*; use f, or set"):
        memory_preflight.check_models_memory(cfgs, 256, "w", "f", copies=2)
    memory_preflight.check_models_memory(cfgs, 256, "w", "f")  # one copy each: fits
