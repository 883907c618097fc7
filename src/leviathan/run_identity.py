"""A run's identity: a random id made when its run folder is first written, recorded in ``run.json`` and carried by
every step folder's state.json and every line of its metrics.jsonl (issue 30 round 14, A156, A157, A239).

    identity = settle_identity(run_dir, source_step, source_id)  # what run.json says for this session (rank 0)
    write_identity(run_dir, identity)                             # atomically, when it changed
    refuse_foreign_step(step_dir, step_id, fix)                   # a step of another run in its checkpoints/: UserError
    problem = train.metrics.foreign_metrics(run_dir)              # metrics.jsonl of another run: why, or None

Before, a whole step folder copied in from another run of the same shape (``cp -a rb/checkpoints/step-00000004
X/checkpoints/``) was resumed, evaluated and exported as X's own (its files agree with its own state.json, so the
companion check had nothing to say), and two runs' metrics.jsonl swapped in a sweep folder made rows of the wrong
curves. Now a step folder or a metrics line that names another run than the folder it lies in is refused, naming the
step (or file), both ids and the fix.

Rules:
- A fresh run gets a new id (``uuid4``). A resume of the run's own step keeps the run's id (a run folder without
  run.json, written before ids, takes its step's id, or a new one). A fork (``--resume OTHER/checkpoints/step-N`` into
  a new run folder, ``train.branch``) gets its own id and records the run and step it forked from.
- Old folders read as before: no run.json, or a step or line without ``run_id``, means no check.
- Rank 0 decides and writes (run.json, state.json, metrics.jsonl); other ranks only read.
Footgun (known limit): a copied run folder keeps its id, so steps moved between a run and its copy are not told
apart: up to the copy they are one run.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from . import json_text

RUN_FILE = "run.json"
FORMAT = 1
_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class RunIdentity:
    """run.json: the run's id and, for a fork, the id of the run it forked from (None when that step had none) and
    the step folder it continued from."""

    run_id: str
    forked_from: str | None = None
    fork_step: str | None = None
    forked: bool = False


def is_run_id(value: object) -> bool:
    """Whether ``value`` is a run id as ``new_run_id`` makes them (32 lowercase hex digits)."""
    return isinstance(value, str) and bool(_ID.match(value))


def new_run_id() -> str:
    return uuid.uuid4().hex


def read_identity(run_dir: str | os.PathLike) -> RunIdentity | None:
    """The run folder's run.json (None when it has none: a folder written before ids); a damaged one is a UserError,
    as is a ``run_dir`` that is not a path (pathlib's raw TypeError before, issue 30 round 25, Y370)."""
    from .value_rules import check_read_path

    check_read_path("read_identity", "run_dir", run_dir, "pass the run folder")
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        return None
    fix = "restore the file from a copy, or delete it (the run is then read as one written before run ids)"
    try:
        raw = json_text.read_file(path, object_pairs_hook=json_text.no_repeats)  # a key twice (round 29's kind)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UserError(f"{str(path)!r} is not readable JSON ({e}); {fix}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or not is_run_id(raw.get("run_id")):
        raise UserError(f"{str(path)!r} is not a run's identity (expected format {FORMAT} and a run_id of 32 hex "
                        f"digits); {fix}")
    fork = raw.get("forked_from")
    if fork is not None and not (isinstance(fork, dict) and (fork.get("run_id") is None or is_run_id(fork["run_id"]))
                                 and isinstance(fork.get("step"), str)):
        raise UserError(f"{str(path)!r}: field 'forked_from' is not {{run_id, step}} of the run it forked from; {fix}")
    return RunIdentity(raw["run_id"], fork and fork["run_id"], fork and fork["step"], fork is not None)


def write_identity(run_dir: str | os.PathLike, identity: RunIdentity) -> None:
    """Write run.json atomically (rank 0), unless it already says ``identity``. An ``identity`` that ``read_identity``
    would refuse (``_identity_problem``) is a UserError naming the argument, nothing written: ``RunIdentity('abc')``
    was written, and the run folder then refused as damaged (issue 30 round 26, Q388's kind). A ``run_dir`` typed
    with a last '..' names the folder above, and run.json was written among the user's files (round 29, W620): it is
    refused as ``write_marker`` refuses it (``empty_paths.refuse_folder_above``)."""
    from .empty_paths import refuse_folder_above
    from .io import atomic_write_json
    from .value_rules import api_check

    refuse_folder_above(run_dir, "write_identity: run_dir")
    api_check("write_identity", "identity", _identity_problem(identity),
              "pass RunIdentity(new_run_id()) (a fork: forked_from a run id or None, fork_step the step folder's name)")
    if read_identity(run_dir) == identity:
        return
    raw: dict = {"format": FORMAT, "run_id": identity.run_id}
    if identity.forked:
        raw["forked_from"] = {"run_id": identity.forked_from, "step": identity.fork_step}
    atomic_write_json(Path(run_dir) / RUN_FILE, raw)


def _identity_problem(identity: object) -> str | None:
    """Why ``identity`` is not one ``read_identity`` takes back from run.json (None: it is)."""
    if not isinstance(identity, RunIdentity):
        return f"expected a RunIdentity, got {type(identity).__name__} {identity!r:.40}"
    if not is_run_id(identity.run_id):
        return f"run_id {identity.run_id!r:.40} is not a run id (32 lowercase hex digits)"
    if identity.forked and not (identity.forked_from is None or is_run_id(identity.forked_from)):
        return f"forked_from {identity.forked_from!r:.40} is not a run id (32 lowercase hex digits) or None"
    if identity.forked and not isinstance(identity.fork_step, str):
        return f"fork_step {identity.fork_step!r:.40} is not the name of the step folder forked from"
    return None


def settle_identity(run_dir: Path, source: Path | None, source_id: str | None) -> RunIdentity:
    """What run.json says for a session of ``run_dir`` that continues from step folder ``source`` (None: a fresh
    start) whose state.json records ``source_id`` (see the module docstring's rules)."""
    current = read_identity(run_dir)
    home = _run_folder(source) if source is not None else None
    fork = source is not None and not (home is not None and _same(home, run_dir))  # a step of elsewhere
    if current is not None:
        if fork and not current.forked:  # a run killed before its first checkpoint, then forked into
            return RunIdentity(current.run_id, source_id, str(Path(source).absolute()), True)
        return current
    if fork:
        return RunIdentity(new_run_id(), source_id, str(Path(source).absolute()), True)
    return RunIdentity(source_id if source is not None and source_id else new_run_id())


def refuse_foreign_step(step_dir: Path, step_id: str | None, fix: str) -> None:
    """UserError when step folder ``step_dir`` lies in a run folder's checkpoints/ and records another run id than
    that run folder's run.json (a folder without either is not checked)."""
    run_dir = _run_folder(step_dir)
    if step_id is None or run_dir is None:
        return
    own = read_identity(run_dir)
    if own is None or own.run_id == step_id:
        return
    if _recorded_ids(run_dir) == {step_id}:  # every step and log line says step_id: run.json is the odd one (G257)
        raise UserError(f"{str(run_dir / RUN_FILE)!r} records run_id {own.run_id}, but every step folder in "
                        f"{str(run_dir / 'checkpoints')!r} and every line of its metrics.jsonl record {step_id}: "
                        f"run.json was edited or copied from another run; restore it from a copy, or write "
                        f"{{\"format\": {FORMAT}, \"run_id\": \"{step_id}\"}} into it")
    raise UserError(f"step folder {str(step_dir)!r} belongs to another run (run_id {step_id} in its state.json) than "
                    f"run folder {str(run_dir)!r} (run_id {own.run_id} in its {RUN_FILE}): it was copied in from "
                    f"another run; {fix}")


def _recorded_ids(run_dir: Path) -> set[str]:
    """The run ids that ``run_dir``'s step folders (their state.json) and metrics.jsonl lines record, read quietly
    (an unreadable file adds nothing). When they all agree and run.json alone differs, run.json is what changed: an
    edited run.json was blamed on the newest step folder, "copied in from another run; move it out", a fix that moves
    every step of the run out (issue 30 round 18, G257)."""
    from .jsonl import read_json_lines

    found: set[str] = set()
    for state in sorted(Path(run_dir, "checkpoints").glob("step-*/state.json")):
        try:
            raw = json_text.read_file(state)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        found.add(raw.get("run_id") if isinstance(raw, dict) else None)
    try:
        lines = read_json_lines(Path(run_dir, "metrics.jsonl"))[0] if Path(run_dir, "metrics.jsonl").is_file() else []
    except (OSError, UserError):
        lines = []
    found.update(d.get("run_id") for _, d in lines if isinstance(d, dict))
    return {i for i in found if i is not None}  # a step or line written before run ids records none


def quiet_identity(run_dir: Path) -> RunIdentity | None:
    """``read_identity``, or None where run.json cannot be read (a neighbour looked at in passing)."""
    try:
        return read_identity(run_dir)
    except UserError:
        return None


def _run_folder(step_dir: Path) -> Path | None:
    """The run folder a step folder lies in (``RUN/checkpoints/step-N``), or None."""
    step_dir = Path(step_dir)
    return step_dir.parent.parent if step_dir.parent.name == "checkpoints" else None


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)
