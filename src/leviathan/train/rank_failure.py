"""A rank that died under torchrun, said in one line on one surviving rank, with the command that resumes the run.

    record_ranks(rank, world)                  # at init: every rank's host and pid, through the group's store
    failure = peer_failure(exc)                # in the surviving ranks' except clause: a PeerFailure, or None
    failure.reporter, failure.describe()       # the lowest surviving rank says "rank 1 of 2 stopped ..."

When one rank dies, every other rank fails in its next collective with a transport error and a long traceback that
names neither the rank that died nor what to do (issue 31). At ``init_distributed`` every rank writes "host pid" to
the process group's store under a key of this attempt (run id and restart count) and reads everyone's once, while
all are alive, so nothing needs the store after a failure. After one, a peer on this host whose process is gone or
a zombie (``/proc/<pid>/stat`` state Z or X, Linux) is dead; peers on other hosts cannot be checked: then, or when
no dead peer is found, the message says "another rank" and every surviving rank reports.

Footguns: a transport error is only classified as a peer failure when a peer is found dead, or when the exception is
one of torch.distributed's own (``DistError``) or a RuntimeError naming the transport (``TRANSPORT_MARKERS``);
anything else is re-raised with its traceback. ``_get_default_store`` is torch's private accessor (torch 2.4-2.13);
without it the ranks are not recorded and the message says "another rank".
"""

from __future__ import annotations

import os
import shlex
import socket
from dataclasses import dataclass, field
from pathlib import Path

import torch.distributed as dist

TRANSPORT_MARKERS = ("Connection closed by peer", "Connection reset by peer", "Broken pipe", "remote worker",
                     "NCCL", "gloo", "ProcessGroup", "Socket Timeout")


@dataclass(frozen=True)
class RankProcess:
    """Where one rank of the group runs."""

    rank: int
    host: str
    pid: int


_RANKS: tuple[RankProcess, ...] = ()  # this process's group, recorded by record_ranks


def _attempt_key(rank: int) -> str:
    run_id = os.environ.get("TORCHELASTIC_RUN_ID", "none")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return f"leviathan/ranks/{run_id}/{restart}/{rank}"


def record_ranks(rank: int, world: int) -> tuple[RankProcess, ...]:
    """Write this rank's host and pid to the group's store and read every rank's (a collective: all ranks call it
    right after the group is created). Returns them, () where the store is not reachable."""
    global _RANKS
    try:
        store = dist.distributed_c10d._get_default_store()
    except (AttributeError, RuntimeError, ValueError):
        return ()
    store.set(_attempt_key(rank), f"{socket.gethostname()} {os.getpid()}")
    ranks = []
    for r in range(world):
        host, pid = store.get(_attempt_key(r)).decode().split()
        ranks.append(RankProcess(r, host, int(pid)))
    _RANKS = tuple(ranks)
    return _RANKS


def _is_dead(pid: int) -> bool | None:
    """True for a process that is gone or a zombie, False for a live one, None where /proc cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return Path("/proc/self/stat").exists()  # no such process (on a system with /proc)
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")  # the state follows the command name in parentheses


@dataclass(frozen=True)
class PeerFailure:
    """The group lost a rank: which ones (as far as this host can tell) and who reports it."""

    rank: int  # this rank
    world: int
    dead: tuple[RankProcess, ...] = ()
    unknown: bool = False  # no dead rank found here (another host, or no /proc)
    survivors: tuple[int, ...] = field(default_factory=tuple)

    @property
    def reporter(self) -> bool:
        """Whether this rank says it: the lowest surviving rank when the dead ones are known, else every rank."""
        return self.unknown or self.rank == min(self.survivors, default=self.rank)

    def describe(self) -> str:
        if self.unknown:
            return (f"another rank of the {self.world} stopped (killed or crashed; its own output, or torchrun's "
                    f"summary, says which), so rank {self.rank} cannot go on")
        names = ", ".join(f"rank {p.rank} (pid {p.pid} on {p.host})" for p in self.dead)
        verb = "was" if len(self.dead) == 1 else "were"
        return f"{names} of {self.world} {verb} killed or crashed, so the other ranks cannot go on"


def peer_failure(exc: BaseException) -> PeerFailure | None:
    """The ``PeerFailure`` behind ``exc`` in a distributed run, or None when ``exc`` is something else."""
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    if world <= 1:
        return None
    host = socket.gethostname()
    dead = tuple(p for p in _RANKS if p.rank != rank and p.host == host and _is_dead(p.pid))
    transport = isinstance(exc, getattr(dist, "DistError", ())) or (
        isinstance(exc, RuntimeError) and any(m in str(exc) for m in TRANSPORT_MARKERS))
    if not dead and not transport:
        return None
    survivors = tuple(r for r in range(world) if r not in {p.rank for p in dead})
    return PeerFailure(rank=rank, world=world, dead=dead, unknown=not dead, survivors=survivors)


def resume_command(train_args: list[str]) -> str:
    """The torchrun line that resumes: this launch's shape (``LOCAL_WORLD_SIZE`` per node, the node count) and
    ``leviathan train`` with ``train_args`` (which must end in ``--resume auto``)."""
    world = int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    nodes = max(1, world // max(1, local))
    launch = ["torchrun", f"--nproc_per_node={local}"] + ([f"--nnodes={nodes}"] if nodes > 1 else [])
    return shlex.join([*launch, "-m", "leviathan", "train", *train_args])
