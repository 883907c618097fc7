"""A full disk at every write site of a checkpoint, a prepare and an export ends in one line, exit status 2,
and leaves nothing half-written that a later command would take as valid.

No mount is needed: each write function is replaced by one that fails the way the real one does on a full
disk. Python and numpy raise ``OSError(ENOSPC)``; ``torch.save`` raises a ``RuntimeError`` without an errno
("unexpected pos ..."), and safetensors its ``SafetensorError`` with the OS error inside the text
(``leviathan.storage`` turns both back into OSErrors).
"""

from __future__ import annotations

import errno
import importlib
import os
import pathlib
import sys
from pathlib import Path

import pytest
import torch
from safetensors import SafetensorError

from leviathan import storage
from leviathan.cli import main
from leviathan.train import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error, tree_hashes, write_corpus  # noqa: E402
from test_bad_input import resume  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

FULL = "no space left on device (the disk is full, or out of inodes: `df -h`, `df -i`); free disk space"


def enospc(path) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def safetensors_full(*args, **kwargs):
    raise SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space '
                          'left on device" })')


def torch_full(*args, **kwargs):
    raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")


def fails(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    return one_error(err)


def _fail_path_write(monkeypatch, name: str) -> None:
    real = pathlib.Path.write_text

    def write_text(self, *args, **kwargs):
        if self.name == name:
            raise enospc(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", write_text)


# ---- checkpoints --------------------------------------------------------------------------------
def _weights(monkeypatch, data):
    monkeypatch.setattr(ckpt, "save_file", safetensors_full)


def _optimizer(monkeypatch, data):
    real = torch.save

    def save(obj, f, *args, **kwargs):
        if str(f).endswith("optimizer.pt"):
            torch_full()
        return real(obj, f, *args, **kwargs)

    monkeypatch.setattr(storage, "_disk_full", lambda path: True)
    monkeypatch.setattr(torch, "save", save)


def _config(monkeypatch, data):
    _fail_path_write(monkeypatch, "config.yaml")


def _state(monkeypatch, data):
    _fail_path_write(monkeypatch, "state.json")


def _tokenizer(monkeypatch, data):
    from leviathan.data.tokenizer import load_tokenizer

    def save(self, directory, *args, **kwargs):
        raise enospc(Path(directory) / "tokenizer.json")

    monkeypatch.setattr(type(load_tokenizer(data)), "save_owned", save)  # the verbs' own save (round 18, G47)


@pytest.mark.parametrize("site", [_weights, _optimizer, _config, _tokenizer, _state],
                         ids=["safetensors", "torch.save", "config.yaml", "tokenizer", "state.json"])
def test_full_disk_at_each_checkpoint_write(capsys, data, run_copy, monkeypatch, site):
    before = tree_hashes(run_copy / "checkpoints")
    site(monkeypatch, data)
    line = fails(capsys, *resume(run_copy, data, max_steps=6))
    assert line.startswith("error: could not save the checkpoint of step 6 of run '")
    assert FULL in line and line.endswith("after making room, continue with --resume auto")
    assert tree_hashes(run_copy / "checkpoints") == before  # no .tmp-*, no step-6, the others untouched
    assert ckpt.latest_checkpoint(run_copy).name == "step-00000004"


def test_torch_write_failure_on_a_disk_with_room_is_an_io_error(capsys, data, run_copy, monkeypatch):
    _optimizer(monkeypatch, data)
    monkeypatch.setattr(storage, "_disk_full", lambda path: False)
    line = fails(capsys, *resume(run_copy, data, max_steps=6))
    assert "input/output error (the disk or its file system failed a write)" in line


# ---- prepare ------------------------------------------------------------------------------------
def _prepare_tokens(monkeypatch):
    prep = importlib.import_module("leviathan.data.prepare")  # `from leviathan.data import prepare` may be the function

    def write(self, ids, documents, num_bytes):
        raise enospc(self.path)

    monkeypatch.setattr(prep._SplitWriter, "write", write)
    return "train.bin"


def _prepare_tokenizer(monkeypatch):
    from leviathan.data.tokenizer import load_tokenizer

    def save(self, directory, *args, **kwargs):
        raise enospc(Path(directory) / "tokenizer.json")

    monkeypatch.setattr(type(load_tokenizer("cl100k_base")), "save_owned", save)  # the verbs' own save (G47)
    return "tokenizer.json"


def _prepare_meta(monkeypatch):
    prep = importlib.import_module("leviathan.data.prepare")  # `from leviathan.data import prepare` may be the function

    def failing_open(path, mode="r", *args, **kwargs):
        if Path(path).name == "meta.json" and "w" in mode:
            raise enospc(path)
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(prep, "open", failing_open, raising=False)
    return "meta.json"


@pytest.mark.parametrize("site", [_prepare_tokens, _prepare_tokenizer, _prepare_meta],
                         ids=["token-file", "tokenizer", "meta.json"])
def test_full_disk_at_each_prepare_write(capsys, tmp_path, monkeypatch, site):
    corpus = write_corpus(tmp_path / "corpus", num_docs=5)
    name = site(monkeypatch)
    out = tmp_path / "data"
    line = fails(capsys, "prepare", corpus, "--out", out, "--tokenizer", "cl100k_base", "--no-progress")
    assert f"'{out}' (its {name}, written in the temporary folder '.data.tmp-" in line and f"): {FULL}" in line, line
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder, no lock


# ---- export -------------------------------------------------------------------------------------
def _export_hf(monkeypatch):
    from leviathan.hf.modeling import LeviathanForCausalLM

    monkeypatch.setattr(LeviathanForCausalLM, "save_owned", safetensors_full)  # export's own save (round 18, G244)
    return []


def _export_plain(monkeypatch):
    import huggingface_hub

    def save(tensors, directory, *args, **kwargs):
        raise enospc(Path(directory) / "model.safetensors")

    monkeypatch.setattr(huggingface_hub, "save_torch_state_dict", save)  # imported where it is used
    return ["--plain-llama"]


def _export_tokenizer(monkeypatch):
    from leviathan.hf import export

    def save(tokenizer, directory):
        raise enospc(Path(directory) / "tokenizer.json")

    monkeypatch.setattr(export, "_save_tokenizer", save)
    return []


@pytest.mark.parametrize("site", [_export_hf, _export_plain, _export_tokenizer],
                         ids=["save_pretrained", "plain-llama", "tokenizer"])
def test_full_disk_at_each_export_write(capsys, finished_run, tmp_path, monkeypatch, site):
    extra = site(monkeypatch)
    out = tmp_path / "hf"
    line = fails(capsys, "export", finished_run, out, *extra)
    assert FULL in line
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_storage_oserror_leaves_other_errors_alone():
    assert storage.storage_oserror(RuntimeError("shape mismatch")) is None
    assert storage.storage_oserror(ValueError("os error 28")) is None
    err = storage.storage_oserror(safetensors_error := SafetensorError("IoError(Os { code: 13, kind: "
                                                                        "PermissionDenied })"), "/x")
    assert isinstance(err, OSError) and err.errno == errno.EACCES and err.filename == "/x", safetensors_error


def test_a_torch_write_that_stopped_at_the_size_limit_in_a_folder_is_named_the_limit(tmp_path):
    """Round 14 (B244, checked for every verb): torch.save's failure carries no errno and names the checkpoint's
    temporary folder, not the file; a file in it that stopped at the process's ``ulimit -f`` was judged only when the
    path was that file, so the line said "input/output error; check the disk". A folder holding a file at the limit is
    the size limit (EFBIG), whose fix is raising it."""
    import resource

    folder = tmp_path / ".step.tmp-x"
    folder.mkdir()
    (folder / "optimizer.pt").write_bytes(b"\0" * 200_000)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, hard))
    try:
        err = storage.storage_oserror(RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 "
                                                   "vs 598"), folder)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert err.errno == errno.EFBIG and err.filename == str(folder)
