"""The generator's options (issue 29) through Hugging Face: save/load, plain-Llama export, adoption, bake-back.

Every option must survive ``save_pretrained`` / ``from_pretrained`` with identical logits (the loader must not
re-run the calibration over loaded tensors: a rescaled W^out or a recomputed center would change them), and a
plain ``LlamaForCausalLM`` export, loaded by transformers alone, must give the native model's logits.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.hf import LeviathanForCausalLM, adopt, bake_adopted, export, load_adopted  # noqa: E402
from leviathan.model.config import ModelConfig  # noqa: E402
from leviathan.model.llama import CausalLM  # noqa: E402

V = 300
OPTIONS = {
    "table_rms": dict(embedding="leviathan", generator_init="table_rms"),
    "center": dict(embedding="leviathan", generator_center=True),
    "norm": dict(embedding="leviathan", embedding_norm=True),
    "khronos": dict(embedding="leviathan", generator_form="khronos"),
    "all": dict(embedding="leviathan", generator_init="table_rms", generator_center=True, embedding_norm=True,
                generator_form="khronos"),
    "untied_norm": dict(embedding="dense_untied", embedding_norm=True),
}


def trained(options: dict, seed: int = 0) -> CausalLM:
    """A tiny model after two AdamW steps, so every option's tensors are off their init."""
    torch.manual_seed(seed)
    model = CausalLM(ModelConfig(vocab_size=V, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                 max_position_embeddings=64, generator_seed_dim=8, generator_modes=2,
                                 generator_knots=8, generator_rank=4, **options))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for step in range(2):
        x = torch.randint(0, V, (2, 12), generator=torch.Generator().manual_seed(step))
        out = logits_of(model(x))
        torch.nn.functional.cross_entropy(out[:, :-1].reshape(-1, V), x[:, 1:].reshape(-1)).backward()
        opt.step()
        opt.zero_grad()
    return model.eval()


def logits_of(out) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    return out[0] if isinstance(out, tuple) else out.logits


def logits(model, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return logits_of(model(x))


X = torch.randint(0, V, (2, 11), generator=torch.Generator().manual_seed(5))


@pytest.mark.parametrize("name", list(OPTIONS))
def test_save_pretrained_round_trip_keeps_every_option(tmp_path, name):
    model = trained(OPTIONS[name])
    hf = export.from_native(model)
    hf.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    for key, value in OPTIONS[name].items():
        assert config[key] == value, key
    loaded = LeviathanForCausalLM.from_pretrained(tmp_path).eval()
    assert torch.equal(logits(loaded, X), logits(model, X))


def test_plain_llama_exports_load_with_transformers_alone(tmp_path):
    dirs, expected = {}, {}
    for name, options in OPTIONS.items():
        model = trained(options, seed=1)
        dirs[name] = str(export.to_plain_llama(model, tmp_path / name))
        expected[name] = logits(model, X)
        torch.save(expected[name], tmp_path / f"{name}.pt")
        config = json.loads((tmp_path / name / "config.json").read_text())
        assert config["architectures"] == ["LlamaForCausalLM"] and "embedding_norm" not in config
    torch.save(X, tmp_path / "x.pt")
    script = textwrap.dedent(f"""
        import sys, torch
        from transformers import LlamaForCausalLM
        x = torch.load({str(tmp_path / 'x.pt')!r})
        for name, root in {dirs!r}.items():
            model, info = LlamaForCausalLM.from_pretrained(root, output_loading_info=True)
            assert not info["missing_keys"] and not info["unexpected_keys"], (name, info)
            with torch.no_grad():
                got = model.eval()(x).logits
            diff = (got - torch.load(root + ".pt")).abs().max().item()
            assert diff < 1e-5, (name, diff)
            print(name, diff)
        assert not any(m.startswith("leviathan") for m in sys.modules), "leviathan was imported"
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in OPTIONS:
        assert f"\n{name} " in "\n" + result.stdout


@pytest.mark.parametrize("settings", [dict(init="table_rms", center=True), dict(norm=True, form="khronos")],
                         ids=["table_rms-center", "norm-khronos"])
def test_adoption_honours_the_options_through_save_load_and_bake(tmp_path, settings):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    model = adopt(config, seed_dim=8, modes=2, knots=8, rank=4, **settings)
    gen = model.get_input_embeddings()
    assert gen.init == settings.get("init", "reference") and gen.form == settings.get("form", "paper")
    assert (gen.center is not None) == settings.get("center", False)
    assert (gen.out_norm is not None) == settings.get("norm", False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model(X, labels=X).loss.backward()
    opt.step()
    model.eval()
    expected = logits(model, X)
    model.save_pretrained(tmp_path / "adopted")
    reloaded = load_adopted(tmp_path / "adopted").eval()
    assert torch.equal(logits(reloaded, X), expected)  # the loader did not re-calibrate loaded tensors
    bake_adopted(reloaded, tmp_path / "baked")
    plain = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "baked").eval()
    assert type(plain) is transformers.LlamaForCausalLM
    assert (logits(plain, X) - expected).abs().max() < 1e-5
