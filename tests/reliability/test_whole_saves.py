"""An API ``save_pretrained`` (an adopted model's, ``from_native``'s) is written whole or not at all (issue 30 round 19).

A full disk, ``ulimit -f``, a read-only disk, a 300-byte name or a parent that is a file ended in a raw
SafetensorError/OSError traceback, and the folder was left holding config.json + generation_config.json without
weights, a half-written save that looks like one (J54-J76); Ctrl-C left model.safetensors at mode 0600 (J322).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO  # noqa: E402

_ADOPTED = ("from transformers import LlamaConfig, LlamaForCausalLM\n"
            "from leviathan.hf import adopt\n"
            "model = adopt(LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, "
            "num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)), seed_dim=8, modes=2, knots=8, "
            "rank=4)\n")


def _adopted():
    scope: dict = {}
    exec(_ADOPTED, scope)
    return scope["model"]


def _native(finished_run):
    from leviathan.checkpoint import load_model
    from leviathan.hf.export import from_native

    return from_native(load_model(str(finished_run))[0])


def test_a_save_pretrained_under_a_file_size_limit_is_one_line_and_leaves_nothing(tmp_path):
    """J75, J76: ``(ulimit -f 100; a.save_pretrained('uf/x'))`` raised safetensors' raw "File too large (os error 27)"
    and left uf/x with config.json and generation_config.json, no weights; in a real process under the limit."""
    import resource

    script = _ADOPTED + ("from leviathan.errors import StorageError\n"
                         "try:\n    model.save_pretrained('uf/x')\n"
                         "except StorageError as e:\n    print('caught:', e)\n")
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")},
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (8 * 1024, limit)))
    assert proc.returncode == 0, proc.stderr
    assert "caught: 'uf/x': a file grew past the size limit" in proc.stdout, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("(save_directory)"), proc.stdout
    assert not (tmp_path / "uf").exists()


@pytest.mark.parametrize("kind", ["adopted", "from_native"])
def test_a_save_pretrained_that_cannot_be_made_is_the_verbs_line(finished_run, tmp_path, kind):
    """J63, J64, J69, J70 (and J58, J59: a read-only disk is the same early refusal): a 300-byte name or a parent that
    is a file raised the raw OSError from os.makedirs; each is an ``errors.StorageError`` naming save_directory."""
    from leviathan.errors import StorageError

    model = _adopted() if kind == "adopted" else _native(finished_run)
    (tmp_path / "afile").write_text("a file")
    cases = [(tmp_path / ("n" * 300), "the file name is too long for the file system"),
             (tmp_path / "afile" / "x", "a file is in the way where a folder is expected")]
    for where, said in cases:
        with pytest.raises(StorageError) as caught:
            model.save_pretrained(where)
        assert said in str(caught.value) and str(caught.value).endswith("(save_directory)"), str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("kind", ["adopted", "from_native"])
def test_a_save_pretrained_that_fails_at_its_weights_leaves_no_config_behind(finished_run, tmp_path, monkeypatch,
                                                                             kind):
    """J54, J55 (a full disk: safetensors' SafetensorError after transformers wrote both JSON files) and J322 (Ctrl-C
    in safetensors' write: the weights left at mode 0600): the failed save leaves nothing, and the earlier save in
    the folder stays whole; a save that succeeds has the umask's modes."""
    import transformers.modeling_utils as saving

    from leviathan.errors import StorageError
    from leviathan.io import default_mode

    model, real = (_adopted() if kind == "adopted" else _native(finished_run)), saving.safe_save_file
    model.save_pretrained(tmp_path / "earlier")
    before = {p.name: p.read_bytes() for p in (tmp_path / "earlier").iterdir()}
    for raised in (OSError(28, "No space left on device"), KeyboardInterrupt()):
        def failing(tensors, filename, metadata=None, raised=raised):
            real(tensors, filename, metadata=metadata)
            raise raised

        monkeypatch.setattr(saving, "safe_save_file", failing)
        for where in (tmp_path / "new", tmp_path / "earlier"):
            with pytest.raises(StorageError if isinstance(raised, OSError) else KeyboardInterrupt):
                model.save_pretrained(where)
            assert not (tmp_path / "new").exists()
            assert {p.name: p.read_bytes() for p in (tmp_path / "earlier").iterdir()} == before
    for p in (tmp_path / "earlier").iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == default_mode(), p
