"""A device this machine does not have is one line naming it, wherever a Python caller names one (issue 30 round 28).

U576: ``devices.check_device_map('cpu:1')`` passed: torch has one CPU device and quietly reads ``cpu:1`` as it.
U624: ``memory_preflight.check_training_memory(..., device='cuda')`` on a machine without CUDA read no free memory
and returned without a word. Both now say it in ``devices.device_here_problem``'s words, the ones that name a
missing GPU for ``load_adopted`` (U282). A GPU index past the machine's count is missing on every machine, so the
tests need no GPU and hold on one.
"""

from __future__ import annotations

import pytest
import torch

from leviathan import devices, memory_preflight
from leviathan.errors import ArgumentTypeError, ArgumentValueError, UserError

MISSING_GPU = f"cuda:{torch.cuda.device_count()}"


@pytest.mark.parametrize("device_map", ["cpu:1", {"": "cpu:1"}, torch.device("cpu", 2)])
def test_device_map_refuses_a_cpu_index_past_the_one_cpu(device_map):
    with pytest.raises(UserError, match=r"api: device_map(\[''\])? is 'cpu:[12]', but torch has one CPU device"):
        devices.check_device_map(device_map, "api")


@pytest.mark.parametrize("device_map", ["cpu", "cpu:0", {"": "cpu:0"}, "auto"])
def test_device_map_takes_the_cpu(device_map):
    devices.check_device_map(device_map, "api")


@pytest.mark.parametrize("device", [MISSING_GPU, torch.device(MISSING_GPU), "cpu:1"])
def test_training_memory_check_names_a_device_that_is_not_here(device, monkeypatch):
    monkeypatch.setenv(memory_preflight.SKIP, "1")  # skipping the measure does not make the device here
    with pytest.raises(ArgumentValueError, match=rf"check_training_memory: device is '{device}', but .*; pass 'cpu'"):
        memory_preflight.check_training_memory([10], "x", "y", device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_training_memory_check_names_cuda_where_there_is_none():
    with pytest.raises(ArgumentValueError, match="device is 'cuda', but CUDA is not available here"):
        memory_preflight.check_training_memory([10], "x", "y", device="cuda")


@pytest.mark.parametrize("device, error, words", [("tpu", ArgumentValueError, "not a device torch knows"),
                                                 (3, ArgumentTypeError, "must be a device's name or a torch.device")])
def test_training_memory_check_refuses_what_is_no_device(device, error, words):
    with pytest.raises(error, match=words):
        memory_preflight.check_training_memory([10], "x", "y", device=device)


def test_eval_memory_check_names_a_device_that_is_not_here():
    with pytest.raises(ArgumentValueError, match=rf"check_eval_memory: device is '{MISSING_GPU}'"):
        memory_preflight.check_eval_memory(_tiny_config(), 8, "x", "y", device=MISSING_GPU)


@pytest.mark.parametrize("device", [None, "cpu", torch.device("cpu")])
def test_the_cpu_is_here(device):
    memory_preflight.check_training_memory([10], "x", "y", device=device)


def _tiny_config():
    from leviathan.model.config import ModelConfig

    return ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4)
