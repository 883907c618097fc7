"""Hugging Face integration: config, save/load round trips, Auto classes, generate, resize, export.

Tiny models (V=300, D=32-48, 2 layers) so the file runs in seconds. The plain-Llama export is
loaded in a subprocess that never imports leviathan: what a user of transformers alone would do.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.config import ConfigError  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import InputEmbeddingError, LeviathanConfig, LeviathanForCausalLM, export  # noqa: E402 (registers)
from leviathan.model.config import ModelConfig  # noqa: E402
from leviathan.model.generator import LeviathanGenerator  # noqa: E402
from leviathan.model.llama import CausalLM  # noqa: E402
from transformers import AutoConfig, AutoModelForCausalLM  # noqa: E402

V = 300
GEN = dict(generator_seed_dim=16, generator_modes=2, generator_knots=8, generator_rank=8)


def tiny(embedding: str, seed: int = 0, **kw) -> CausalLM:
    torch.manual_seed(seed)
    base = dict(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                max_position_embeddings=64, embedding=embedding, embedding_rank=8, **GEN)
    return CausalLM(ModelConfig(**{**base, **kw})).eval()


def ids(b: int = 2, t: int = 11, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, V, (b, t), generator=torch.Generator().manual_seed(seed))


def logits(model, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        out = model(x)
    return out[0] if isinstance(out, tuple) else out.logits


# ---- config --------------------------------------------------------------------------------------
def test_config_carries_every_model_config_field():
    cfg = ModelConfig(vocab_size=V, hidden_size=48, num_attention_heads=4, embedding="compositional",
                      rope_theta=123.0, generator_k=2)
    hf_cfg = LeviathanConfig.from_model_config(cfg)
    for f in dataclasses.fields(ModelConfig):
        assert hasattr(hf_cfg, f.name), f"LeviathanConfig lacks ModelConfig.{f.name}"
    assert hf_cfg.to_model_config() == cfg.resolved()
    assert hf_cfg.generator_base == 18  # resolved and stored: 18^2 >= 300
    assert hf_cfg.model_type == "leviathan"


def test_config_tie_is_derived_and_validated():
    assert LeviathanConfig(embedding="dense_tied").tie_word_embeddings is True
    for kind in ("dense_untied", "leviathan", "factorized", "compositional"):
        assert LeviathanConfig(embedding=kind).tie_word_embeddings is False
    with pytest.raises(ConfigError, match="dense_tied"):
        LeviathanConfig(embedding="leviathan", tie_word_embeddings=True)
    with pytest.raises(ConfigError, match="num_attention_heads"):
        LeviathanConfig(hidden_size=30, num_attention_heads=4)
    with pytest.raises(ConfigError, match="rope_theta"):
        LeviathanConfig(rope_theta="big")


# ---- adapter == native ---------------------------------------------------------------------------
@pytest.mark.parametrize("embedding", ["dense_tied", "dense_untied", "leviathan", "factorized", "compositional"])
def test_from_native_to_native_same_keys_same_logits(embedding):
    model = tiny(embedding)
    hf = export.from_native(model).eval()
    assert set(hf.state_dict()) == set(model.state_dict())
    x = ids()
    assert torch.equal(logits(hf, x), logits(model, x))
    back = export.to_native(hf)
    assert torch.equal(logits(back, x), logits(model, x))
    if embedding == "dense_tied":
        assert hf.lm_head.weight is hf.model.embed_tokens.weight
        assert back.lm_head.weight is back.model.embed_tokens.weight
    else:
        assert all(p is not hf.lm_head.weight for p in hf.model.embed_tokens.parameters())


def test_baked_native_model_becomes_dense_untied():
    model = tiny("leviathan")
    x = ids()
    before = logits(model, x)
    model.bake_()
    hf = export.from_native(model)
    assert hf.config.embedding == "dense_untied" and not hf.config.tie_word_embeddings
    assert (logits(hf, x) - before).abs().max() < 1e-5


def test_loss_uses_hugging_face_label_convention():
    model = tiny("leviathan")
    hf = export.from_native(model)
    x = ids()
    with torch.no_grad():
        _, native_loss = model(x[:, :-1], labels=x[:, 1:])
        hf_loss = hf(x, labels=x).loss
    assert abs(native_loss.item() - hf_loss.item()) < 1e-6


# ---- save_pretrained / from_pretrained -----------------------------------------------------------
@pytest.mark.parametrize("embedding", ["leviathan", "dense_tied"])
def test_save_pretrained_round_trip(tmp_path, embedding):
    model = tiny(embedding)
    hf = export.from_native(model)
    hf.save_pretrained(tmp_path / "m")
    files = set(os.listdir(tmp_path / "m"))
    assert "model.safetensors" in files and "config.json" in files
    assert not any(f.endswith(".bin") or f.endswith(".py") for f in files)  # safetensors, no remote code
    saved = json.loads((tmp_path / "m" / "config.json").read_text())
    assert saved["model_type"] == "leviathan" and "auto_map" not in saved
    assert saved["tie_word_embeddings"] is (embedding == "dense_tied")

    loaded, info = LeviathanForCausalLM.from_pretrained(tmp_path / "m", output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    x = ids()
    assert torch.equal(logits(loaded.eval(), x), logits(model, x))
    # the rotary buffer is not in the checkpoint: it must be recomputed, not left uninitialised
    assert torch.equal(loaded.model.rotary_emb.inv_freq, model.model.rotary_emb.inv_freq)
    if embedding == "dense_tied":
        assert loaded.lm_head.weight is loaded.model.embed_tokens.weight
    else:
        assert isinstance(loaded.get_input_embeddings(), LeviathanGenerator)


def test_auto_classes_load_without_remote_code(tmp_path):
    model = tiny("leviathan")
    out = export.to_hf(model, tmp_path / "hf")
    assert isinstance(AutoConfig.from_pretrained(out), LeviathanConfig)
    auto = AutoModelForCausalLM.from_pretrained(out)  # no trust_remote_code
    assert isinstance(auto, LeviathanForCausalLM)
    x = ids()
    assert torch.equal(logits(auto.eval(), x), logits(model, x))
    assert AutoModelForCausalLM.from_config(LeviathanConfig.from_model_config(model.config)).__class__ is \
        LeviathanForCausalLM


# ---- generate ------------------------------------------------------------------------------------
def greedy(model: CausalLM, prompt: torch.Tensor, n: int) -> torch.Tensor:
    seq = prompt
    with torch.no_grad():
        for _ in range(n):
            nxt = model(seq)[0][:, -1].argmax(-1, keepdim=True)
            seq = torch.cat([seq, nxt], dim=1)
    return seq


@pytest.mark.parametrize("use_cache", [True, False])
def test_generate_greedy_matches_manual_loop(use_cache):
    model = tiny("leviathan", seed=3)
    hf = export.from_native(model).eval()
    prompt = ids(2, 5, seed=7)
    out = hf.generate(prompt, max_new_tokens=8, do_sample=False, use_cache=use_cache)
    assert torch.equal(out, greedy(model, prompt, 8))


def test_generate_left_padded_batch_matches_single_prompts():
    model = tiny("dense_untied", seed=4)
    hf = export.from_native(model).eval()
    long_, short = ids(1, 6, seed=8), ids(1, 3, seed=9)
    pad = 0
    batch = torch.cat([long_, torch.cat([torch.full((1, 3), pad), short], 1)])
    mask = torch.ones_like(batch)
    mask[1, :3] = 0
    out = hf.generate(batch, attention_mask=mask, max_new_tokens=6, do_sample=False, pad_token_id=pad)
    assert torch.equal(out[0], greedy(model, long_, 6)[0])
    assert torch.equal(out[1, 3:], greedy(model, short, 6)[0])


# ---- input embedding guards ----------------------------------------------------------------------
@pytest.mark.parametrize("embedding", ["leviathan", "compositional", "factorized"])
def test_resizing_a_non_table_input_side_raises(embedding):
    hf = export.from_native(tiny(embedding))
    with pytest.raises(InputEmbeddingError, match="resize_token_embeddings") as err:
        hf.resize_token_embeddings(V + 10)
    if embedding != "factorized":
        assert "add_tokens" in str(err.value)
    assert isinstance(err.value, UserError)
    with pytest.raises(InputEmbeddingError, match="set_input_embeddings"):
        hf.set_input_embeddings(torch.nn.Embedding(V, 32))
    assert hf.config.vocab_size == V and hf.get_input_embeddings() is hf.model.embed_tokens


def test_the_suggested_add_tokens_route_works(tmp_path):
    hf = export.from_native(tiny("leviathan"))
    native = export.to_native(hf)
    assert native.add_tokens(10) == V + 10  # b = 7, b^3 = 343 ids available
    grown = export.from_native(native).eval()
    assert grown.config.vocab_size == V + 10 and grown.config.generator_base == 7
    x = torch.cat([ids(), torch.tensor([[V + 9, V], [V + 1, 5]])], dim=1)  # new ids included
    assert torch.equal(logits(grown, x), logits(native, x))
    grown.save_pretrained(tmp_path / "g")
    assert torch.equal(logits(LeviathanForCausalLM.from_pretrained(tmp_path / "g").eval(), x), logits(native, x))


def test_get_input_embeddings_is_the_generator_and_dense_resize_works():
    hf = export.from_native(tiny("leviathan"))
    assert isinstance(hf.get_input_embeddings(), LeviathanGenerator)
    dense = export.from_native(tiny("dense_untied"))
    dense.resize_token_embeddings(V + 4)
    assert dense.config.vocab_size == V + 4
    assert logits(dense.eval(), ids()).shape[-1] == V + 4


# ---- export: leviathan dir, plain Llama dir ------------------------------------------------------
class FakeTokenizer:
    eot_id = 7

    def save(self, directory):
        with open(os.path.join(directory, "tokenizer.json"), "w") as f:
            f.write("{}")


def test_export_is_atomic_and_refuses_to_clobber(tmp_path):
    model = tiny("leviathan")
    out = export.to_hf(model, tmp_path / "a", tokenizer=FakeTokenizer())
    assert (out / "tokenizer.json").exists()
    assert json.loads((out / "config.json").read_text())["eos_token_id"] == 7
    assert json.loads((out / "generation_config.json").read_text())["eos_token_id"] == 7
    hf_out = export.to_hf(export.from_native(model), tmp_path / "b", tokenizer=FakeTokenizer())
    assert json.loads((hf_out / "generation_config.json").read_text())["eos_token_id"] == 7
    with pytest.raises(UserError, match="not empty"):
        export.to_plain_llama(model, out)
    export.to_plain_llama(model, out, overwrite=True)
    assert json.loads((out / "config.json").read_text())["model_type"] == "llama"
    assert not (out / "tokenizer.json").exists()  # replaced as a whole, not merged
    (tmp_path / "empty").mkdir()
    export.to_plain_llama(model, tmp_path / "empty")  # an existing empty dir is fine
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "empty"]  # no temp folders left


def test_export_saves_a_tokenizers_tokenizer(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0, "<unk>": 1}, unk_token="<unk>"))
    out = export.to_plain_llama(tiny("dense_tied"), tmp_path / "p", tokenizer=tok)
    assert (out / "tokenizer.json").is_file()


PLAIN_LOADER = textwrap.dedent("""
    import json, sys
    import torch
    from transformers import LlamaForCausalLM
    args = json.loads(sys.argv[1])
    x = torch.load(args["ids"], weights_only=True)
    report = {}
    for name, path in args["dirs"].items():
        model, info = LlamaForCausalLM.from_pretrained(path, output_loading_info=True)
        model.eval()
        with torch.no_grad():
            torch.save(model(x).logits, f"{path}.logits.pt")
        report[name] = {"missing": sorted(info["missing_keys"]), "unexpected": sorted(info["unexpected_keys"]),
                        "tied": model.lm_head.weight is model.model.embed_tokens.weight,
                        "class": type(model).__name__, "model_type": model.config.model_type}
    report["leviathan_imported"] = any(m == "leviathan" or m.startswith("leviathan.") for m in sys.modules)
    print(json.dumps(report))
