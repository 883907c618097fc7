"""Untrusted files: nothing leviathan reads can run code.

- A scan of ``src/`` (Python's ``ast``, so multi-line calls count) fails on any way to unpickle arbitrary
  objects or run code from data: pickle-family imports, ``torch.load`` without ``weights_only=True``,
  ``allow_pickle=True``, ``yaml.load`` without a safe loader, ``eval`` / ``exec``, ``trust_remote_code=True``,
  ``use_safetensors=False``. The scanner is itself tested on crafted snippets.
- A crafted pickle in a checkpoint's ``optimizer.pt`` / ``rng.pt`` / ``model.safetensors`` is refused
  with one clear error and its payload never runs.
- An exported plain Llama directory needs no remote code: no ``auto_map``, no code or pickle files, and
  ``AutoModelForCausalLM.from_pretrained(trust_remote_code=False)`` loads it with the same logits.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest
import torch

from leviathan.cli import main
from leviathan import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import REPO, one_error, refingerprint, run_overrides, tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "marshal", "shelve"}
UNSAFE_YAML_LOADERS = {"Loader", "UnsafeLoader", "FullLoader"}


def _dotted(node: ast.AST) -> str:
    """``torch.load`` for Attribute(Name('torch'), 'load'); '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def unsafe_uses(source: str) -> list[str]:
    """``line: what`` for every construct that could unpickle arbitrary objects or execute code."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            found += [f"{line}: import {a.name}" for a in node.names if a.name.split(".")[0] in PICKLE_MODULES]
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")[0]
            if module in PICKLE_MODULES:
                found.append(f"{line}: from {node.module} import ...")
            if module == "torch" and any(a.name == "load" for a in node.names):
                found.append(f"{line}: from torch import load (hides torch.load from this check)")
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name == "torch.load" and not _is_true(_keyword(node, "weights_only")):
                found.append(f"{line}: torch.load without weights_only=True")
            if _is_true(_keyword(node, "allow_pickle")):
                found.append(f"{line}: allow_pickle=True")
            if name in ("yaml.unsafe_load", "yaml.full_load", "yaml.unsafe_load_all", "yaml.full_load_all"):
                found.append(f"{line}: {name}")
            if name in ("yaml.load", "yaml.load_all"):
                loader = _dotted(_keyword(node, "Loader")) if _keyword(node, "Loader") is not None else ""
                # StrictLoader: leviathan.strict_yaml's SafeLoader subclass (test_the_strict_loader_is_a_safe_loader)
                if not loader.split(".")[-1] in ("SafeLoader", "CSafeLoader", "StrictLoader"):
                    found.append(f"{line}: {name} without SafeLoader")
            loader = _keyword(node, "Loader")
            if loader is not None and _dotted(loader).split(".")[-1] in UNSAFE_YAML_LOADERS:
                found.append(f"{line}: Loader={_dotted(loader)}")
            if isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec"):
                found.append(f"{line}: {node.func.id}()")
            if _is_true(_keyword(node, "trust_remote_code")):
                found.append(f"{line}: trust_remote_code=True")
            use_st = _keyword(node, "use_safetensors")
            if isinstance(use_st, ast.Constant) and use_st.value is False:
                found.append(f"{line}: use_safetensors=False")
    return found


@pytest.mark.parametrize("snippet", [
    "import pickle",
    "from pickle import loads",
    "import dill as d",
    "torch.load(path)",
    "torch.load(\n    path,\n    map_location='cpu',\n)",
    "torch.load(path, weights_only=False)",
    "from torch import load",
    "np.load(path, allow_pickle=True)",
    "yaml.load(text)",
    "yaml.load(text, Loader=yaml.Loader)",
    "yaml.unsafe_load(text)",
    "yaml.full_load(text)",
    "exec(code)",
    "eval('1 + 1')",
    "AutoModel.from_pretrained(d, trust_remote_code=True)",
    "AutoModel.from_pretrained(d, use_safetensors=False)",
])
def test_the_scanner_flags_unsafe_code(snippet):
    assert unsafe_uses(snippet), snippet


@pytest.mark.parametrize("snippet", [
    "torch.load(path, map_location='cpu', weights_only=True)",
    "np.load(path)",
    "yaml.safe_load(text)",
    "yaml.load(text, Loader=yaml.SafeLoader)",
    "model.eval()",
    "AutoModel.from_pretrained(d)",
    "json.loads(text)",
])
def test_the_scanner_accepts_safe_code(snippet):
    assert unsafe_uses(snippet) == []


def test_no_unsafe_deserialisation_or_code_execution_in_src():
    files = sorted((REPO / "src" / "leviathan").rglob("*.py"))
    assert len(files) > 30
    found = [f"{p.relative_to(REPO)}:{hit}" for p in files for hit in unsafe_uses(p.read_text())]
    assert found == [], "unsafe loading or code execution in src/:\n" + "\n".join(found)


# ---- crafted checkpoint files -------------------------------------------------------------------
class Payload:
    """Unpickling this creates a file: proof that the pickle's code ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("name", ["optimizer.pt", "rng.pt"])
