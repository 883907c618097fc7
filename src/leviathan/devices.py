"""The device a verb runs on, checked in one place for every way one is given (config, command line, Python).

    device_problem("tpu")            # "must be auto, cpu, cuda or cuda:N (N a GPU's index), got 'tpu'"
    device_problem("auto", auto=False)  # lm-eval passes the name to the harness, which knows no "auto"

torch.device raised a RuntimeError traceback for ``eval --device tpu``, ``generate --device cuda:x`` and
``device=cuda:x`` in a config (the config's check let anything starting with "cuda" through), and lm-evaluation-
harness silently ran ``lm-eval --device tpu`` on the CPU (issue 30 round 7).
"""

from __future__ import annotations

import re
from typing import Any

_CUDA = re.compile(r"cuda(:\d{1,4})?")


def device_problem(spec: Any, *, auto: bool = True) -> str | None:
    """Why ``spec`` names no device leviathan runs on (None when it names one): ``cpu``, ``cuda``, ``cuda:N`` and,
    where ``auto``, ``auto`` (cuda when available, else cpu)."""
    names = "auto, cpu, cuda or cuda:N" if auto else "cpu, cuda or cuda:N"
    if isinstance(spec, str) and (spec == "cpu" or (auto and spec == "auto") or _CUDA.fullmatch(spec)):
        return None
    return f"must be {names} (N a GPU's index, e.g. cuda:0), got {spec!r}"