""")


def test_plain_llama_export_loads_with_transformers_alone(tmp_path):
    models = {"leviathan": tiny("leviathan", seed=5), "dense_tied": tiny("dense_tied", seed=6),
              "factorized": tiny("factorized", seed=7, num_key_value_heads=None, head_dim=16)}
    dirs = {name: str(export.to_plain_llama(m, tmp_path / name)) for name, m in models.items()}
    x = ids(2, 13, seed=11)
    torch.save(x, tmp_path / "ids.pt")

    cfg = json.loads((tmp_path / "leviathan" / "config.json").read_text())
    assert cfg["model_type"] == "llama" and cfg["architectures"] == ["LlamaForCausalLM"]
    assert cfg["tie_word_embeddings"] is False and "auto_map" not in cfg
    assert not any(k.startswith("generator_") for k in cfg)

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", PLAIN_LOADER, json.dumps({"ids": str(tmp_path / "ids.pt"),
                                                                          "dirs": dirs})],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["leviathan_imported"] is False
    for name, model in models.items():
        r = report[name]
        assert r["class"] == "LlamaForCausalLM" and r["model_type"] == "llama"
        assert r["missing"] == [] and r["unexpected"] == [], r
        assert r["tied"] is (name == "dense_tied")
        theirs = torch.load(f"{dirs[name]}.logits.pt", weights_only=True)
        diff = (theirs - logits(model, x)).abs().max().item()
        # leviathan/factorized: the baked table is the generator's output computed in another batch
        # layout, so equal up to fp32 rounding; dense: the very same tensors
        assert diff < 1e-5, f"{name}: max |logit diff| {diff:.2e}"
