"""The GPU check's scripts (scripts/gpu_check.{py,sh} and their stage modules) held to the verbs' output rules
(issue 30 round 24, V35-V39, V76-V78, V104, V121, V122).

The scripts were never held to them: ``report --md`` and ``env --json`` wrote over a user's file (V35, V121),
``fsdp --work DIR`` deleted whatever was at ``DIR/fsdp-run`` (V36) and gpu_check.sh ``rm -f``'d the ``*.log`` and
env.json of the folder ``GPU_CHECK_WORK`` named (V104); a relative ``--work`` reached commands run from the
repository (V37); ``--repeats 0`` / ``--warmup 0`` were taken as the defaults and ``--batch -1`` ran (V38, V39); the
report hung on a named pipe and ended in tracebacks for a damaged stage file (V76-V78); ``--json afile/x.json`` was a
traceback (V122). Each is now a single ``error: ...`` line, exit status 2, with nothing written or deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_error, tree_hashes  # noqa: E402

HELPER = REPO / "scripts" / "gpu_check.py"


def gpu_check(argv: list, cwd: Path, timeout: float = 120, **env) -> subprocess.CompletedProcess:
    """``python scripts/gpu_check.py <argv>`` in a real process, from ``cwd``."""
    env = {**{k: v for k, v in os.environ.items() if k != "OUT"}, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(REPO / "src"), **env}
    return subprocess.run([sys.executable, str(HELPER), *map(str, argv)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def gc(script_module):
    return script_module("gpu_check.py")


@pytest.fixture
def refused(gc, tmp_path, monkeypatch, capsys):
    """``refused(argv)``: the one ``error: ...`` line of ``gpu_check.main(argv)`` run in ``tmp_path`` (in this
    process: a real one imports torch for its error line, seconds each), which must end with status 2."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OUT", raising=False)
    monkeypatch.delenv("GPU_CHECK_STAGE_LIMIT", raising=False)
    monkeypatch.setenv("GPU_CHECK_WORK", str(tmp_path / "default-work"))  # never the shared /tmp/gpu_check

    def run(argv: list) -> str:
        try:
            rc = gc.main([str(a) for a in argv])
        except SystemExit as e:  # argparse's refusal of a value
            rc = e.code
        err = capsys.readouterr().err
        assert rc == 2, err[-2000:]
        return one_error(err)
    return run


# ---- output files: --md, --json (V35, V121, V122) ------------------------------------------------
def test_report_md_refuses_a_users_file_and_rewrites_its_own(gc, tmp_path, monkeypatch):
    notes = tmp_path / "mynotes.md"
    notes.write_text("my precious notes\n")
    (tmp_path / "gw").mkdir()
    proc = gpu_check(["report", "--work", "gw", "--md", "mynotes.md"], tmp_path)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = one_error(proc.stderr)
    assert "--md 'mynotes.md'" in line and "not an earlier GPU check report" in line
    assert notes.read_text() == "my precious notes\n"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OUT", raising=False)
    for _ in range(2):  # a new path, then its own earlier report: written (1: no stage ran)
        assert gc.main(["report", "--work", "gw", "--md", "r.md"]) == 1
        assert (tmp_path / "r.md").read_text().startswith("# GPU check (")


def test_env_json_refuses_a_users_file_and_a_file_above(tmp_path, refused):
    mine = tmp_path / "myenv.json"
    mine.write_text('{"mine": 1}')
    assert "not an earlier `gpu_check.py env` record" in refused(["env", "--device", "cpu", "--json", mine])
    assert mine.read_text() == '{"mine": 1}'
    (tmp_path / "afile").write_text("x")
    line = refused(["env", "--device", "cpu", "--json", "afile/x.json"])
    assert "'afile' is a file, not a folder" in line


@pytest.mark.parametrize("stage", ["bench", "fsdp"])
def test_stage_json_refuses_a_users_file(tmp_path, refused, stage):
    mine = tmp_path / "mine.json"
    mine.write_text('{"mine": 1}')
    work = ["--work", "gw"] if stage == "fsdp" else []  # bench writes no work folder
    line = refused([stage, "--device", "cpu", "--quick", "--json", mine, *work])
    assert f"not an earlier `gpu_check.py {stage}` result" in line and mine.read_text() == '{"mine": 1}'
    assert not (tmp_path / "gw").exists()


def test_out_folder_of_a_user_is_refused(tmp_path, refused, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "gpu_check.md").write_text("mine\n")
    (tmp_path / "gw").mkdir()
    monkeypatch.setenv("OUT", str(out))
    line = refused(["report", "--work", "gw"])
    assert "gpu_check.md" in line and "choose another OUT" in line
    assert (out / "gpu_check.md").read_text() == "mine\n"


