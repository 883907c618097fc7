"""The settings of ``scripts/gpu_check.sh`` (its ``GPU_CHECK_*`` environment values), checked in one call before any
stage runs: ``gpu_check.py claim``, the script's first Python step.

The footgun: bash took them as they came. ``GPU_CHECK_BUDGET_S=abc`` was bash's "abc: unbound variable" and 1e3
"value too great for base", after which the setup stage ran anyway; -5 ran every stage as "SKIPPED: only -212s left
of the -5s budget"; ``GPU_CHECK_DTYPE=fp16`` and ``GPU_CHECK_DEVICE=tpu`` started each stage to die on argparse, the
report saying only "FAIL (rc 2)" (issue 30 round 25, X20-X23). An empty value is an unset one (the script's
``${VAR:-default}``).
"""

from __future__ import annotations

import os
from typing import Mapping

BUDGET_RANGE = (1, 86_400)  # whole seconds; the script's arithmetic is bash's, integers only
SWITCHES = ("GPU_CHECK_QUICK", "GPU_CHECK_NO_COMPILE", "GPU_CHECK_SKIP_INSTALL")


def settings_problem(environ: Mapping[str, str]) -> str | None:
    """The first ``GPU_CHECK_*`` setting no stage can run with, as "<setting and value> <what it must be>"; None when
    every one is usable."""
    from leviathan.devices import device_problem

    budget = environ.get("GPU_CHECK_BUDGET_S", "")
    low, high = BUDGET_RANGE
    if budget and not (budget.isascii() and budget.isdigit() and low <= int(budget) <= high):
        return f"GPU_CHECK_BUDGET_S={budget!r} is not a whole number of seconds from {low} to {high:,} (default 450)"
    if budget and budget != str(int(budget)):  # bash reads 060 as octal 48 and 09 as an error (round 26, P22, P23)
        return f"GPU_CHECK_BUDGET_S={budget!r} starts with a 0, which bash's arithmetic reads as octal; write it as " \
               f"{int(budget)}"
    dtype = environ.get("GPU_CHECK_DTYPE", "")
    if dtype and dtype not in ("bf16", "fp32"):
        return f"GPU_CHECK_DTYPE={dtype!r} is not an autocast dtype of the check: bf16 (default) or fp32"
    device = environ.get("GPU_CHECK_DEVICE", "")
    if device and (problem := device_problem(device, auto=False)) is not None:
        return f"GPU_CHECK_DEVICE={device!r}: {problem}"
    for name in SWITCHES:
        if environ.get(name, "") not in ("", "0", "1"):
            return f"{name}={environ[name]!r} is not a switch: 1 (on) or 0 (off, the default)"
    return _venv_problem(environ.get("GPU_CHECK_VENV", ""))


def _venv_problem(venv: str) -> str | None:
    """GPU_CHECK_VENV names a virtual environment to use (its bin/python there) or a place with nothing yet, where
    the check makes one: `python3 -m venv` over a user's folder wrote its pyvenv.cfg over the user's own and bin/,
    lib/ among the user's files (issue 30 round 26, P27, P28). gpu_check.sh makes the path absolute first."""
    if not venv:
        return None
    if not os.path.lexists(venv) or os.access(os.path.join(venv, "bin", "python"), os.X_OK):
        return None
    if os.path.isdir(venv) and not os.listdir(venv):
        return None  # an empty folder: the venv is made in it
    return (f"GPU_CHECK_VENV={venv!r} is no virtual environment (no bin/python), and the check would make one over "
            f"what is there; name an existing venv or a new folder")


def check_settings(environ: Mapping[str, str] = os.environ) -> None:
    """UserError naming the first unusable ``GPU_CHECK_*`` setting (``settings_problem``), before anything runs."""
    from leviathan.errors import UserError

    problem = settings_problem(environ)
    if problem is not None:
        raise UserError(f"{problem}; set it to one, or unset it; nothing was run")
