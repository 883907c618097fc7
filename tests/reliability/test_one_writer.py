"""One writer per folder: a second ``train`` / ``prepare`` / ``export`` / ``sweep`` on a folder that a live process
is writing exits 2 naming the folder and that process, and damages nothing; a lock left by a killed process is
taken over with a note (``leviathan.locking``).

The writers are real processes: a ``leviathan train`` paused inside its checkpoint writer (the launcher of
``reliability_support``), or a small process that holds the lock of a prepare / export output the way those
verbs do. The second writer runs through ``leviathan.cli.main`` as a user would.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leviathan.cli import main
from leviathan.errors import UserError
from leviathan.locking import folder_lock, lock_path
from leviathan.train import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, launch, one_error, run_overrides, tree_hashes, wait_for, write_corpus  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

HOLD = """
import sys, time
from pathlib import Path
from leviathan.locking import folder_lock
with folder_lock(sys.argv[1], "prepare", beside=sys.argv[2] == "beside"):
    Path(sys.argv[3]).touch()
    time.sleep(3600)
"""


def fails(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    return one_error(err)


def hold_lock(folder: Path, marker: Path, beside: bool) -> subprocess.Popen:
    """A process that holds ``folder``'s lock (as prepare / export / train do) until killed."""
    env = {"PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), "beside" if beside else "inside", str(marker)],
                            env=env)
    wait_for(marker.exists, proc, "the lock to be taken", timeout=60)
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


# ---- the lock itself ----------------------------------------------------------------------------
def test_lock_names_the_holder_and_is_released(tmp_path):
    run = tmp_path / "run"
    with folder_lock(run, "train") as path:
        assert path == run / ".lock" and path.read_text().split("\n")[0].isdigit()
        # this process's own lock is named as its own, not as another writer's (round 29, W243)
        with pytest.raises(UserError, match=r"cannot train into .*run': this process holds its lock already"):
            with folder_lock(run, "train"):
                pass
    assert not run.exists()  # created by the lock, nothing written: removed on release
    (tmp_path / "kept").mkdir()
    with folder_lock(tmp_path / "kept", "train"):
        (tmp_path / "kept" / "file").write_text("x")
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["file"]  # the lock file is gone, the rest kept


def test_the_folders_a_lock_made_are_removed_when_nothing_was_written_into_them(tmp_path):
    """Review of issue 30 round 18: a beside lock (prepare, export, collect_results) recorded none of the folders its
    ``mkdir(parents=True)`` made, so a failed `prepare --out a/b/data` left ``a/b`` behind; collect_results removed its
    own, a twin. Every lock now removes the empty folders it made, innermost first, and keeps any holding a file."""
    with pytest.raises(RuntimeError):
        with folder_lock(tmp_path / "a" / "b" / "data", "prepare", beside=True):
            raise RuntimeError("the verb failed before its rename")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError):
        with folder_lock(tmp_path / "c" / "d" / "run", "train"):
            raise RuntimeError("train failed before its first write")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with folder_lock(tmp_path / "e" / "f" / "data", "prepare", beside=True):
        (tmp_path / "e" / "f" / "data").mkdir()  # the verb's rename put its output in place
    assert [p.name for p in (tmp_path / "e" / "f").iterdir()] == ["data"]


def test_a_dead_holder_is_taken_over_with_a_note(tmp_path, capsys):
    run = tmp_path / "run"
    proc = hold_lock(run, tmp_path / "held", beside=False)
    with pytest.raises(UserError, match=rf"process {proc.pid} .* is writing there"):
        with folder_lock(run, "train"):
            pass
    stop(proc)  # SIGKILL: the lock file stays, the kernel released the flock
    assert lock_path(run).exists()
    notes = []
    with folder_lock(run, "train", log=notes.append):
        pass
    assert len(notes) == 1 and f"from process {proc.pid}" in notes[0] and "ended without releasing it" in notes[0]


