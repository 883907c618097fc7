"""A run's step folders by name: where they live, which files make one complete, and listing them.

    list_checkpoints("runs/tiny")    # [(500, Path(".../checkpoints/step-00000500")), ...], oldest first
    latest_checkpoint("runs/tiny")   # the newest complete one, or None
    step_of("step-00000500")         # 500; None for any name train does not write ("step-000000500", "step-500")

The bottom room of the checkpoint package (imports nothing of leviathan). Footgun: ``list_checkpoints`` silently
skips an incomplete folder, right for choosing what to load and wrong for deciding to go on; that check is
``damage.refuse_damaged_newest``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from .. import json_text

CHECKPOINTS = "checkpoints"
REQUIRED = ("model.safetensors", "optimizer.pt", "state.json", "config.yaml")
STEP_RE = re.compile(r"^step-(\d{8,})$")
FORMAT = 1


def step_name(step: int) -> str:
    """The folder name of step ``step``, a whole number >= 0 (``step_name(2.5)`` was a format error, and ``-1`` named
    ``step--0000001``, a folder no reader takes: issue 30 round 23, U477, U479)."""
    from ..value_rules import check_whole

    return f"step-{check_whole('step_name', 'step', step, 0, fix='pass the optimizer step the checkpoint holds'):08d}"


def step_of(name: str) -> int | None:
    """The step a folder name of train's names (``step_name``'s exact spelling), or None. Every reader of step folder
    names asks this one parser: ``step-\\d{8,}`` also took a user's backup ``step-000000002`` (9 digits; train writes
    8, more only past step 99,999,999) as a step of the run, and keep_last deleted it (issue 30 round 16, C226)."""
    if not isinstance(name, str):  # None was re's "expected string or bytes-like object" (round 24, W565)
        from ..errors import ArgumentTypeError

        raise ArgumentTypeError(f"step_of: name: expected a folder name (a str such as 'step-00000500'), got "
                                f"{type(name).__name__} {name!r:.60}; pass the folder's name (Path.name)")
    match = STEP_RE.match(name)
    if match is None or name != step_name(int(match.group(1))):
        return None
    return int(match.group(1))


# what save_checkpoint names its temporary folders: .tmp-step-XXXXXXXX-PID (being written), .tmp-old-step-XXXXXXXX-PID
# (the step it replaces, moved aside)
_TEMPORARY = re.compile(r"^\.tmp-(?:old-)?(step-\d{8,})-\d+$")


def is_temporary(name: str) -> bool:
    """Whether ``name`` is one save_checkpoint gives its temporary folders (its step spelled as train spells it:
    ``step_of``, the one parser of step names, issue 30 round 16, C226). Here, beside ``step_of``, since both the
    writer's cleanup and the readers' check of misnamed steps (``misnamed``, round 21 P374) ask it."""
    match = _TEMPORARY.match(name)
    return match is not None and step_of(match.group(1)) is not None


def is_complete(path: str | os.PathLike) -> bool:
    """All required files present and state.json parses as an object (``damage._problem``'s rule: a state.json that
    is a JSON list counted as complete here, so the refusal of the damaged newest folder named that same folder as
    "the previous checkpoint" to go on from; issue 30 round 7). A str is a path, as every reader's (it was the raw
    TypeError "unsupported operand type(s) for /": round 24, W569)."""
    from ..value_rules import check_read_path

    check_read_path("is_complete", "path", path, "pass a checkpoints/step-XXXXXXXX folder")
    path = Path(path)
    if not all((path / f).is_file() for f in REQUIRED):
        return False
    try:
        return isinstance(json_text.read_file(path / "state.json"), dict)
    except (OSError, ValueError):
        return False


def list_checkpoints(run_dir: str | os.PathLike, api: str = "list_checkpoints") -> list[tuple[int, Path]]:
    """Complete step folders of a run, oldest first; '' is refused (it would list the current folder's: round 23, U480's
    kind), and so are a run's checkpoints folder and a step folder (``_refuse_inside_run``)."""
    from ..value_rules import check_read_path

    check_read_path(api, "run_dir", run_dir, "pass a run folder `leviathan train` wrote")
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        _refuse_inside_run(Path(run_dir), api)
        return []
    out = []
    for child in root.iterdir():
        step = step_of(child.name)
        if step is not None and child.is_dir() and is_complete(child):
            out.append((step, child))
    return sorted(out)


def step_before(run_dir: str | os.PathLike, step_folder: str | os.PathLike) -> Path | None:
    """The run's newest complete step folder older than ``step_folder`` (None when it holds none): what a reader of
    the run takes once ``step_folder`` is moved out. A fix "move it out (the run's previous step is then used)" was
    given for a run whose only step it was (issue 30 round 35, AH256-AH258)."""
    step = step_of(Path(step_folder).name)
    older = [folder for number, folder in list_checkpoints(run_dir, "step_before") if step is None or number < step]
    return older[-1] if older else None


def latest_checkpoint(run_dir: str | os.PathLike) -> Path | None:
    """The run's newest complete step folder, or None (``list_checkpoints``' rules)."""
    found = list_checkpoints(run_dir, "latest_checkpoint")
    return found[-1][1] if found else None


def _refuse_inside_run(folder: Path, api: str) -> None:
    """UserError when ``folder``, which holds no checkpoints/, is a run's checkpoints folder (it holds step folders
    itself) or one of its step folders: ``latest_checkpoint('run1/checkpoints')`` was None, "no checkpoint", beside
    step-00000004 (issue 30 round 24, W568), where ``find_checkpoint`` takes either. A folder of any other kind (a new
    run's, before its first save) has no checkpoint yet, and stays []."""
    from ..errors import UserError

    try:
        if step_of(folder.name) is not None and (folder / "state.json").exists():
            what, run = "a step folder", folder.parent.parent
        elif folder.is_dir() and any(step_of(child.name) is not None for child in folder.iterdir()):
            what, run = "a run's checkpoints folder", folder.parent
        else:
            return
    except OSError:  # an unreadable folder: the reader that opens it names it
        return
    raise UserError(f"{api}: run_dir {str(folder)!r} is {what}, not a run folder; pass the run folder "
                    f"({str(run)!r}), or find_checkpoint for a step folder itself")
