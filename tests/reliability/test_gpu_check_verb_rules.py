"""The GPU check (scripts/gpu_check.py, its stage modules and gpu_check.sh) held to the rules round 24 gave the verbs
elsewhere (issue 30 round 25: X4, X7, X8, X9, X12, X13, X15, X17, X18, X20-X23, X54, X74, X87, X88, X92, X109, X111).

An empty --json / --md / --work was taken as nothing, or as the current folder, which ``claim`` and ``fsdp`` then
claimed and wrote into (X4, X7, X8, X12, X92); a run folder or a user's texts given to ``report --work`` read as a
check that never ran (X9); refusals named a verb `leviathan gpu_check` that does not exist (X13) and an option
``--out`` the script lacks (X54); ``--preset`` was ignored under ``--quick`` (X15); the default device cuda on a
CPU-only torch was a traceback (X17) or a raw exception text (X18); a stop ended without a line, the row blaming a
timeout (X88); a saved status "0 -5 30" and a bench.json of another machine were reported as a PASS (X109, X111);
gpu_check.sh ran on nonsense settings (X20-X23), let two checks share a work folder (X74) and took a Ctrl-C for a
stage timeout before going on to the report (X87). Each is now one line ``error: ...`` (exit 2) or a stop's line.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import time
import subprocess
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, cli, one_error, tree_hashes, wait_for  # noqa: E402
from test_gpu_check_output_rules import gc, gpu_check, refused  # noqa: E402,F401 - fixtures

from leviathan.errors import storage_error_message  # noqa: E402
from leviathan.ownership import write_marker  # noqa: E402
from leviathan.result_json import check_json_target  # noqa: E402

CPU_ONLY = pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal of cuda is for a CPU-only torch")
QUICK = ["--device", "cpu", "--quick", "--no-compile", "--dtype", "fp32"]
FSDP_QUICK = ["--device", "cpu", "--quick", "--dtype", "fp32"]  # fsdp compiles nothing: no --no-compile


# ---- empty paths (X4, X7, X8, X12, X92) -------------------------------------------------------------
@pytest.mark.parametrize("argv, option", [
    (["env", "--device", "cpu", "--json", ""], "--json"),
    (["bench", *QUICK, "--json", ""], "--json"),
    (["report", "--work", "w", "--md", ""], "--md"),
    (["report", "--work", ""], "--work"),
    (["claim", "--work", ""], "--work"),
    (["fsdp", *FSDP_QUICK, "--work", "", "--budget-s", "1"], "--work"),
    (["all", *QUICK, "--work", ""], "--work"),
], ids=["env-json", "bench-json", "report-md", "report-work", "claim-work", "fsdp-work", "all-work"])
def test_an_empty_path_is_refused(tmp_path, refused, argv, option):
    (tmp_path / "w").mkdir()
    line = refused(argv)
    assert f"{option} is an empty path" in line, line
    assert sorted(os.listdir(tmp_path)) == ["w"] and not os.listdir(tmp_path / "w")  # nothing claimed or written


def test_claim_of_an_empty_work_in_a_real_process_claims_nothing(tmp_path):
    proc = gpu_check(["claim", "--work", ""], tmp_path)
    assert proc.returncode == 2 and "--work is an empty path" in one_error(proc.stderr)
    assert not os.listdir(tmp_path)


# ---- the work folder named for what it is (X9, X13) --------------------------------------------------
def test_report_refuses_another_verbs_output_and_a_users_folder(tmp_path, refused):
    run = tmp_path / "r1"
    run.mkdir()
    write_marker(run, "train")
    line = refused(["report", "--work", run])
    assert "is the output of `leviathan train`" in line and "not a GPU check's work folder" in line
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("my text\n")
    assert "is not a GPU check's work folder" in refused(["report", "--work", corpus])
    assert sorted(os.listdir(corpus)) == ["a.txt"]


def test_claim_names_the_script_not_a_verb_that_does_not_exist(tmp_path, refused):
    run = tmp_path / "r1"
    run.mkdir()
    write_marker(run, "train")
    line = refused(["claim", "--work", run])
    assert "not of scripts/gpu_check.py" in line and "`leviathan gpu_check`" not in line


def test_a_storage_line_names_the_scripts_own_options():
    line = storage_error_message(OSError(errno.EROFS, "Read-only file system", "ro/x.json"), "gpu_check")
    assert "read-only file system" in line and "--json, --md, --work / GPU_CHECK_WORK, or OUT" in line
    assert "--out" not in line.replace("OUT", "")


# ---- options taken and ignored, devices that cannot run (X15, X17, X18) ------------------------------
def test_preset_with_quick_is_refused(tmp_path, refused):
    line = refused(["bench", *QUICK, "--json", tmp_path / "b.json", "--preset", "paper-1.2b", "--repeats", "1"])
    assert "--preset 'paper-1.2b' is not used with --quick" in line
    assert not (tmp_path / "b.json").exists()


@pytest.mark.parametrize("argv", [["env", "--quick"], ["env", "--dtype", "fp32"], ["env", "--work", "w"],
                                  ["bench", "--work", "w"], ["fsdp", "--no-compile"], ["fsdp", "--threads", "1"]])
def test_an_option_the_stage_does_not_read_is_refused(tmp_path, refused, argv):
    # --json '': a refusal of its own after the parse, so that a stage taking the option ends at once all the same
    assert "unrecognized arguments" in refused([*argv, "--device", "cpu", "--json", ""])
    assert not (tmp_path / "w").exists()


@CPU_ONLY
@pytest.mark.parametrize("stage, device", [("bench", None), ("bench", "cuda:0"), ("fsdp", None), ("all", "cuda")])
def test_cuda_on_a_cpu_only_torch_is_refused_up_front(tmp_path, refused, stage, device):
    where = ["--json", tmp_path / "gw" / "b.json"] if stage == "bench" else ["--work", tmp_path / "gw"]
    argv = [stage, "--quick", *where]
    line = refused(argv + (["--device", device] if device else []))
    assert f"--device is {device or 'cuda'!r}, but CUDA is not available here; use cpu" in line, line
    assert not (tmp_path / "gw").exists()


# ---- a stop is said as one (X88) --------------------------------------------------------------------
def test_sigterm_during_the_bench_is_one_line_and_the_row_says_so(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if k != "OUT"}, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(REPO / "src")}
    out = tmp_path / "gw" / "b.json"
    proc = subprocess.Popen([sys.executable, str(REPO / "scripts" / "gpu_check.py"), "bench", *QUICK, "--json",
                             str(out), "--repeats", "100000"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for(lambda: out.exists() and "started" in out.read_text(), proc, "the first measurement", timeout=60)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err[-2000:]
    assert "Traceback" not in err and "stopped by SIGTERM before `scripts/gpu_check.py` finished" in err, err[-2000:]
    assert "stopped by SIGTERM before it finished" in json.loads(out.read_text())["runs"][0]["status"]


# ---- saved values checked, not trusted (X109, X111) --------------------------------------------------
ENV = {"python": "3.11", "torch": torch.__version__, "requested_device": "cpu", "missing_packages": [],
       "cuda_available": False}


def _work(tmp_path: Path, status: str, bench: dict | None = None) -> Path:
    work = tmp_path / "gw"
    work.mkdir()
    (work / "env.json").write_text(json.dumps(ENV))
    (work / "bench.status").write_text(status + "\n")
    if bench is not None:
        (work / "bench.json").write_text(json.dumps({"torch": torch.__version__, "runs": [], **bench}))
    return work


@pytest.mark.parametrize("status, says", [("0 -5 30", "negative"), ("300 5 30", "not one a process ends with"),
                                          ("0 500 30", "past its limit of 30 s")])
def test_a_status_no_stage_writes_is_refused(tmp_path, refused, status, says):
    line = refused(["report", "--work", _work(tmp_path, status)])
    assert "bench.status" in line and says in line


def test_statuses_a_stage_writes_are_reported(gc, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OUT", raising=False)
    work = _work(tmp_path, "0 5", {"device": "cpu"})
    for status, shown in (("0 5", "PASS"), ("0 5 0", "PASS"), ("124 40 30", "TIMEOUT (rc 124)"),
                          ("skip only 3s left of the 450s budget", "SKIPPED"), ("130 3 86", "STOPPED (Ctrl-C)")):
        (work / "bench.status").write_text(status + "\n")
        assert gc.main(["report", "--work", str(work)]) == 1  # the other stages did not run
        assert f"| training step time, leviathan / dense_tied (eager, compiled) | {shown} |" in capsys.readouterr().out


@pytest.mark.parametrize("bench, says", [
    ({"device": "cuda:0", "gpu": "NVIDIA H100 80GB HBM3"}, "env.json records no CUDA device"),
    ({"device": "cpu", "torch": "1.0.0"}, "and env.json records torch"),
], ids=["cuda-on-a-cpu-check", "another-torch"])
def test_a_bench_json_of_another_machine_is_refused(tmp_path, refused, bench, says):
    line = refused(["report", "--work", _work(tmp_path, "0 5 30", bench)])
    assert "bench.json" in line and says in line


# ---- one output rule for the verbs and the scripts (review: check_output / check_json_target twins) ----
def test_both_checkers_keep_their_wording(gc, tmp_path):
    mine = tmp_path / "mine.json"
    mine.write_text('{"my": 1}')
    with pytest.raises(Exception, match="is not an earlier `leviathan bench --json` result, so bench will not write"):
        check_json_target(mine, "--json", lambda v: False, "`leviathan bench --json`", by="bench")
    with pytest.raises(Exception, match="is not an earlier GPU check report, so scripts/gpu_check.py will not write"):
        gc.check_output(mine, "--md", lambda p: False, "an earlier GPU check report")
    gc.check_output(tmp_path / "new" / "r.md", "--md", lambda p: False, "an earlier GPU check report")
    assert (tmp_path / "new").is_dir()  # the scripts' rule: missing folders above are made


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_a_folder_that_takes_no_files_is_one_line(gc, refused):
    line = refused(["env", "--device", "cpu", "--json", "/proc/x.json"])
    assert "takes no new files" in line
    proc = cli(["bench", "--only", "generator", "--json", "/proc/x.json"], timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "'/proc/x.json' cannot be written" in one_error(proc.stderr)


# ---- gpu_check.sh: settings, a second check, a stop (X20-X23, X74, X87) ------------------------------
def _shell(tmp_path: Path, **settings) -> subprocess.Popen:
    env = {**{k: v for k, v in os.environ.items() if k != "OUT"}, "GPU_CHECK_DEVICE": "cpu", "GPU_CHECK_QUICK": "1",
           "GPU_CHECK_SKIP_INSTALL": "1", "GPU_CHECK_NO_COMPILE": "1", "GPU_CHECK_DTYPE": "fp32",
           "GPU_CHECK_WORK": str(tmp_path / "gw"), "PYTHON": sys.executable, "OMP_NUM_THREADS": "1", **settings}
    return subprocess.Popen(["bash", str(REPO / "scripts" / "gpu_check.sh")], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


@pytest.mark.parametrize("setting, value, says", [
    ("GPU_CHECK_BUDGET_S", "abc", "not a whole number of seconds from 1 to 86,400"),
    ("GPU_CHECK_BUDGET_S", "1e3", "not a whole number of seconds"),
    ("GPU_CHECK_BUDGET_S", "-5", "not a whole number of seconds"),
    ("GPU_CHECK_DTYPE", "fp16", "bf16 (default) or fp32"),
    ("GPU_CHECK_DEVICE", "tpu", "must be cpu, cuda or cuda:N"),
    ("GPU_CHECK_QUICK", "yes", "1 (on) or 0 (off"),
    ("GPU_CHECK_BUDGET_S", "060", "starts with a 0, which bash's arithmetic reads as octal; write it as 60"),  # P23
])
def test_shell_settings_are_checked_before_any_stage(tmp_path, setting, value, says):
    proc = _shell(tmp_path, **{setting: value})
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err[-2000:]
    line = one_error(err)
    assert f"{setting}={value!r}" in line and says in line
    assert not (tmp_path / "gw").exists()  # nothing claimed, no stage ran


def test_a_venv_setting_naming_a_users_folder_is_refused_before_any_stage(tmp_path):
    """Round 26 (P27, P28): ``GPU_CHECK_VENV=ucorp2``, a user's folder with its own pyvenv.cfg, was made a venv over
    (pyvenv.cfg overwritten, bin/ and lib/ added among the user's texts): only GPU_CHECK_WORK and OUT were claimed.
    A relative path is read where it was typed."""
    user = tmp_path / "ucorp2"
    user.mkdir()
    (user / "pyvenv.cfg").write_text("home = my own settings, keep\n")
    (user / "notes.txt").write_text("mine\n")
    before = tree_hashes(user)
    proc = _shell(tmp_path, GPU_CHECK_VENV="ucorp2")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err[-2000:]
    line = one_error(err)
    assert f"GPU_CHECK_VENV='{user}' is no virtual environment (no bin/python)" in line, line
    assert tree_hashes(user) == before and not (tmp_path / "gw").exists()


def _hold_the_lock(work: Path) -> subprocess.Popen:
    """A second process holding ``work``'s lock, as a running stage does (returns once it holds it)."""
    code = ("import sys, time; sys.path.insert(0, sys.argv[2]); from pathlib import Path; "
            "from gpu_check_common import work_lock\nwith work_lock(Path(sys.argv[1])):\n"
            "    print('held', flush=True); time.sleep(120)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(work), str(REPO / "scripts")], text=True,
                              stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_check_in_a_work_folder_is_refused(gc, tmp_path, refused):
    work = tmp_path / "gw2x"
    assert gc.main(["claim", "--work", str(work)]) == 0
    holder = _hold_the_lock(work)
    try:
        line = refused(["fsdp", *FSDP_QUICK, "--work", work, "--budget-s", "100"])
        assert f"process {holder.pid}" in line and "give each check its own work folder" in line
        line = refused(["claim", "--work", work])
        assert "is in use" in line and f"process {holder.pid}" in line
    finally:
        holder.kill()
        holder.wait()
    assert not (work / "fsdp-run").exists() and not (work / "fsdp-corpus").exists()


def test_ctrl_c_stops_the_shell_check_and_says_so(tmp_path):
    proc = _shell(tmp_path, GPU_CHECK_BUDGET_S="300")
    wait_for(lambda: (tmp_path / "gw" / "gpu-tests.log").exists(), proc, "the gpu-tests stage", timeout=120)
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    assert "stopped by SIGINT during the gpu-tests stage" in err and "run the check again" in err
    assert "=== [" in out and "report" not in out.split("gpu-tests: exit status")[-1]
    assert (tmp_path / "gw" / "gpu-tests.status").read_text().split()[0] == "130"
    assert not (tmp_path / "gw" / "bench.status").exists()
