"""Refusals that named a fix the command cannot take, or not the cause (issue 30 round 27: R18, R21, R51, R59, R61,
R73, R76, "unclear").

Each was one clean line, exit 2, yet followed it led nowhere: ``gpu_check.py bench --quick --preset nope`` told to
drop --quick, which met "not a model preset" (R61); gpu_check.sh took PYTHON=/bin/true (it exits 0) for a python,
and every stage then failed on a work folder never made, no line naming PYTHON (R21); with LEVIATHAN_CACHE naming a
file, bench's line named --json / --cache-dir and demo's --run-dir, neither given, and bench trained its BPE before
finding the file (R76); a sweep on a data folder with an empty val split said its eval set "scores -1 target(s)"
and offered fewer buckets or a larger set, naming neither the empty split nor the fix (R59); ``eval`` on a run
folder train was writing, before its first checkpoint, sent the user to another run folder, not saying the run is
being trained (R51); ``train --resume auto --run-dir SWEEP`` without --config spoke of the built-in defaults and
told to start a run there with --config, which was refused in turn as the sweep's folder (R73); ``same_numbers.py
--steps 1`` on the smoke grid (warmup 2) relayed train's "set schedule.warmup_steps", which the script does not take,
after a worktree was made and the training started (R18). Each line now names the
cause first and a fix this very command takes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import (cli, cli_error, copied_sweep, launch, one_error, one_run_grid, run_overrides,  # noqa: E402
                                 script, wait_for, write_corpus)
from test_gpu_check_output_rules import gc, refused  # noqa: E402,F401 - fixtures
from test_gpu_check_verb_rules import QUICK, _shell  # noqa: E402


# ---- R61: an unknown preset named as such before the --quick conflict -------------------------------
def test_an_unknown_preset_with_quick_is_named_as_no_preset(tmp_path, refused):
    line = refused(["bench", *QUICK, "--json", tmp_path / "b.json", "--preset", "nope", "--repeats", "1"])
    assert "--preset 'nope' is not a model preset" in line and "cpu-tiny" in line and "--quick" not in line
    assert not (tmp_path / "b.json").exists()


def test_the_preset_quick_measures_is_taken_with_quick(gc):
    from argparse import Namespace

    args = Namespace(quick=True, preset="cpu-tiny", batch=None, seq=None, repeats=None, warmup=None)
    assert gc.bench.bench_sizes(args)["preset"] == "cpu-tiny"


# ---- R21: PYTHON must print a Python's version, not merely exit 0 ------------------------------------
def _fake_python(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "fakepy"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize("body, says", [
    ("exit 0", "is not a Python interpreter that runs (missing, not executable, or not a python"),
    ('echo "$@"', "is not a Python interpreter that runs"),
    ('echo "old 3.8"', "is Python 3.8, older than the 3.10 this checkout needs; set PYTHON to a Python 3.10"),
], ids=["true", "echo", "python-3.8"])
def test_a_python_setting_that_is_no_python_is_named(tmp_path, body, says):
    exe = _fake_python(tmp_path, body)
    proc = _shell(tmp_path, PYTHON=str(exe))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err[-2000:]
    line = one_error(err)
    assert str(exe) in line and says in line, line
    assert not (tmp_path / "gw").exists()


# ---- R76: a place that came from $LEVIATHAN_CACHE is named by it -------------------------------------
@pytest.mark.parametrize("argv, also", [
    (["bench", "--quick", "--only", "train", "--config", "cpu"], ", or give --cache-dir)"),
    (["demo", "--steps", "1", "--run-dir", "dm"], "another folder)"),
], ids=["bench", "demo"])
def test_a_file_as_the_cache_folder_names_leviathan_cache(tmp_path, monkeypatch, argv, also):
    (tmp_path / "ufile").write_text("mine\n")
    monkeypatch.setenv("LEVIATHAN_CACHE", "ufile")
    proc = cli(argv, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    line = one_error(proc.stderr)
    assert "a file is in the way" in line and "$LEVIATHAN_CACHE='ufile': set LEVIATHAN_CACHE to another folder" in line
    assert line.endswith(also) and "--json" not in line and "--run-dir" not in line, line
    assert "training a BPE" not in proc.stderr  # refused before minutes of training, not after
    assert (tmp_path / "ufile").read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == ["ufile"]


# ---- R59: an eval set with nothing to score is named as empty --------------------------------------------
def test_a_sweep_on_an_empty_val_split_names_it_and_the_prepare_fix(tmp_path):
    from leviathan.data.prepare import prepare

    dq = tmp_path / "dq"
    prepare(str(write_corpus(tmp_path / "corpus", num_docs=6)), dq, tokenizer="bpe:300", val_fraction=0,
            progress=False, log=lambda msg: None)
    line = cli_error(["sweep", "--grid", one_run_grid(dq, tmp_path), "--data-dir", dq, "--out", tmp_path / "sdq"])
    assert line == (f"error: grid 'g': eval set 'val' is the val split of {str(dq)!r}, which holds 0 token(s), no "
                    f"target to score; prepare the data with a validation split (leviathan prepare ... --val-fraction "
                    f"0.01, or --val-source FILE), or leave the set out of eval.sets"), line
    assert not (tmp_path / "sdq").exists()


# ---- R51: a run being trained, before its first checkpoint -----------------------------------------------
def test_eval_on_a_run_before_its_first_checkpoint_says_it_is_being_trained(data, tmp_path):
    run, marker = tmp_path / "rtw", tmp_path / "paused"
    argv = ["train", *run_overrides(data, max_steps=4), "--run-dir", str(run), "--quiet"]
    first = launch(argv, tmp_path, plan={"pause": {"step": 2, "where": "rename", "marker": str(marker)}})
    try:
        wait_for(marker.exists, first, "the train to reach its first checkpoint's rename")
        line = cli_error(["eval", run])
    finally:
        first.kill()
        first.wait()
    assert f"{str(run)!r} holds no complete checkpoint" in line
    assert (f"it is a run process {first.pid} (" in line and "is training now (it holds" in line
            and "has saved no checkpoint yet: wait for its first one (every checkpoint_interval steps" in line), line


# ---- R73: --resume without --config on a sweep's folder -----------------------------------------------
def test_resume_auto_on_a_sweep_folder_names_the_sweep_and_its_own_command(one_run_sweep, tmp_path_factory):
    sweep = copied_sweep(one_run_sweep, tmp_path_factory, "r73")
    before = sorted(p.name for p in sweep.rglob("*"))
    line = cli_error(["train", "--resume", "auto", "--run-dir", sweep, "max_steps=8"])
    assert line == (f"error: {str(sweep)!r} is the output of `leviathan sweep` (its leviathan_output.json says so), "
                    f"not a run of train; to resume the sweep, run the same `leviathan sweep --grid GRID --out "
                    f"{sweep}` command again (it trains only the runs results.jsonl lacks)"), line
    assert sorted(p.name for p in sweep.rglob("*")) == before


# ---- R18: same_numbers.py --steps shorter than the run's warmup ---------------------------------------
def test_same_numbers_refuses_steps_below_the_warmup_before_any_worktree(data, tmp_path, monkeypatch):
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # where the script makes its worktrees: left empty
    done = script("same_numbers.py", ["HEAD", "HEAD", "--grid", "smoke", "--run", "a-dense_tied-s0", "--steps", "1",
                                      "--data-dir", data], cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done
    assert one_error(done.stderr) == ("error: --steps 1 is shorter than run a-dense_tied-s0's warmup "
                                      "(schedule.warmup_steps=2 in its grid): train refuses a run that ends before "
                                      "its learning rate is reached; pass --steps 2 or more")
    assert not list((tmp_path / "tmp").iterdir())
