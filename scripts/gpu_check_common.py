"""Shared helpers of the GPU check (``scripts/gpu_check.py``): paths, stage names, timing, JSON files, the device."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
STAGES = ("setup", "gpu-tests", "fsdp", "bench")
STAGE_TITLES = {"setup": "setup (python, torch, install)", "gpu-tests": "GPU tests (pytest -m gpu tests/gpu)",
                "fsdp": "FSDP2 smoke (torchrun, 2 ranks on 2+ GPUs, + resume; fully_shard in process)",
                "bench": "training step time, leviathan / dense_tied (eager, compiled)"}


def _now() -> float:
    return time.perf_counter()


def _write_json(path: str | os.PathLike | None, obj: dict) -> None:
    if not path:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str))
    os.replace(tmp, path)


def _short_error(e: BaseException, limit: int = 300) -> str:
    text = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= limit else text[:limit] + "..."


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


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
