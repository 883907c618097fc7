"""A device this machine lacks is refused with a fix spelt as the user gave the device (issue 30 round 26, P33).

``generate r1 --device cuda`` (and ``eval``) on a CPU-only torch said "device='cuda:0' but CUDA is not available here;
use device=cpu or device=auto": a config override these verbs take none of, and 'cuda:0' where 'cuda' was typed.
``train.distributed.resolve_device`` now names the option it was given by (``devices.unavailable_line``): "--device
cpu" for the verbs, "device=cpu" for ``train``'s setting; ``lm-eval --device cuda``, whose option takes no auto, was
the harness API's "device is 'cuda' ...; use cpu".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

from leviathan.errors import UserError  # noqa: E402
from leviathan.train.distributed import resolve_device  # noqa: E402

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")


@pytest.mark.parametrize("verb, device", [("generate", "cuda"), ("eval", "cuda:0")])
def test_verbs_name_their_device_option(tmp_path, verb, device):
    (tmp_path / "r1").mkdir()
    line = cli_error([verb, "r1", "--device", device], cwd=tmp_path)
    assert f"--device is {device!r}, but CUDA is not available here; use --device cpu, or --device auto" in line, line
    assert "device=" not in line, line


def test_lm_eval_names_only_the_values_its_option_takes(tmp_path):
    (tmp_path / "r1").mkdir()
    line = cli_error(["lm-eval", "r1", "--device", "cuda"], cwd=tmp_path)
    assert line.endswith("--device is 'cuda', but CUDA is not available here; use --device cpu"), line


def test_the_config_setting_keeps_its_own_spelling():
    with pytest.raises(UserError, match=r"^device is 'cuda', but CUDA is not available here; use device=cpu, or "
                                        r"device=auto"):
        resolve_device("cuda")
