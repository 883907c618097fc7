"""The scripts take no input that makes what they report untrue (issue 30 round 26): `same_numbers.py --run a --run a`
failed after the first training naming a temporary folder and options the user cannot give (P8), and `--run 'a-*'`
matching two runs compared only the first, reported under the pattern (P9); `gpu_check.sh` with
PYTHON=/nonexistent/python was bash's own line naming no setting (P24), and with TMPDIR=/nonexistent its failed mktemp
made the current folder the work folder, claimed and written into (P25); `gpu_check.py report` took a pytest.xml of
another machine's run, GPU tests passed, in a CPU rehearsal's work folder: "Overall: PASS" (P72); a results row whose
eval.val.loss is not its own buckets.val.overall_loss was tabled by report and merged by collect_results.py (P14)."""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, copied_sweep, grid_file, one_error, script  # noqa: E402
from test_gpu_check_output_rules import gc, refused  # noqa: E402,F401 - fixtures
from test_gpu_check_verb_rules import _shell, _work  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_run_given_twice_is_refused_before_any_worktree(data, tmp_path):
    grid = grid_file(tmp_path, data)
    done = script("same_numbers.py", ["HEAD", "HEAD", "--grid", grid, "--run", "a-dense_tied-s0", "--run",
                                      "a-dense_tied-s0", "--steps", "1", "--data-dir", data], cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.strip().splitlines() == ["error: --run 'a-dense_tied-s0' is given 2 times; give each run once"]


def test_a_run_pattern_is_one_run_named_as_itself(script_module, data, tmp_path):
    same = script_module("same_numbers.py")
    grid = str(grid_file(tmp_path, data))
    with pytest.raises(UserError, match=r"--run 'a-\*' matches 2 runs .*\(a-dense_tied-s0, a-dense_untied-s0\); a "
                                        r"--run names one run: give each run to compare as its own --run"):
        same.train_line(REPO, grid, "a-*", 1, str(data))
    name, argv = same.train_line(REPO, grid, "a-*_untied-s0", 1, str(data))
    assert name == "a-dense_untied-s0" and argv[-1] == "max_steps=1" and "--run-dir" not in argv
    same.train_line = lambda worktree, grid, run, steps, data_dir: ("a-dense_tied-s0", [f"max_steps={steps}"])
    args = argparse.Namespace(grid=grid, run=["a-dense_tied-s0", "a-*_tied-s0"], steps=1, data_dir=str(data))
    with pytest.raises(UserError, match=r"--run 'a-\*_tied-s0' names run a-dense_tied-s0, which an earlier --run "):
        same.run_lines(REPO, args)


# ---- gpu_check.sh: a PYTHON that does not run, a mktemp that fails (P24, P25) -------------------------
def test_a_python_setting_that_does_not_run_is_named(tmp_path):
    """P24: PYTHON=/nonexistent/python was bash's own "No such file or directory", naming no setting."""
    proc = _shell(tmp_path, PYTHON=str(tmp_path / "nonexistent" / "python"))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err[-2000:]
    assert f"PYTHON='{tmp_path / 'nonexistent' / 'python'}' is not a Python interpreter that runs" in one_error(err)
    assert not (tmp_path / "gw").exists()


def test_a_failed_mktemp_claims_not_the_current_folder(tmp_path):
    """P25: with TMPDIR=/nonexistent, mktemp -d failed, WORK was left empty and read as the current folder, which was
    claimed and written into by every stage."""
    here = tmp_path / "here"
    here.mkdir()
    (here / "mine.txt").write_text("mine\n")
    proc = _shell(here, GPU_CHECK_WORK="", TMPDIR=str(tmp_path / "nonexistent"))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err[-2000:]
    line = one_error(err)
    assert f"no work folder could be made under TMPDIR={tmp_path / 'nonexistent'}" in line and "set TMPDIR" in line
    assert sorted(p.name for p in here.iterdir()) == ["mine.txt"]


# ---- gpu_check.py report: a pytest.xml of another machine (P72) ---------------------------------------
def _junit(work: Path, host: str, passed: int, skipped: int) -> None:
    cases = "".join(f'<testcase classname="tests.gpu.test_cuda_readiness" name="t{i}" time="0.1"/>'
                    for i in range(passed))
    cases += "".join(f'<testcase classname="tests.gpu.test_cuda_readiness" name="s{i}" time="0.0"><skipped '
                     f'type="pytest.skip" message="needs a CUDA GPU"/></testcase>' for i in range(skipped))
    (work / "pytest.xml").write_text(f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
                                     f'errors="0" failures="0" skipped="{skipped}" tests="{passed + skipped}" '
                                     f'hostname="{host}">{cases}</testsuite></testsuites>')


def test_gpu_tests_passed_where_env_json_saw_no_cuda_are_refused(tmp_path, refused):
    work = _work(tmp_path, "0 5 30", {"device": "cpu"})
    _junit(work, platform.node(), passed=11, skipped=0)
    line = refused(["report", "--work", work])
    assert "pytest.xml" in line and "11 GPU tests ran (passed or failed), and env.json records no CUDA device" in line


def test_a_pytest_xml_of_another_host_is_refused_and_this_hosts_is_reported(gc, tmp_path, refused, capsys):
    work = _work(tmp_path, "0 5 30", {"device": "cpu"})
    env = json.loads((work / "env.json").read_text())
    (work / "env.json").write_text(json.dumps({**env, "hostname": platform.node()}))
    _junit(work, "h100-node-7", passed=0, skipped=11)
    line = refused(["report", "--work", work])
    assert f"pytest ran on h100-node-7, and env.json records host {platform.node()}" in line, line
    _junit(work, platform.node(), passed=0, skipped=11)  # this machine's own CPU rehearsal: every GPU test skipped
    assert gc.main(["report", "--work", str(work)]) == 1  # the other stages did not run
    assert "0 passed, 0 failed, 11 skipped" in capsys.readouterr().out


# ---- a results row whose eval loss is not its own buckets' (P14) ------------------------------------------
@pytest.mark.parametrize("edit, says", [
    ("eval", "has eval.val.loss 4.0, not its own buckets.val.overall_loss"),
    ("bucket", "whose mean weighted by buckets.val.count is"),
], ids=["eval-loss", "a-bucket-loss"])
def test_a_row_whose_eval_loss_is_not_its_buckets_is_refused(one_run_sweep, tmp_path_factory, capsys, edit, says):
    """P14: eval.val.loss edited to 4.0 (ppl and bpb with it) beside buckets.val.overall_loss 5.57, the same
    evaluation's mean, was tabled by report and merged by collect_results.py; a bucket's loss edited apart from the
    overall is the same fault."""
    from leviathan.cli import main

    sweep = copied_sweep(one_run_sweep, tmp_path_factory, f"p14-{edit}")
    results = sweep / "results.jsonl"
    row = json.loads(results.read_text())
    ev = row["eval"]["val"]
    if edit == "eval":
        ev.update(loss=4.0, ppl=math.exp(4.0), bpb=ev["bpb"] * 4.0 / ev["loss"])
    else:
        row["buckets"]["val"]["loss"][0] += 1.0
        row["buckets"]["val"]["ppl"][0] = math.exp(row["buckets"]["val"]["loss"][0])
    results.write_text(json.dumps(row) + "\n")
    capsys.readouterr()
    assert main(["report", str(sweep), "--out", str(sweep.parent / "rp")]) == 2  # its only row is left out, named
    err = capsys.readouterr().err
    assert "results.jsonl:1: line 1 has" in err and says in err, err
    if edit == "eval":  # the same shared checker in the script (one real process): the row is not copied, named
        done = script("collect_results.py", [sweep, "--dest", sweep.parent / "cA"])
        assert f"results.jsonl:1: line 1 {says}" in done.stderr and "skipped, not copied" in done.stderr, done.stderr
