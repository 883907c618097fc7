"""Shared helpers of the GPU check (``scripts/gpu_check.py``): paths, stage names, timing, JSON files, the device,
and the output rules the ``leviathan`` verbs follow (issue 30 round 24, V35, V36, V104, V121, V122).

The footgun: these scripts wrote their work folder, ``--json``, ``--md`` and ``$OUT`` files over whatever was there
(a user's notes given as ``--md``; ``--work DIR`` deleted ``DIR/fsdp-run``; ``gpu_check.sh`` began with ``rm -f
*.log env.json`` in the folder ``GPU_CHECK_WORK`` names). Now the work folder (and ``$OUT``) is claimed with
``leviathan.ownership`` (a marker of verb ``gpu_check``, as the verbs mark theirs) before anything is written or
deleted there, and an output file is written only where nothing is, or over an earlier output of the same kind.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Callable


REPO = Path(__file__).resolve().parents[1]
STAGES = ("setup", "gpu-tests", "fsdp", "bench")
VERB = "gpu_check"  # the work folder's marker names it (``leviathan.ownership``)
WHO = "scripts/gpu_check.py"
# what the stages and gpu_check.sh write in the work folder (nothing else there is deleted or written over)
WORK_FILES = (*(f"{s}.status" for s in STAGES), *(f"{s}.log" for s in STAGES), "pip.log", "fsdp-torchrun.log",
              "setup.note", "env.json", "bench.json", "fsdp.json", "pytest.xml", "gpu_check.md", "fsdp-corpus",
              "fsdp-data", "fsdp-run", "venv", "site")
# what the report and gpu_check.sh write in $OUT
OUT_FILES = ("gpu_check.md", "gpu_check.json", "pytest.xml", "gpu_check_logs.txt", "gpu_check_torchrun.log")
STAGE_TITLES = {"setup": "setup (python, torch, install)", "gpu-tests": "GPU tests (pytest -m gpu tests/gpu)",
                "fsdp": "FSDP2 smoke (torchrun, 2 ranks on 2+ GPUs, + resume; fully_shard in process)",
                "bench": "training step time, leviathan / dense_tied (eager, compiled)"}


def _now() -> float:
    return time.perf_counter()


def _write_json(path: str | os.PathLike | None, obj: dict) -> None:
    """``obj`` written atomically to ``path`` (checked first by ``check_output``); nothing when ``path`` is None."""
    from leviathan.io import atomic_write_text

    if not path:
        return
    atomic_write_text(path, json.dumps(obj, indent=2, default=str))


def _looks_ours(folder: Path) -> bool:
    """A work folder an earlier GPU check wrote before it had a marker: a stage status file in its own format."""
    import re

    for stage in STAGES:
        try:
            text = (folder / f"{stage}.status").read_text()[:200] if (folder / f"{stage}.status").is_file() else ""
        except (OSError, UnicodeDecodeError):
            continue
        if re.fullmatch(r"(-?\d+ \d+ \d+|skip .*)\n?", text):
            return True
    return False


def claim_folder(folder: str | os.PathLike, names: tuple[str, ...], flag: str) -> Path:
    """``folder`` (absolute, created if missing) once it is the GPU check's: UserError when it holds a file or
    folder of ``names`` the check did not write (``ownership.check_claim``: no marker of the check lists it), is
    another verb's output, or, not yet claimed, holds anything else (a user's folder: ``alone``); then marked
    (``ownership.mark``). Files added beside the check's later are left alone and never deleted.
    The rmtree of ``DIR/fsdp-run`` and gpu_check.sh's ``rm -f`` run only after this (V36, V104)."""
    from leviathan.errors import UserError, file_above, not_a_folder_there
    from leviathan.ownership import check_claim, mark

    folder = Path(os.path.abspath(folder))
    if os.path.lexists(folder) and not folder.is_dir():
        raise UserError(f"{flag} {str(folder)!r} {not_a_folder_there(folder)}; name a folder for the GPU check's files")
    if (blocker := file_above(folder)) is not None:
        raise UserError(f"{flag} {str(folder)!r} cannot be made: {blocker!r} {not_a_folder_there(blocker)}; choose "
                        f"another {flag}")
    folder.mkdir(parents=True, exist_ok=True)
    # alone: a folder not yet the check's holds nothing else; a user's corpus given as --work / OUT was marked, and
    # prepare then refused it as the GPU check's output (issue 30 round 28, T50, T52)
    check_claim(folder, VERB, names, f"choose another {flag}", legacy=_looks_ours, who=WHO, alone=True)
    mark(folder, VERB, names)
    return folder


