"""Device resolution without a GPU: the CUDA calls are recorded, not made."""

import pytest
import torch

from leviathan.train.distributed import resolve_device


@pytest.mark.parametrize("spec", ["cuda", "auto"])
def test_one_process_cuda_gets_an_explicit_index(spec, monkeypatch):
    """torch.cuda.set_device rejects a bare "cuda" device: a one-process run must pass cuda:N."""
    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)  # resolve_device asks it of a cuda:N (round 26, P33)
    monkeypatch.setattr(torch.cuda, "set_device", lambda d: calls.append(torch.device(d)))
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    device = resolve_device(spec)
    assert device == torch.device("cuda:0") and calls == [torch.device("cuda:0")]
    assert calls[0].index == 0
