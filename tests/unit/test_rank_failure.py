"""train/rank_failure.py: which rank died, who says it, and the resume command (the torchrun end to end is in
tests/reliability/test_rank_kill.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from leviathan.train import rank_failure as rf


@pytest.fixture
def two_ranks(monkeypatch):
    """Rank 0 of 2 on one host, torchrun's variables set; the recorded ranks restored afterwards."""
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    monkeypatch.setattr(rf, "_RANKS", ())
    return monkeypatch


def dead_pid() -> int:
    """The pid of a child that exited and was reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc (Linux)")
def test_a_dead_peer_on_this_host_is_named_and_the_lowest_survivor_reports(two_ranks):
    import socket

    host = socket.gethostname()
    assert rf._is_dead(os.getpid()) is False and rf._is_dead(dead_pid()) is True
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        while rf._is_dead(zombie.pid) is False:  # exited, not yet reaped: a zombie counts as dead
            pass
        assert rf._is_dead(zombie.pid) is True
    finally:
        zombie.wait()
    two_ranks.setattr(rf, "_RANKS", (rf.RankProcess(0, host, os.getpid()), rf.RankProcess(1, host, dead_pid())))
    failure = rf.peer_failure(ValueError("anything: a dead peer is enough"))
    assert failure is not None and [p.rank for p in failure.dead] == [1] and failure.reporter
    assert failure.describe().startswith("rank 1 (pid ") and "of 2 was killed or crashed" in failure.describe()
    two_ranks.setenv("RANK", "1")  # rank 1 alive, rank 0 dead: rank 1 is the lowest survivor and reports
    two_ranks.setattr(rf, "_RANKS", (rf.RankProcess(0, host, dead_pid()), rf.RankProcess(1, host, os.getpid())))
    assert rf.peer_failure(RuntimeError("x")).reporter


def test_without_a_known_dead_peer_a_transport_error_is_reported_by_every_rank(two_ranks):
    failure = rf.peer_failure(RuntimeError("[gloo/transport/tcp/pair.cc:553] Connection closed by peer [::1]:3201"))
    assert failure is not None and failure.unknown and failure.reporter and failure.dead == ()
    assert "another rank of the 2 stopped" in failure.describe()
    assert rf.peer_failure(ValueError("a bug of ours")) is None  # anything else keeps its traceback
    two_ranks.setenv("WORLD_SIZE", "1")
    assert rf.peer_failure(RuntimeError("Connection closed by peer")) is None  # not a distributed run


def test_only_the_lowest_survivor_reports_when_the_dead_are_known():
    f = rf.PeerFailure(rank=2, world=4, dead=(rf.RankProcess(0, "h", 1),), survivors=(1, 2, 3))
    assert not f.reporter and rf.PeerFailure(rank=1, world=4, dead=f.dead, survivors=(1, 2, 3)).reporter
    assert "were" in rf.PeerFailure(rank=3, world=4, dead=f.dead * 2, survivors=(3,)).describe()


def test_the_resume_command_has_the_launch_shape(two_ranks):
    args = ["--config", "tiny", "optim.lr=1e-3", "--run-dir", "runs/my run", "--resume", "auto"]
    assert rf.resume_command(args) == ("torchrun --nproc_per_node=2 -m leviathan train --config tiny optim.lr=1e-3 "
                                       "--run-dir 'runs/my run' --resume auto")
    two_ranks.setenv("WORLD_SIZE", "8")
    two_ranks.setenv("LOCAL_WORLD_SIZE", "4")
    assert rf.resume_command(["--resume", "auto"]).startswith("torchrun --nproc_per_node=4 --nnodes=2 -m leviathan")


def _sigterm_to_self():
    import signal

    os.kill(os.getpid(), signal.SIGTERM)  # the handler runs before the next line: torchrun's stop, now


@pytest.mark.parametrize("when", ["while saying it", "as the error unwinds"])
def test_torchruns_sigterm_to_a_survivor_does_not_cut_off_the_line_naming_the_dead_rank(two_ranks, tmp_path, capsys,
                                                                                         when):
    """Once a rank dies, torchrun's agent sends SIGTERM to the others at once, while the survivor is saying which
    rank died: the stop replaced that line with "stopped by SIGTERM ..." (a CI run of 14f5786, test_rank_kill)."""
    import leviathan.checkpoint.layout as layout
    import leviathan.train.loop as loop
    from leviathan.cli import main

    def train(*args, **kwargs):
        try:
            raise RuntimeError("[gloo/transport/tcp/pair.cc:553] Connection closed by peer [::1]:3201")
        except RuntimeError:
            if when == "as the error unwinds":
                _sigterm_to_self()
            raise

    def latest(run_dir):
        if when == "while saying it":
            _sigterm_to_self()
        return None

    two_ranks.setattr(loop, "train", train)
    two_ranks.setattr(layout, "latest_checkpoint", latest)
    status = main(["train", "--config", "tiny", "model.vocab_size=64", "--run-dir", str(tmp_path / "run"), "--resume", "auto"])
    err = capsys.readouterr().err
    assert status == 2 and "stopped by SIGTERM" not in err, err
    assert "error: another rank of the 2 stopped" in err and "--resume auto" in err