def test_malicious_pickle_in_a_checkpoint_is_refused_on_resume(capsys, data, run_copy, tmp_path, name):
    marker = tmp_path / "payload-ran"
    step = run_copy / "checkpoints" / ckpt.step_name(4)
    torch.save({"state": {}, "param_groups": [], "extra": Payload(marker)}, step / name)
    refingerprint(step)  # state.json rewritten too: the pickle guard must hold on its own
    before = tree_hashes(run_copy)
    code = main(["train", *run_overrides(data, max_steps=6), "--run-dir", str(run_copy), "--resume", "auto", "--quiet"])
    line = one_error(capsys.readouterr().err)
    assert code == 2
    assert f"'{step / name}' was refused (it references the Python object io.open, which a file of tensors never " \
           f"does): leviathan loads only tensors, numbers and strings and never unpickles arbitrary objects" in line
    assert "delete its step folder (--resume auto then uses the previous one) or pass another checkpoint" in line
    assert "weights_only=False" not in line  # torch's advice to disable the protection is not passed on
    assert not marker.exists()
    assert tree_hashes(run_copy) == before


def test_pickle_disguised_as_safetensors_is_refused(capsys, run_copy, tmp_path):
    marker = tmp_path / "payload-ran"
    step = run_copy / "checkpoints" / ckpt.step_name(4)
    torch.save({"model.norm.weight": Payload(marker)}, step / "model.safetensors")
    refingerprint(step)
    for verb in (["eval", str(step)], ["generate", str(step), "--max-new-tokens", "2"],
                 ["export", str(step), str(tmp_path / "out")]):
        assert main(verb) == 2
        line = one_error(capsys.readouterr().err)
        assert f"'{step / 'model.safetensors'}' is not a readable safetensors file" in line
    assert not marker.exists() and not (tmp_path / "out").exists()


# ---- exports ------------------------------------------------------------------------------------
@pytest.mark.parametrize("plain", [True, False], ids=["plain-llama", "leviathan"])
def test_exported_directory_needs_no_remote_code(capsys, finished_run, tmp_path, plain):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "hf"
    assert main(["export", str(finished_run), str(out), *(["--plain-llama"] if plain else [])]) == 0
    capsys.readouterr()
    config = json.loads((out / "config.json").read_text())
    assert "auto_map" not in config and config["model_type"] == ("llama" if plain else "leviathan")
    suffixes = {p.suffix for p in out.iterdir()}
    assert suffixes <= {".json", ".safetensors", ".txt", ".md"}, suffixes  # no code, no pickles (.bin/.pt/.pkl)
    if not plain:
        import leviathan.hf  # noqa: F401 - registers model_type "leviathan" with the Auto classes (no remote code)
    hf = AutoModelForCausalLM.from_pretrained(str(out), trust_remote_code=False).eval()
    assert type(hf).__name__ == ("LlamaForCausalLM" if plain else "LeviathanForCausalLM")
    model, _ = ckpt.load_model(finished_run)
    x = torch.randint(0, model.config.vocab_size, (2, 16))
    with torch.no_grad():
        ours, theirs = model(x)[0], hf(x).logits
    assert (ours - theirs).abs().max().item() < 1e-4


def test_the_strict_loader_is_a_safe_loader():
    """The one ``yaml.load`` of src/ uses ``StrictLoader`` (duplicate keys refused): a SafeLoader, no Python tags."""
    import yaml

    from leviathan.strict_yaml import StrictLoader, parse

    assert issubclass(StrictLoader, yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError):
        parse("!!python/object/apply:os.system ['true']")


def test_an_exports_config_json_dtype_that_no_weights_load_in_is_named(finished_run, tmp_path):
    """Round 11 (S35): config.json's dtype edited to 'float8_e4m3fn': from_pretrained ended in transformers' TypeError
    "couldn't find storage object Float8_e4m3fnStorage", naming neither the file nor the field."""
    import json

    from transformers import AutoModelForCausalLM

    import leviathan.hf  # noqa: F401 - registers the leviathan model type
    from leviathan.config import ConfigError
    from reliability_support import cli

    hf = tmp_path / "hf"
    assert cli(["export", finished_run, hf]).returncode == 0
    config = json.loads((hf / "config.json").read_text())
    config["dtype"] = "float8_e4m3fn"
    (hf / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="dtype 'float8_e4m3fn' is not a type the weights load in"):
        AutoModelForCausalLM.from_pretrained(str(hf))
