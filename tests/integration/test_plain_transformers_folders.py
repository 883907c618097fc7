"""Every kind of folder the package writes, handed to transformers alone (issue 31, done-when: "plain transformers
refuses or correctly loads every folder the package writes").

The kinds, built here at tiny sizes: a run folder and its step folder (``leviathan train``); ``leviathan export``
with and without ``--plain-llama``; ``export.to_hf`` and ``export.to_plain_llama`` of native models with each
generator option (``generator_init=table_rms``, ``generator_center``, ``embedding_norm``,
``generator_form=khronos``) and of a dense_tied one; ``LeviathanForCausalLM.save_pretrained``; an adopted Llama's
``save_pretrained`` (un-baked, with each option), ``bake_adopted``, ``to_original(...).save_pretrained`` and the
folder of a model adopted with ``fit=``; and what transformers itself writes when it re-saves an adopted folder.

One subprocess that never imports leviathan calls ``AutoModelForCausalLM.from_pretrained(folder)``, with and without
``trust_remote_code``. A folder of ``LOADS`` must load as its class with the package's fp32 logits (max abs
difference < 1e-4); a folder of ``REFUSED`` must raise, its message naming what is wrong. Footgun this guards: a
folder that loads with a random tensor (an adopted folder did before issue 31, logits off by 1.86) passes any check
that only asks whether it loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.cli import main  # noqa: E402
from leviathan.hf import Fit, LeviathanConfig, LeviathanForCausalLM, adopt, bake_adopted, to_original  # noqa: E402
from leviathan.hf import export  # noqa: E402
from leviathan.model.config import ModelConfig  # noqa: E402
from leviathan.model.llama import CausalLM  # noqa: E402
from test_train import make_data, tiny_overrides  # noqa: E402

pytestmark = pytest.mark.usefixtures("single_thread")

V, D = 300, 32
GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
NATIVE_GEN = dict(generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)
OPTIONS = {"reference": {}, "table_rms": {"generator_init": "table_rms"}, "center": {"generator_center": True},
           "norm": {"embedding_norm": True}, "khronos": {"generator_form": "khronos"}}
ADOPT_OPTIONS = {"reference": {}, "table_rms-center": {"init": "table_rms", "center": True},
                 "norm-khronos": {"norm": True, "form": "khronos"}}


def nudged(model):
    """Every parameter moved off its initialisation, so a tensor left at init on load shows in the logits."""
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.05)
    return model.eval()


def llama_config():
    return transformers.LlamaConfig(vocab_size=V, hidden_size=D, intermediate_size=64, num_hidden_layers=1,
                                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)


class Folders:
    """The folders and, for those that must load, the package's logits on fixed ids."""

    def __init__(self, root: Path):
        self.root = root
        self.loads: dict[str, str] = {}  # folder name -> the class transformers must build
        self.refused: dict[str, str] = {}  # folder name -> a word its error must contain

    def expect(self, name: str, cls: str, logits: torch.Tensor, ids: torch.Tensor) -> None:
        torch.save({"ids": ids, "logits": logits.detach().float()}, self.root / f"{name}.expected.pt")
        self.loads[name] = cls

    def native(self, name: str, model: CausalLM, cls: str = "LlamaForCausalLM") -> None:
        ids = torch.randint(0, model.config.vocab_size, (2, 9), generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            self.expect(name, cls, model.eval()(ids)[0], ids)

    def adopted(self, name: str, model, cls: str = "LlamaForCausalLM") -> None:
        ids = torch.randint(0, V, (2, 9), generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            self.expect(name, cls, model.eval()(ids).logits, ids)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> Folders:
    from leviathan import checkpoint as ckpt

    root = tmp_path_factory.mktemp("folders")
    f = Folders(root)
    # the command line: a run, its step folder, both exports
    data = make_data(tmp_path_factory.mktemp("data"))
    assert main(["train", *tiny_overrides(data, max_steps=2, checkpoint_interval=2, eval_interval=2,
                                          **{"model.embedding": "leviathan"}), "--run-dir", str(root / "run"),
                 "--quiet"]) == 0
    assert main(["export", str(root / "run"), str(root / "cli-export")]) == 0
    assert main(["export", str(root / "run"), str(root / "cli-export-plain"), "--plain-llama"]) == 0
    f.refused.update({"run": "run", "run/checkpoints/step-00000002": "step-00000002", "cli-export": "leviathan"})
    f.native("cli-export-plain", ckpt.load_model(root / "run")[0])
    # the Python API's exports of native models: every generator option, and a tied table
    for option, extra in {**OPTIONS, "dense_tied": {"embedding": "dense_tied"}}.items():
        torch.manual_seed(0)
        model = nudged(CausalLM(ModelConfig(vocab_size=V, hidden_size=D, num_hidden_layers=1, num_attention_heads=4,
                                            intermediate_size=64, max_position_embeddings=64,
                                            **{"embedding": "leviathan", **NATIVE_GEN, **extra})))
        export.to_hf(model, root / f"to_hf-{option}")
        f.refused[f"to_hf-{option}"] = "leviathan"
        export.to_plain_llama(model, root / f"to_plain_llama-{option}")
        f.native(f"to_plain_llama-{option}", model)
    torch.manual_seed(0)
    LeviathanForCausalLM(LeviathanConfig(vocab_size=V, hidden_size=D, num_hidden_layers=1, num_attention_heads=4,
                                         max_position_embeddings=64, **NATIVE_GEN)).save_pretrained(root / "hf-model")
    f.refused["hf-model"] = "leviathan"
    # adoption: un-baked with each option, baked, the original class in memory, after a fit
    for option, settings in ADOPT_OPTIONS.items():
        torch.manual_seed(0)
        model = nudged(adopt(llama_config(), **GEN, **settings))
        model.save_pretrained(root / f"adopted-{option}")
        f.adopted(f"adopted-{option}", model)
        bake_adopted(model, root / f"baked-{option}")
        f.adopted(f"baked-{option}", model)
        to_original(model).save_pretrained(root / f"to_original-{option}")
        f.adopted(f"to_original-{option}", model)
    torch.manual_seed(0)
    trained = nudged(transformers.LlamaForCausalLM(llama_config()))
    fitted = adopt(trained, fit=Fit(steps=5), **GEN)
    fitted.save_pretrained(root / "adopted-fit")
    f.adopted("adopted-fit", fitted)
    # transformers' own re-save of an adopted folder (made in the subprocess): the table model, same logits
    f.loads["resaved"] = "LlamaForCausalLM"
    torch.save(torch.load(root / "adopted-reference.expected.pt"), root / "resaved.expected.pt")
    return f


LOADER = textwrap.dedent("""
    import json, sys, torch, transformers
    from transformers import AutoModelForCausalLM
    root, names = sys.argv[1], json.loads(sys.argv[2])
    # transformers alone re-saves an adopted folder it loaded (config.json keeps leviathan_generator)
    AutoModelForCausalLM.from_pretrained(root + "/adopted-reference").save_pretrained(root + "/resaved")
    out = {}
    for name in names:
        for remote in (False, True):
            key = name + (" trust_remote_code" if remote else "")
            try:
                model = AutoModelForCausalLM.from_pretrained(root + "/" + name, trust_remote_code=remote).eval()
            except Exception as e:
                out[key] = {"refused": type(e).__name__ + ": " + str(e)}
                continue
            try:
                expected = torch.load(root + "/" + name + ".expected.pt")
            except FileNotFoundError:
                out[key] = {"class": type(model).__name__, "diff": None}
                continue
            with torch.no_grad():
                diff = (model.float()(expected["ids"]).logits - expected["logits"]).abs().max().item()
            out[key] = {"class": type(model).__name__, "diff": diff}
    assert not any(m.startswith("leviathan") for m in sys.modules), "leviathan was imported"
    print(json.dumps(out))
""")


def test_transformers_alone_loads_each_folder_correctly_or_refuses_it(folders):
    names = sorted(folders.loads) + sorted(folders.refused)
    result = subprocess.run([sys.executable, "-c", LOADER, str(folders.root), json.dumps(names)],
                            capture_output=True, text=True, timeout=600,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})  # threads stall on a busy machine
    print(result.stdout)  # the outcome per folder, for -s
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    for name in names:
        for key in (name, name + " trust_remote_code"):
            got = outcome[key]
            if name in folders.loads:
                assert "refused" not in got, (key, got)
                assert got["class"] == folders.loads[name], (key, got)
                assert got["diff"] is not None and got["diff"] < 1e-4, (key, got)  # never a random tensor
            else:
                assert "refused" in got, (key, got)  # loaded what is not a transformers model: never
                assert folders.refused[name] in got["refused"], (key, got)


def test_the_catalogue_covers_every_kind(folders):
    """The kinds the module docstring names are all built (a kind dropped from the fixture fails here)."""
    kinds = {name.split("-")[0].split("/")[0] for name in [*folders.loads, *folders.refused]}
    assert kinds == {"run", "cli", "to_hf", "to_plain_llama", "hf", "adopted", "baked", "to_original", "resaved"}
    assert {f"to_plain_llama-{o}" for o in OPTIONS} <= set(folders.loads)
    assert {f"adopted-{o}" for o in ADOPT_OPTIONS} | {"adopted-fit"} <= set(folders.loads)