# ---- train --------------------------------------------------------------------------------------
def test_second_train_on_a_live_run_folder_exits_2_and_mixes_nothing(capsys, data, tmp_path):
    run = tmp_path / "run"
    marker = tmp_path / "paused"
    argv = ["train", *run_overrides(data, max_steps=6), "--run-dir", str(run), "--quiet"]
    first = launch(argv, tmp_path, plan={"pause": {"step": 2, "where": "rename", "marker": str(marker)}})
    try:
        wait_for(marker.exists, first, "the first train to reach its checkpoint write")
        before = tree_hashes(run)
        line = fails(capsys, "train", *run_overrides(data, max_steps=6, **{"model.embedding": "dense_tied",
                                                                          "optim.lr": "3e-3"}),
                     "--run-dir", run, "--quiet")
        assert f"cannot train into {str(run)!r}: process {first.pid} (" in line
        assert "is writing there" in line and "choose another --run-dir" in line
        assert tree_hashes(run) == before  # the second writer touched nothing, not even the .tmp-* being written
        again = fails(capsys, "train", *run_overrides(data, max_steps=6), "--run-dir", run, "--resume", "auto", "--quiet")
        assert f"process {first.pid} (" in again and "is writing there" in again  # --resume auto is refused too
    finally:
        stop(first)  # killed inside the write: a stale lock and a .tmp-* folder are left
    assert (run / ".lock").exists() and list((run / "checkpoints").glob(".tmp-*"))
    code = main(["train", *run_overrides(data, max_steps=6), "--run-dir", str(run), "--resume", "auto", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"took over the lock of {str(run)!r} from process {first.pid}" in err
    assert [s for s, _ in ckpt.list_checkpoints(run)] == [2, 4, 6]
    assert not list((run / "checkpoints").glob(".tmp-*")) and not (run / ".lock").exists()
    configs = {(p / "config.yaml").read_text() for _, p in ckpt.list_checkpoints(run)}
    assert len(configs) == 1 and "embedding: leviathan" in configs.pop()


def test_two_identical_trains_at_once_one_refused(data, tmp_path):
    """Both started together (no pause): exactly one trains, the other exits 2 with the message."""
    run = tmp_path / "run"
    argv = ["train", *run_overrides(data, max_steps=4), "--run-dir", str(run), "--quiet"]
    procs = [launch(argv, tmp_path, log_name=f"err{i}.log") for i in range(2)]
    codes = sorted(p.wait(timeout=300) for p in procs)
    errs = "".join((tmp_path / f"err{i}.log").read_text() for i in range(2))
    assert codes == [0, 2], errs
    assert "Traceback" not in errs and errs.count("is writing there") == 1
    assert [s for s, _ in ckpt.list_checkpoints(run)] == [2, 4]


# ---- prepare and export -------------------------------------------------------------------------
def test_second_prepare_on_the_same_out_exits_2(capsys, tmp_path):
    out = tmp_path / "data"
    holder = hold_lock(out, tmp_path / "held", beside=True)
    try:
        line = fails(capsys, "prepare", write_corpus(tmp_path / "corpus", num_docs=5), "--out", out,
                     "--tokenizer", "cl100k_base", "--no-progress")
    finally:
        stop(holder)
    assert f"cannot prepare into {str(out)!r}: process {holder.pid} (" in line
    assert "choose another --out" in line
    assert not out.exists()


def test_second_export_to_the_same_folder_exits_2(capsys, finished_run, tmp_path):
    out = tmp_path / "hf"
    holder = hold_lock(out, tmp_path / "held", beside=True)
    try:
        line = fails(capsys, "export", finished_run, out)
    finally:
        stop(holder)
    assert f"cannot export into {str(out)!r}: process {holder.pid} (" in line
    assert not out.exists()
    assert main(["export", str(finished_run), str(out)]) == 0  # the dead holder's lock is taken over
    assert "took over the lock" in capsys.readouterr().err
    assert (out / "config.json").is_file() and not (tmp_path / ".hf.lock").exists()


# ---- a training run's data ----------------------------------------------------------------------
def test_prepare_overwrite_of_the_data_of_a_live_run_is_refused_until_the_run_ends(capsys, data, tmp_path):
    """``prepare --overwrite`` replaced the data folder of a live training run, exit 0 (issue 30 round 8, H1): train
    holds a reader's claim inside its data folder (``locking.reading``); a killed run's claim blocks nothing."""
    mine = Path(shutil.copytree(data, tmp_path / "data"))
    marker = tmp_path / "paused"
    argv = ["train", *run_overrides(mine, max_steps=6), "--run-dir", str(tmp_path / "run"), "--quiet"]
    first = launch(argv, tmp_path, plan={"pause": {"step": 2, "where": "rename", "marker": str(marker)}})
    corpus = write_corpus(tmp_path / "corpus", seed=5)
    redo = ["prepare", corpus, "--out", mine, "--tokenizer", "bpe:300", "--no-progress", "--overwrite"]
    try:
        wait_for(marker.exists, first, "the run to reach its checkpoint write")
        before = tree_hashes(mine)
        line = fails(capsys, *redo)
        assert f"--overwrite (overwrite=True) would delete {str(mine)!r}, but process {first.pid} (" in line
        assert "is reading it" in line and "nothing was deleted" in line
        assert tree_hashes(mine) == before
    finally:
        stop(first)  # killed: its claim file stays, the kernel dropped its flock
    assert list(mine.glob(".reader-*.lock"))
    assert main([str(a) for a in redo]) == 0, capsys.readouterr().err
    assert not list(mine.glob(".reader-*.lock")) and tree_hashes(mine) != before
