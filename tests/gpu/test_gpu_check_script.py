"""scripts/gpu_check.{sh,py} on a CPU, in the default suite (not ``gpu``-marked), so the GPU check cannot rot
while no GPU is around to run it: the shell script parses, the helper's quick benchmark runs end to end
at tiny sizes (fp32, no compile), and the report turns stage files into the markdown table.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.sh"


@pytest.fixture(scope="module")
def gc(script_module):
    return script_module("gpu_check.py")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_shell_script_parses():
    proc = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr


def test_fsdp_stage_uses_two_ranks_only_on_two_gpus(gc, monkeypatch):
    import torch

    assert gc.fsdp_world_size("cpu") == gc.fsdp_world_size("cuda:1") == 1  # a pinned GPU or the CPU: one rank
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert gc.fsdp_world_size("cuda") == 1
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    assert gc.fsdp_world_size("cuda") == 2


@pytest.mark.usefixtures("single_thread")
def test_quick_bench_on_cpu_measures_both_models(gc, tmp_path, capsys):
    out = tmp_path / "bench.json"
    rc = gc.main(["bench", "--device", "cpu", "--quick", "--no-compile", "--dtype", "fp32", "--repeats", "2",
                  "--json", str(out)])
    assert rc == 0, capsys.readouterr().out[-2000:]
    result = json.loads(out.read_text())
    assert [(r["mode"], r["ids"]) for r in result["runs"]] == [("eager", "uniform"), ("eager", "zipf")]
    for run in result["runs"]:
        assert run["status"] == "ok"
        assert math.isfinite(run["ratio"]) and run["ratio"] > 0
        for variant in ("dense_tied", "leviathan"):
            assert run[variant]["median_ms"] > 0 and math.isfinite(run[variant]["last_loss"])
    uniform, zipf = result["runs"]
    assert max(zipf["distinct_ids"]) < min(uniform["distinct_ids"]) <= 64  # zipf repeats ids; 64 tokens a batch
    assert result["params"]["leviathan"]["total"] > 0
    table = gc.bench.bench_table(result)
    assert "| eager | uniform |" in table and "leviathan / dense_tied" in table


def test_report_table_from_stage_files(gc, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "setup.status").write_text("0 12 0\n")
    (work / "gpu-tests.status").write_text("1 80 150\n")
    (work / "fsdp.status").write_text("124 100 100\n")
    (work / "bench.status").write_text("skip only 5s left\n")
    env = {"gpu": "NVIDIA H200", "gpu_memory_gib": 139.8, "torch": "2.x", "python": "3.12", "torch_cuda": "13.0",
           "missing_packages": ["datasets"]}
    (work / "env.json").write_text(json.dumps(env))
    (work / "pytest.xml").write_text(
        '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3" failures="1" errors="0" skipped="1">'
        '<testcase name="test_a"><properties><property name="err" value="1e-6"/></properties></testcase>'
        '<testcase name="test_b"><failure message="boom happened">trace</failure></testcase>'
        '<testcase name="test_c"><skipped message="needs a CUDA GPU"/></testcase></testsuite></testsuites>')
    bench = {"preset": "paper-109m", "batch": 16, "seq": 512, "tokens_per_step": 8192, "dtype": "bf16",
             "device": "cuda", "repeats": 10, "warmup": 3,
             "runs": [{"mode": "eager", "ids": "uniform", "status": "ok", "distinct_ids": [8000, 8010], "ratio": 1.04,
                       "dense_tied": {"median_ms": 50.0, "tokens_per_s": 163840.0, "peak_gib": 30.0},
                       "leviathan": {"median_ms": 52.0, "tokens_per_s": 157538.0, "peak_gib": 31.0}},
                      {"mode": "compile", "ids": "uniform", "status": "error: RuntimeError: x"}]}
    (work / "bench.json").write_text(json.dumps(bench))
    out = tmp_path / "out"
    monkeypatch.setenv("OUT", str(out))
    rc = gc.main(["report", "--work", str(work)])
    assert rc == 1  # not every stage passed
    md = (out / "gpu_check.md").read_text()
    assert "| setup (python, torch, install) | PASS | 12 |" in md
    assert "FAIL (rc 1)" in md and "1 passed, 1 failed, 1 skipped" in md and "FAILED test_b: boom happened" in md
    assert "TIMEOUT (rc 124)" in md and "SKIPPED" in md and "missing: datasets" in md
    assert "**1.040**" in md and "error: RuntimeError: x" in md and "test_a: err=1e-6" in md
    assert "Overall: NOT ALL PASSED" in md
    data = json.loads((out / "gpu_check.json").read_text())
    assert data["stages"]["fsdp"]["result"] == "TIMEOUT" and data["pytest"]["failures"] == 1


def test_report_reads_the_verbose_log_when_pytest_was_killed(gc, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "gpu-tests.status").write_text("124 150 150\n")
    (work / "gpu-tests.log").write_text(
        "tests/gpu/test_cuda_readiness.py::test_a PASSED [ 10%]\n"
        "tests/gpu/test_cuda_readiness.py::test_b[leviathan] FAILED [ 20%]\n"
        "tests/gpu/test_cuda_readiness.py::test_c[leviathan] \n")
    md, ok = gc.report.build_report(work)
    assert not ok
    assert "TIMEOUT (rc 124)" in md and "(no JUnit report: from the log)" in md
    assert "1 passed, 1 failed, 0 skipped" in md and "FAILED test_b[leviathan]: failed" in md
