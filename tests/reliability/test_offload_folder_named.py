"""An ``offload_folder`` that is no folder is one line naming what stands there (issue 30 round 30).

Y64, Y93: ``load_adopted(p, device_map={'model': 'cpu', 'lm_head': 'disk'}, offload_folder=X)`` with X a named pipe or
a regular file ended in ``os.makedirs``' raw "FileExistsError: [Errno 17] File exists" from transformers' disk
offload; Y94 the same through ``LeviathanForCausalLM.from_pretrained``. ``load_keywords._offload_folder`` names the
pipe or the file (and a file above the folder, and a value that is no path), before anything is read; a folder, made
when missing, still takes the offloaded weights.
"""

from __future__ import annotations

import os
import re

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanForCausalLM, load_adopted  # noqa: E402

from test_adopted_load_failures_in_one_line import saves  # noqa: E402,F401

pytestmark = pytest.mark.reliability

OFFLOAD = {"model": "cpu", "lm_head": "disk"}
LOADERS = [(load_adopted, "whole", "load_adopted"),
           (LeviathanForCausalLM.from_pretrained, "native", "LeviathanForCausalLM.from_pretrained")]


def _pipe(path):
    os.mkfifo(path)
    return path


def _file(path):
    path.write_text("mine")
    return path


@pytest.mark.parametrize("load, name, who", LOADERS)
@pytest.mark.parametrize("make, said", [(_pipe, "is a named pipe (FIFO), not a folder"),  # Y64, Y94
                                        (_file, "is a file, not a folder")])  # Y93
def test_an_offload_folder_that_is_no_folder_is_named(saves, tmp_path, load, name, who, make, said):  # noqa: F811
    where = make(tmp_path / "off")
    with pytest.raises(UserError, match=rf"^{who.replace('.', '[.]')}: offload_folder '.*off' {re.escape(said)}; pass a folder "
                                        rf"\(made when missing\) for the offloaded weights, or leave offload_folder "
                                        rf"out$") as e:
        load(saves / name, device_map=OFFLOAD, offload_folder=str(where))
    assert "\n" not in str(e.value)
    if make is _file:
        assert where.read_text() == "mine"


@pytest.mark.parametrize("load, name, who", LOADERS)
def test_an_offload_folder_under_a_file_or_no_path_is_named(saves, tmp_path, load, name, who):  # noqa: F811
    _file(tmp_path / "afile")
    with pytest.raises(UserError, match=r"offload_folder '.*afile/sub' lies under '.*afile', which is a file, not a "
                                        r"folder; pass a folder"):
        load(saves / name, device_map=OFFLOAD, offload_folder=str(tmp_path / "afile" / "sub"))
    with pytest.raises(UserError, match=r"offload_folder=5 is no folder's path; pass a folder"):
        load(saves / name, device_map=OFFLOAD, offload_folder=5)


def test_a_folder_made_when_missing_still_takes_the_offloaded_weights(saves, tmp_path):  # noqa: F811
    ids = torch.randint(0, 300, (2, 9), generator=torch.Generator().manual_seed(1))
    expected = load_adopted(saves / "whole").eval()(ids).logits
    model = load_adopted(saves / "whole", device_map=OFFLOAD, offload_folder=str(tmp_path / "new" / "off"))
    assert torch.equal(model.eval()(ids).logits, expected)


@pytest.mark.parametrize("load, name, who", LOADERS)
@pytest.mark.parametrize("given, said, device_map", [
    ("o\x00x", r"holds a NUL byte \('\\x00', character \d+\), which no file or folder name can hold", OFFLOAD),  # AA5
    ("o\x00", r"holds a NUL byte .*", {"": "disk"}),  # AA536: the whole model on disk
    ("a" * 300, r"its name 'a+…' is 300 bytes, more than the \d+ the file system allows for one name", OFFLOAD),  # AA6, AA509
])
def test_an_offload_folder_no_folder_can_be_named_is_one_line(saves, tmp_path, load, name, who, given, said,  # noqa: F811
                                                              device_map):
    """Round 31: AA5, AA536 (a NUL: os.makedirs' raw "embedded null byte"), AA6, AA509 (300 bytes: its raw "[Errno 36]
    File name too long"), through both loaders."""
    with pytest.raises(UserError, match=rf"^{who.replace('.', '[.]')}: offload_folder '.*' {said}, so no folder can "
                                        rf"have it; pass a folder \(made when missing\) for the offloaded weights, or "
                                        rf"leave offload_folder out$") as e:
        load(saves / name, device_map=device_map, offload_folder=os.path.join(tmp_path, given))
    assert "\n" not in str(e.value) and os.listdir(tmp_path) == []