LOCK_FIX = "give each check its own work folder (--work, GPU_CHECK_WORK)"


def work_lock(work: Path):
    """``with work_lock(work):`` the work folder's write lock (``leviathan.locking``, as the verbs hold theirs),
    taken after ``claim_folder``: two ``fsdp`` stages in one folder shared ``fsdp-run``, the second ended in
    torchrun's traceback and "continue it with --resume auto", and could rmtree the first's live run (issue 30 round
    25, X74). ``all`` holds it around its stages, which take it again under it (``again``)."""
    from leviathan.locking import folder_lock

    return folder_lock(work, "write the GPU check's files", LOCK_FIX, who=WHO, again=True)


def check_work_unlocked(work: Path, flag: str) -> None:
    """UserError when a live stage process holds ``work``'s lock (``work_lock``): gpu_check.sh's ``claim`` runs this
    before the script deletes the stage files there (X74)."""
    from leviathan.errors import UserError
    from leviathan.locking import held_by_another, lock_path

    held = held_by_another(lock_path(work))
    if held is not None:
        pid, command = held
        who = f"process {pid}" + (f" ({command})" if command else "") if pid is not None else "another process"
        raise UserError(f"{flag} {str(work)!r} is in use: {who} is writing there; nothing was deleted; wait for it to "
                        f"finish or stop it, or {LOCK_FIX}")


def json_with(*keys: str) -> Callable[[Path], bool]:
    """A test of a file: a JSON object holding ``keys`` (an earlier output of one stage)."""
    def test(path: Path) -> bool:
        from leviathan import json_text

        try:
            value = json_text.read_file(path)
        except (OSError, ValueError):
            return False
        return isinstance(value, dict) and set(keys) <= set(value)
    return test


def is_report(path: Path) -> bool:
    """Whether ``path`` is an earlier markdown report of the check."""
    from leviathan.errors import not_regular

    try:
        with open(path, "rb") as f:
            return not_regular(path) is None and f.read(13) == b"# GPU check ("
    except OSError:
        return False


def check_output(path: str | os.PathLike | None, flag: str, earlier: Callable[[Path], bool], what: str) -> None:
    """UserError unless the output file ``path`` may be written, before any work: ``leviathan bench --json``'s rule
    (``result_json.check_target``, round 23 T1, T3), with missing folders above created. ``report --md mynotes.md``
    and ``env --json myenv.json`` wrote over the user's file (V35, V121); ``--json afile/x.json`` was a
    FileExistsError traceback (V122); ``--json ''`` wrote nothing without a word (round 25, X4, X7)."""
    from leviathan.empty_paths import refuse_empty_path
    from leviathan.result_json import check_target

    if path is None:
        return
    refuse_empty_path(path, flag)
    example = "gpu_check.md" if flag == "--md" else "gpu_check.json"  # a file name to suggest in a folder
    check_target(path, flag, earlier, f"{what}, so {WHO}", example, parents=True)


def _short_error(e: BaseException, limit: int = 300) -> str:
    text = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= limit else text[:limit] + "..."


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def check_device(spec: str) -> None:
    """UserError when the device ``spec`` (``cuda``, ``cuda:N``, ``cpu``; its form is checked by the command line) is
    not on this machine (``devices.device_unavailable``), before a stage writes or runs anything: on a CPU-only torch
    the default ``cuda`` ended the bench in an AssertionError traceback and the fsdp stage in a raw exception's text
    after its setup (issue 30 round 25, X17, X18). ``env`` does not call it: it records the environment as it is."""
    from leviathan.devices import device_unavailable
    from leviathan.errors import UserError

    problem = device_unavailable(spec)
    if problem is not None:
        raise UserError(f"--device {problem} (--device cpu --quick rehearses the check), or run it on a machine "
                        f"with the GPU")


def _device(spec: str):
    """``torch.device`` with an explicit index for CUDA (``set_device`` and ``device_id`` reject a bare "cuda")."""
    import torch

    device = torch.device(spec)
    if device.type == "cuda":
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(device)
    return device


def _clip(text: str, limit: int) -> str:
    text = str(text).replace("|", "/").replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."
