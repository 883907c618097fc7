"""Files like the ecosystem's (issue 31, item 4): every file a run, an export and a bake write has the mode of the
user's umask (safetensors alone wrote 0600), every exported folder carries a model card, the repository a LICENSE
that pyproject names, and a bare ``leviathan`` is a usage error.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import torch

from leviathan.cli import main
from test_train import make_data, tiny_overrides

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_data(tmp_path_factory.mktemp("files-data"))


@pytest.fixture
def umask():
    """Set a umask for the test, restore the old one after."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def modes(root: Path) -> dict[str, int]:
    """Relative path -> permission bits of every file and folder under ``root``."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            out[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return out


@pytest.mark.parametrize("mask", [0o022, 0o027], ids=["umask022", "umask027"])
def test_every_file_of_a_run_and_its_exports_has_the_umask_mode(data, tmp_path, umask, mask, capsys):
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import adopt, bake_adopted

    umask(mask)
    run = tmp_path / "run"
    assert main(["train", *tiny_overrides(data, max_steps=2, checkpoint_interval=2, eval_interval=2,
                                          **{"model.embedding": "leviathan"}), "--run-dir", str(run), "--quiet"]) == 0
    assert main(["export", str(run), str(tmp_path / "hf")]) == 0
    assert main(["export", str(run), str(tmp_path / "plain"), "--plain-llama"]) == 0
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2))
    adopted = adopt(llama, seed_dim=4, modes=2, knots=4, rank=2)
    adopted.save_pretrained(tmp_path / "adopted")
    bake_adopted(adopted, tmp_path / "baked")
    file_mode, dir_mode = 0o666 & ~mask, 0o777 & ~mask
    for name in ("run", "hf", "plain", "adopted", "baked"):
        found = modes(tmp_path / name)
        wrong = {p: oct(m) for p, m in found.items()
                 if m != (dir_mode if (tmp_path / name / p).is_dir() else file_mode)}
        assert not wrong, (name, oct(file_mode), wrong)
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == dir_mode  # the atomic folder itself (mkdtemp: 0700)
    assert stat.S_IMODE((tmp_path / "run" / "checkpoints" / "step-00000002" / "model.safetensors").stat().st_mode) \
        == file_mode


def test_exported_folders_carry_a_model_card(data, tmp_path, capsys):
    from transformers import Qwen2Config

    from leviathan.hf import adopt, bake_adopted

    run = tmp_path / "run"
    assert main(["train", *tiny_overrides(data, max_steps=2, checkpoint_interval=2, eval_interval=2,
                                          **{"model.embedding": "leviathan"}), "--run-dir", str(run), "--quiet"]) == 0
    for flag, name in (([], "hf"), (["--plain-llama"], "plain")):
        assert main(["export", str(run), str(tmp_path / name), *flag]) == 0
        card = (tmp_path / name / "README.md").read_text()
        assert card.startswith("---\nlibrary_name: transformers\nlicense: apache-2.0\n")
        for section in ("## Model", "## Training", "## Evaluation", "## How to load"):
            assert section in card, (name, section)
        assert "2 optimizer steps of 2, 512 tokens" in card and "tokenizer bpe:300" in card
        assert "Held-out validation split of `data` at step 2" in card and "loss " in card  # logged at that step
        assert "AutoModelForCausalLM.from_pretrained" in card and "tokenizer.json" in card
        assert ("import leviathan.hf" in card) == (name == "hf")  # the plain folder needs transformers alone
        # transformers alone refuses the leviathan folder with a message that suggests upgrading: the card says why
        assert ("does not recognize this architecture" in card and "--plain-llama" in card) == (name == "hf")
    torch.manual_seed(0)
    model = adopt(Qwen2Config(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                              num_attention_heads=2, num_key_value_heads=2), seed_dim=4, modes=2, knots=4, rank=2)
    bake_adopted(model, tmp_path / "baked")
    card = (tmp_path / "baked" / "README.md").read_text()
    assert "`Qwen2ForCausalLM`" in card and "Not recorded" in card and "## How to load" in card


def test_the_repository_has_a_license_that_pyproject_names():
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"  # the SPDX string (PEP 639); the table form is deprecated
    assert project["license-files"] == ["LICENSE"]


def test_bare_leviathan_prints_usage_and_exits_2():
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-m", "leviathan"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: leviathan") and "error: no verb given" in done.stderr
    assert done.stdout == ""
    helped = subprocess.run([sys.executable, "-m", "leviathan", "--help"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: leviathan")