# ---- the work folder (V36, V37, V104) ------------------------------------------------------------
def test_fsdp_refuses_a_users_fsdp_run(tmp_path, refused):
    run = tmp_path / "uw" / "fsdp-run"
    run.mkdir(parents=True)
    (run / "MY_NOTES.txt").write_text("mine\n")
    line = refused(["fsdp", "--device", "cpu", "--quick", "--dtype", "fp32", "--work", "uw", "--budget-s", "20"])
    assert "would write over fsdp-run" in line and "choose another --work" in line
    assert tree_hashes(tmp_path / "uw") == {"fsdp-run/MY_NOTES.txt": tree_hashes(run)["MY_NOTES.txt"]}


def _train_run(run: Path, data_path: str) -> None:
    """A folder as `leviathan train` leaves it: its marker (verb train) and its files, trained on ``data_path``."""
    from leviathan.ownership import mark
    from leviathan.train.loop import RUN_FILES

    run.mkdir(parents=True)
    (run / "config.yaml").write_text(f"data:\n  path: {data_path}\n")
    (run / "metrics.jsonl").write_text('{"step": 1}\n')
    mark(run, "train", RUN_FILES)


@pytest.mark.parametrize("extra, trained_on", [("NOTES.txt", "fsdp-data"), (None, "/elsewhere/d1")])
def test_fsdp_replaces_only_its_own_earlier_run_in_a_claimed_folder(gc, tmp_path, monkeypatch, capsys, extra,
                                                                     trained_on):
    """Round 25, X25: in a work folder the check had claimed, a user's run (and NOTES.txt) copied into fsdp-run was
    deleted without a word; the claim is of the folder, not of what a user put inside it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OUT", raising=False)
    assert gc.main(["claim", "--work", "w"]) == 0
    work = tmp_path / "w"
    _train_run(work / "fsdp-run", str(work / trained_on) if trained_on == "fsdp-data" else trained_on)
    if extra:
        (work / "fsdp-run" / extra).write_text("mine\n")
    before = tree_hashes(work / "fsdp-run")
    monkeypatch.setattr(gc.fsdp, "fully_shard_check", lambda args: {"status": "ok"})
    assert gc.main(["fsdp", "--device", "cpu", "--quick", "--work", "w"]) == 2
    line = one_error(capsys.readouterr().err)
    assert "fsdp-run" in line and "rm -r" in line, line
    assert tree_hashes(work / "fsdp-run") == before


def test_fsdp_replaces_its_own_earlier_run(gc, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OUT", raising=False)
    assert gc.main(["claim", "--work", "w"]) == 0
    work = tmp_path / "w"
    _train_run(work / "fsdp-run", str(work / "fsdp-data"))
    monkeypatch.setattr(gc.fsdp, "_run", lambda cmd, log, timeout, env=None: (1, "", 0.0))
    monkeypatch.setattr(gc.fsdp, "fully_shard_check", lambda args: {"status": "ok"})
    gc.main(["fsdp", "--device", "cpu", "--quick", "--work", "w", "--json", "f.json"])
    assert not (work / "fsdp-run").exists()


def test_work_folder_is_claimed_once_and_a_users_other_files_stay(gc, tmp_path, monkeypatch):
    """A new folder is claimed (twice: the second run finds its own marker); a file the user adds beside the check's
    later stays, and the folder is claimed again."""
    work = tmp_path / "w"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OUT", raising=False)
    assert gc.main(["claim", "--work", "w"]) == 0
    (work / "keep.txt").write_text("mine\n")
    assert gc.main(["claim", "--work", "w"]) == 0
    marker = json.loads((work / "leviathan_output.json").read_text())
    assert marker["verb"] == "gpu_check" and "keep.txt" not in (marker["files"] or [])
    assert (work / "keep.txt").read_text() == "mine\n"


@pytest.mark.parametrize("where", ["--work", "OUT"])
def test_a_users_folder_is_not_claimed(tmp_path, refused, monkeypatch, where):
    """Round 28 (T50, T52): `gpu_check.py claim --work corpus` (or OUT=corpus) marked a user's folder of text files
    as the GPU check's output, exit 0; `leviathan prepare corpus` then refused it as the check's output. Refused now,
    as train, sweep and report refuse such a folder, nothing marked."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "book.txt").write_text("a user's book\n")
    if where == "OUT":
        monkeypatch.setenv("OUT", str(corpus))
        line = refused(["claim", "--work", tmp_path / "w"])
    else:
        line = refused(["claim", "--work", corpus])
    assert "would write its output among files it did not write" in line and "book.txt" in line, line
    assert f"choose another {'GPU_CHECK_WORK' if where == '--work' else 'OUT'}" in line, line
    assert sorted(p.name for p in corpus.iterdir()) == ["book.txt"]


