"""Training that cannot fit this machine's memory is refused in one line before any model is built.

    check_training_memory([params_a, params_b], "--preset paper-1.2b", "a smaller --preset (cpu-small, ...)")

`demo --preset paper-1.2b` on a 23 GB, 2-core machine built the model until the allocator's RuntimeError traceback
under a memory limit (issue 30 round 25, X70), and without one grew to 21 GB until the kernel's out-of-memory killer
ended it, exit 137, nothing said (X71). The estimate is a floor: each parameter's fp32 weight, gradient and the two
AdamW moments (16 bytes), activations and the data not counted; models trained at the same time add up. It is held
against what this process may still take: ``MemAvailable`` of /proc/meminfo and, under ``ulimit -v``
(RLIMIT_AS), the limit less the address space already in use. Where neither is known (not Linux) nothing is
refused. ``LEVIATHAN_SKIP_MEMORY_CHECK=1`` skips the check for a user who knows better (swap, memory freed later).
Footgun: only host memory is checked: a model trained on a GPU is the caller's to leave out.
"""

from __future__ import annotations

import os

from .errors import UserError

BYTES_PER_PARAMETER = 16  # fp32 weight + gradient + AdamW's two moments
SKIP = "LEVIATHAN_SKIP_MEMORY_CHECK"


def _kib_field(path: str, name: str) -> int | None:
    """A ``Name:  N kB`` field of a /proc file, in bytes; None where the file or the field is not there."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_bytes() -> int | None:
    """What this process may still allocate: MemAvailable, and under RLIMIT_AS the limit less the address space in
    use, whichever is smaller; None where neither is known."""
    found = [b for b in [_kib_field("/proc/meminfo", "MemAvailable")] if b is not None]
    try:
        import resource

        soft, unlimited = resource.getrlimit(resource.RLIMIT_AS)[0], resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):  # not a Unix
        soft = unlimited = -1
    used = _kib_field("/proc/self/status", "VmSize")
    if soft != unlimited and used is not None:
        found.append(max(0, soft - used))
    return min(found) if found else None


def _skipped() -> bool:
    """Whether ``LEVIATHAN_SKIP_MEMORY_CHECK`` asks to skip the check: 1 skips, unset, empty or 0 checks; any other
    value is refused, for ``=false`` was read as "skip" and the demo it meant to guard ran into the allocator's
    traceback (issue 30 round 26, P17)."""
    value = os.environ.get(SKIP, "").strip()
    if value not in ("", "0", "1"):
        raise UserError(f"{SKIP}={value!r} is neither 1 (skip the memory check) nor 0 (check); set it to 1 or 0, or "
                        f"unset it")
    return value == "1"


def check_training_memory(parameters: list[int], what: str, fix: str) -> None:
    """UserError when training models of ``parameters`` (each a count; all held at once) needs more memory than
    ``available_bytes``; ``what`` names the setting that sized them, ``fix`` the smaller choice."""
    if _skipped():
        return
    needed = sum(parameters) * BYTES_PER_PARAMETER
    free = available_bytes()
    if free is None or needed <= free:
        return
    raise UserError(f"{what}: training {' + '.join(f'{p:,}' for p in parameters)} parameters needs at least "
                    f"{needed / 2**30:,.1f} GiB (weights, gradients and AdamW state, {BYTES_PER_PARAMETER} bytes a "
                    f"parameter, activations not counted), more than the {free / 2**30:,.1f} GiB this machine has "
                    f"available now (MemAvailable, ulimit -v); nothing was built; use {fix}, or set {SKIP}=1 to "
                    f"train anyway")