def test_relative_work_reaches_the_stage_commands_absolute(gc, tmp_path, monkeypatch):
    """V37: the stage runs prepare and torchrun from the repository; a relative --work named another folder there."""
    seen = []

    def fake_run(cmd, log, timeout, env=None):
        seen.append(cmd)
        return 1, "", 0.0

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(gc.fsdp, "_run", fake_run)
    monkeypatch.setattr(gc.fsdp, "fully_shard_check", lambda args: {"status": "ok"})
    assert gc.main(["fsdp", "--device", "cpu", "--quick", "--work", "uw", "--json", "f.json"]) == 1
    prepare = seen[0]
    source, out = Path(prepare[prepare.index("prepare") + 1]), Path(prepare[prepare.index("--out") + 1])
    assert source.is_absolute() and source.is_dir() and source == tmp_path / "uw" / "fsdp-corpus" / "train"
    assert out.is_absolute()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_shell_script_refuses_a_users_work_folder(tmp_path):
    work = tmp_path / "gwu"
    work.mkdir()
    (work / "experiment.log").write_text("log\n")
    (work / "env.json").write_text('{"my": "env"}')
    (work / "keep.txt").write_text("k\n")
    before = tree_hashes(work)
    env = {**os.environ, "GPU_CHECK_WORK": str(work), "GPU_CHECK_BUDGET_S": "20", "GPU_CHECK_DEVICE": "cpu",
           "GPU_CHECK_QUICK": "1", "GPU_CHECK_SKIP_INSTALL": "1", "PYTHON": sys.executable, "OMP_NUM_THREADS": "1"}
    env.pop("OUT", None)
    proc = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "would write over" in one_error(proc.stderr) and "GPU_CHECK_WORK" in proc.stderr
    assert tree_hashes(work) == before and sorted(os.listdir(work)) == ["env.json", "experiment.log", "keep.txt"]


# ---- numeric options (V38, V39) -------------------------------------------------------------------
@pytest.mark.parametrize("option, value", [("--repeats", "0"), ("--batch", "-1"), ("--seq", "0"), ("--warmup", "-1"),
                                           ("--budget-s", "nan"), ("--threads", "0"), ("--device", "tpu")])
def test_numeric_options_refused_at_the_command_line(refused, option, value):
    line = refused(["bench", "--device", "cpu", "--quick", option, value])
    assert f"argument {option}" in line


@pytest.mark.parametrize("argv", [["env", "--md", "r.md"], ["all", "--json", "x.json"], ["fsdp", "--batch", "4"],
                                  ["bench", "--md", "r.md"]])
def test_an_option_the_stage_does_not_use_is_refused(refused, tmp_path, argv):
    assert "unrecognized arguments" in refused(argv + ["--device", "cpu", "--quick", "--no-compile", "--dtype", "fp32"])
    assert not (tmp_path / argv[-1]).exists()


def test_seq_past_the_positions_is_refused(refused):
    line = refused(["bench", "--device", "cpu", "--quick", "--seq", "100"])
    assert "--seq 100" in line and "from 1 to 64" in line


def test_zero_warmup_is_taken_as_given(gc):
    args = Namespace(quick=True, preset=None, batch=None, seq=None, repeats=None, warmup=0)
    assert gc.bench.bench_sizes(args)["warmup"] == 0
    args.quick, args.repeats = False, 1
    sizes = gc.bench.bench_sizes(args)
    assert (sizes["warmup"], sizes["repeats"], sizes["batch"]) == (0, 1, 16)


# ---- the report's inputs (V76, V77, V78) ----------------------------------------------------------
def _damaged_work(tmp_path: Path, name: str, write) -> Path:
    work = tmp_path / "gwd"
    work.mkdir()
    write(work / name)
    return work


@pytest.mark.parametrize("name, write, says", [
    ("setup.status", lambda p: p.write_text("x y z\n"), "not 'RC SECONDS LIMIT'"),
    ("bench.json", lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    ("env.json", lambda p: p.write_text("not json{"), "not readable JSON"),
    ("env.json", lambda p: p.write_text("[1]"), "not an object"),
    ("bench.json", lambda p: p.write_text('{"runs": [{"x": 1}]}'), "a field is missing"),
    ("env.json", lambda p: os.mkfifo(p), "named pipe"),
    ("bench.json", lambda p: os.mkfifo(p), "named pipe"),
    ("setup.note", lambda p: os.mkfifo(p), "named pipe"),
    ("pytest.xml", lambda p: p.write_text("<testsuite"), "not XML"),
], ids=["status-xyz", "bench-deep", "env-not-json", "env-list", "bench-shape", "env-fifo", "bench-fifo", "note-fifo",
        "xml-torn"])
def test_report_refuses_a_damaged_stage_file(tmp_path, refused, name, write, says):
    work = _damaged_work(tmp_path, name, write)
    line = refused(["report", "--work", work])
    assert name in line and says in line


def test_report_refuses_a_work_folder_that_is_not_there(refused, tmp_path):
    line = refused(["report", "--work", "typo"])
    assert "--work" in line and "does not exist" in line
    (tmp_path / "afile").write_text("x")
    assert "is a file, not a folder" in refused(["report", "--work", "afile"])
