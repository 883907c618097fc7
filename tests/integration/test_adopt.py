"""``leviathan.hf.adopt``: the generator in transformers' own causal LMs, saved, reloaded and baked back.

Tiny random configs built offline (V=300, D=32, 1 layer, a 2-mode generator) of Llama, Qwen2, Mistral, GPT-2
(tied by default, learned position embeddings) and GPT-NeoX. The baked directories are loaded in one subprocess
that never imports leviathan: what a user of transformers alone does.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import (InputEmbeddingError, ScaledLeviathanGenerator, adopt, adopted_class,  # noqa: E402
                          bake_adopted, is_adopted, load_adopted, to_original)
from leviathan.model.generator import LeviathanGenerator  # noqa: E402

V, D = 300, 32
GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
SMALL = dict(vocab_size=V, hidden_size=D, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
CONFIGS = {
    "llama": lambda: transformers.LlamaConfig(**SMALL),
    "qwen2": lambda: transformers.Qwen2Config(**SMALL),
    "mistral": lambda: transformers.MistralConfig(**SMALL),
    "gpt2": lambda: transformers.GPT2Config(vocab_size=V, n_embd=D, n_layer=1, n_head=4, n_positions=64,
                                            bos_token_id=0, eos_token_id=0),
    "gpt_neox": lambda: transformers.GPTNeoXConfig(vocab_size=V, hidden_size=D, intermediate_size=64,
                                                   num_hidden_layers=1, num_attention_heads=4,
                                                   max_position_embeddings=64, bos_token_id=0, eos_token_id=0),
    # Gemma scales its table's rows by sqrt(hidden_size) inside the embedding (ScaledLeviathanGenerator)
    "gemma": lambda: transformers.GemmaConfig(**SMALL, head_dim=8),
    "gemma3": lambda: transformers.Gemma3TextConfig(**{**SMALL, "num_hidden_layers": 2}, head_dim=8,
                                                    sliding_window=4),
}
ORIGINAL = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "mistral": "MistralForCausalLM",
            "gpt2": "GPT2LMHeadModel", "gpt_neox": "GPTNeoXForCausalLM", "gemma": "GemmaForCausalLM",
            "gemma3": "Gemma3ForCausalLM"}
SCALED = {"gemma", "gemma3"}


def ids(seed: int = 1) -> torch.Tensor:
    return torch.randint(0, V, (2, 9), generator=torch.Generator().manual_seed(seed))


def logits(model, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(x).logits


def trained_a_little(model):
    """One optimiser step, so the generator and head are not at their initialisation."""
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x = ids(seed=7)
    model(x, labels=x).loss.backward()
    opt.step()
    return model.eval()


@pytest.fixture(scope="module")
def baked(tmp_path_factory):
    """Per architecture: adopt, train a step, save, reload, bake. -> {arch: (expected logits, baked dir)}."""
    out = {}
    for arch, make in CONFIGS.items():
        torch.manual_seed(0)
        model = trained_a_little(adopt(make(), **GEN))
        root = tmp_path_factory.mktemp(arch)
        model.save_pretrained(root / "adopted")
        reloaded = load_adopted(root / "adopted").eval()
        x = ids()
        expected = logits(model, x)
        assert torch.equal(logits(reloaded, x), expected), arch
        bake_adopted(reloaded, root / "baked")
        out[arch] = (model, expected, root)
    return out


@pytest.mark.parametrize("arch", list(CONFIGS))
def test_adopt_replaces_the_input_table_and_unties(arch):
    torch.manual_seed(0)
    model = adopt(CONFIGS[arch](), **GEN)
    gen = model.get_input_embeddings()
    assert isinstance(gen, LeviathanGenerator) and (gen.vocab_size, gen.hidden_size) == (V, D)
    assert type(model).__name__ == f"Leviathan{ORIGINAL[arch]}" and is_adopted(model)
    assert isinstance(model, getattr(transformers, ORIGINAL[arch]))  # still the original class
    assert model.config.tie_word_embeddings is False and model.all_tied_weights_keys == {}
    settings = model.config.leviathan_generator
    assert settings["vocab_size"] == V and settings["base"] == 7 and settings["architecture"] == ORIGINAL[arch]
    if arch in SCALED:  # the generator's output is scaled as the table's rows were: sqrt(D)
        assert isinstance(gen, ScaledLeviathanGenerator) and settings["output_scale"] == pytest.approx(D ** 0.5)
        with torch.no_grad():
            assert torch.equal(gen(ids()), LeviathanGenerator.forward(gen, ids()) * float(D ** 0.5))
    else:
        assert type(gen) is LeviathanGenerator and "output_scale" not in settings
    assert not any(p is model.get_output_embeddings().weight for p in gen.parameters())
    x = ids()
    loss = model(x, labels=x).loss
    loss.backward()
    assert gen.spline_coeff.grad is not None and gen.spline_coeff.grad.abs().sum() > 0


@pytest.mark.parametrize("arch", list(CONFIGS))
def test_save_pretrained_round_trip(baked, arch):
    model, expected, root = baked[arch]
    config = json.loads((root / "adopted" / "config.json").read_text())
    assert config["leviathan_generator"] == model.config.leviathan_generator
    assert config["tie_word_embeddings"] is False
    assert (root / "adopted" / "model.safetensors").is_file()
    reloaded = load_adopted(root / "adopted")
    assert type(reloaded) is type(model)
    for (name, a), (_, b) in zip(model.state_dict().items(), reloaded.state_dict().items()):
        assert torch.equal(a, b), name


def test_every_folder_loads_with_transformers_alone_as_the_adopted_model(baked, tmp_path):
    """With transformers alone (no leviathan import): the baked folders, and the adopted (un-baked) folders too,
    load as the original classes with the adopted model's logits (fp32, < 1e-5): an adopted folder carries the
    baked table under the original key, never leaving a random embedding. The project's own model_type
    ``leviathan`` folder is refused (it needs the package), never loaded as something else."""
    from leviathan.hf import export
    from leviathan.model.config import ModelConfig
    from leviathan.model.llama import CausalLM

    for arch, (_, expected, root) in baked.items():
        torch.save(expected, root / "expected.pt")
        config = json.loads((root / "baked" / "config.json").read_text())
        assert "leviathan_generator" not in config and config["architectures"] == [ORIGINAL[arch]]
    export.to_hf(CausalLM(ModelConfig(vocab_size=V, hidden_size=D, num_hidden_layers=1, num_attention_heads=4,
                                      intermediate_size=64, embedding="leviathan", generator_seed_dim=8,
                                      generator_modes=2, generator_knots=8, generator_rank=4)), tmp_path / "native")
    dirs = {arch: str(root) for arch, (_, _, root) in baked.items()}
    script = textwrap.dedent(f"""
        import sys, torch
        from transformers import AutoModelForCausalLM
        x = torch.randint(0, {V}, (2, 9), generator=torch.Generator().manual_seed(1))
        for arch, root in {dirs!r}.items():
            for folder in ("baked", "adopted"):
                model = AutoModelForCausalLM.from_pretrained(root + "/" + folder).eval()
                with torch.no_grad():
                    got = model(x).logits
                diff = (got - torch.load(root + "/expected.pt")).abs().max().item()
                assert diff < 1e-5, (arch, folder, diff)
                print(arch, folder, type(model).__name__, diff)
        try:
            AutoModelForCausalLM.from_pretrained({str(tmp_path / "native")!r})
        except (ValueError, KeyError) as e:
            print("refused native:", type(e).__name__)
        assert not any(m.startswith("leviathan") for m in sys.modules), "leviathan was imported"
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    for arch in CONFIGS:
        for folder in ("baked", "adopted"):
            assert f"{arch} {folder} {ORIGINAL[arch]}" in result.stdout
    assert "refused native:" in result.stdout


def test_to_original_in_memory_matches(baked):
    model, expected, _ = baked["gpt2"]
    plain = to_original(model).eval()
    assert type(plain) is transformers.GPT2LMHeadModel and not is_adopted(plain)
    assert (logits(plain, ids()) - expected).abs().max() < 1e-5
    assert plain.transformer.wpe.weight.data_ptr() != model.transformer.wpe.weight.data_ptr()  # copied


def test_generate_equals_the_baked_model(baked):
    model, _, _ = baked["qwen2"]
    x = ids()[:1, :4]
    kwargs = dict(max_new_tokens=5, do_sample=False, pad_token_id=0)
    assert torch.equal(model.generate(x, **kwargs), to_original(model).eval().generate(x, **kwargs))


def test_adopting_an_instance_keeps_everything_else():
    """GPT-2 ties its head: the head keeps the old table's values in a tensor of its own; wpe and the layers stay."""
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(CONFIGS["gpt2"]())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    wpe = model.transformer.wpe
    assert model.lm_head.weight is model.transformer.wte.weight
    same = adopt(model, **GEN)
    assert same is model and model.transformer.wpe is wpe
    assert torch.equal(model.lm_head.weight, before["transformer.wte.weight"])
    after = model.state_dict()
    for name, tensor in before.items():
        if not name.startswith("transformer.wte."):
            assert torch.equal(after[name], tensor), name
    assert not any(name.startswith("transformer.wte.weight") for name in after)
    llama = transformers.LlamaForCausalLM(CONFIGS["llama"]())
    head = llama.lm_head.weight
    assert adopt(llama, **GEN).lm_head.weight is head  # an untied head is untouched


def test_a_bf16_model_gets_a_bf16_generator_and_an_adopted_model_pickles(tmp_path):
    """The generator takes the dtype of the table it replaces (a bf16 checkpoint stays bf16 end to end), and an
    adopted model (its class made at run time, ``adopted_class``) survives ``torch.save`` of the whole module."""
    torch.manual_seed(0)
    model = adopt(transformers.LlamaForCausalLM(CONFIGS["llama"]()).to(torch.bfloat16), **GEN)
    assert {p.dtype for p in model.get_input_embeddings().parameters()} == {torch.bfloat16}
    x = ids()
    expected = logits(model, x)
    assert expected.dtype == torch.bfloat16 and torch.isfinite(expected).all()
    torch.save(model, tmp_path / "model.pt")
    back = torch.load(tmp_path / "model.pt", weights_only=False)
    assert type(back).__name__ == type(model).__name__ and is_adopted(back)
    assert torch.equal(logits(back, x), expected)
    # bf16 Gemma: the scale is rounded to bf16 before the product, as GemmaTextScaledWordEmbedding rounds it
    gen = adopt(transformers.GemmaForCausalLM(CONFIGS["gemma"]()).to(torch.bfloat16), **GEN).get_input_embeddings()
    assert gen.output_scale == torch.tensor(D ** 0.5).item()  # float32 sqrt(D), not the bf16 buffer's 5.65625
    with torch.no_grad():
        rows = LeviathanGenerator.forward(gen, x)  # (2, 9, D) bf16, unscaled
        assert torch.equal(gen(x), rows * torch.tensor(D ** 0.5).to(torch.bfloat16))
        assert not torch.equal(gen(x), rows * D ** 0.5)  # 5.65625 in bf16, not 5.65685


def test_a_bf16_generator_computes_in_fp32_inside():
    """bf16 (or fp16) parameters: the generator computes with fp32 copies of them and returns their dtype, so its
    output is the fp32 function of the rounded weights (up to the output's own rounding), not a product of 128
    bf16 factors; gradients reach the bf16 parameters."""
    torch.manual_seed(0)
    gen = LeviathanGenerator(V, D, seed_dim=128, modes=2, knots=8, rank=4)  # d_s 128: the paper's product length
    x = ids()
    for dtype in (torch.bfloat16, torch.float16):
        low = copy.deepcopy(gen).to(dtype)
        as_fp32 = copy.deepcopy(low).float()  # the same rounded weights, fp32 module
        with torch.no_grad():
            got, want = low(x), as_fp32(x)
        assert got.dtype == dtype
        assert torch.equal(got, want.to(dtype))  # exactly the fp32 computation, rounded once at the end
        with torch.autocast("cpu", dtype=torch.bfloat16):  # autocast cannot push it back into low precision
            assert torch.equal(low(x), got)
        low(x).float().sum().backward()
        assert low.spline_coeff.grad is not None and low.spline_coeff.grad.dtype == dtype


def test_encoder_only_configs_and_instances_are_refused():
    """BERT-like configs have a causal LM class (BertLMHeadModel) whose attention is bidirectional unless
    is_decoder=True: refused as encoder-only; with is_decoder=True it is a causal decoder and is adopted."""
    small = dict(vocab_size=V, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64)
    for config in (transformers.BertConfig(**small), transformers.RobertaConfig(**small),
                   transformers.ElectraConfig(**small, embedding_size=32)):
        with pytest.raises(UserError, match="is an encoder-only model") as e:
            adopt(config, **GEN)
        _problem_and_fix(e)
    with pytest.raises(UserError, match="is an encoder-only model"):
        adopt(transformers.BertLMHeadModel(transformers.BertConfig(**small)), **GEN)
    decoder = adopt(transformers.BertConfig(**small, is_decoder=True), **GEN)
    assert isinstance(decoder.get_input_embeddings(), LeviathanGenerator)


def test_adopt_does_not_change_the_callers_config():
    config = CONFIGS["gpt2"]()
    adopt(config, **GEN)
    assert config.tie_word_embeddings is True and not hasattr(config, "leviathan_generator")


# ---- what cannot be adopted ----------------------------------------------------------------------------------
def _problem_and_fix(excinfo) -> str:
    message = str(excinfo.value)
    assert "; " in message, message  # <problem>; <fix>
    return message


def test_unsupported_architectures_name_what_is_missing():
    with pytest.raises(UserError, match="no causal language model class") as e:
        adopt(transformers.DistilBertConfig(vocab_size=V, dim=32, n_layers=1, n_heads=4, hidden_dim=64))
    _problem_and_fix(e)
    with pytest.raises(UserError, match="encoder-decoder") as e:
        adopt(transformers.T5Config(vocab_size=V, d_model=32, num_layers=1, num_heads=4, d_ff=64))
    _problem_and_fix(e)
    with pytest.raises(UserError, match="multimodal") as e:
        adopt(transformers.LlavaConfig())
    _problem_and_fix(e)
    bert = transformers.BertForMaskedLM(transformers.BertConfig(vocab_size=V, hidden_size=32, num_hidden_layers=1,
                                                                num_attention_heads=4, intermediate_size=64))
    with pytest.raises(UserError, match="BertForMaskedLM is not a causal language model") as e:
        adopt(bert)
    _problem_and_fix(e)
    with pytest.raises(UserError, match="PreTrainedModel") as e:
        adopt(torch.nn.Linear(2, 2))
    _problem_and_fix(e)


def test_an_embedding_that_is_not_a_plain_or_scaled_table_is_refused():
    class ScaledEmbedding(torch.nn.Embedding):  # scales, but not by the embed_scale it claims
        embed_scale = 3.0

        def forward(self, input_ids):
            return super().forward(input_ids) * 2.0

    class ShiftedEmbedding(torch.nn.Embedding):  # no embed_scale at all
        def forward(self, input_ids):
            return super().forward(input_ids) + 1.0

    for cls in (ScaledEmbedding, ShiftedEmbedding):
        model = transformers.LlamaForCausalLM(CONFIGS["llama"]())
        model.model.embed_tokens = cls(V, D)
        with pytest.raises(UserError, match=f"is a {cls.__name__}, not a plain torch.nn.Embedding") as e:
            adopt(model)
        _problem_and_fix(e)
    model = transformers.LlamaForCausalLM(CONFIGS["llama"]())
    model.model.embed_tokens = ScaledEmbedding(V, D)
    model.model.embed_tokens.embed_scale = 2.0  # now it is what it claims: adopted with that scale
    assert adopt(model, **GEN).config.leviathan_generator["output_scale"] == 2.0
    adopted = adopt(CONFIGS["llama"](), **GEN)
    with pytest.raises(UserError, match="already adopted"):
        adopt(adopted)


def test_bad_settings_and_misuse():
    with pytest.raises(UserError, match="unknown generator setting") as e:
        adopt(CONFIGS["qwen2"](), seed_dims=8)
    _problem_and_fix(e)
    with pytest.raises(UserError, match="taken from the model's input embedding"):
        adopt(CONFIGS["qwen2"](), vocab_size=500)
    with pytest.raises(UserError, match="taken from the model's input embedding"):
        adopt(CONFIGS["gemma"](), output_scale=1.0)
    with pytest.raises(UserError, match="invalid generator setting"):
        adopt(CONFIGS["qwen2"](), base=3)  # 3^3 < 300
    model = adopt(CONFIGS["qwen2"](), **GEN)
    with pytest.raises(InputEmbeddingError, match="resize_token_embeddings"):
        model.resize_token_embeddings(400)
    with pytest.raises(InputEmbeddingError, match="bake"):
        model.set_input_embeddings(torch.nn.Embedding(V, D))
    with pytest.raises(UserError, match="not an adopted model"):
        bake_adopted(transformers.Qwen2ForCausalLM(CONFIGS["qwen2"]()), "unused")


def test_load_adopted_refuses_a_plain_directory(tmp_path):
    transformers.Qwen2ForCausalLM(CONFIGS["qwen2"]()).save_pretrained(tmp_path / "plain")
    with pytest.raises(UserError, match="not an adopted model") as e:
        load_adopted(tmp_path / "plain")
    _problem_and_fix(e)
    with pytest.raises(UserError, match="absent' does not exist; check the path"):  # "has no config.json" (round 23)
        load_adopted(tmp_path / "absent")


def test_a_folder_without_the_generator_weights_is_refused_not_given_a_random_generator(tmp_path):
    """transformers alone re-saving an adopted folder it loaded keeps ``leviathan_generator`` in config.json but
    writes only the baked table: ``load_adopted`` used to rebuild the generator at its random init there (logits off
    by ~0.6, one load-report line). Now it refuses, naming the fix, as it does for a file missing one tensor; the
    re-saved folder is a table model that transformers loads with the adopted model's logits."""
    from safetensors.torch import load_file, save_file

    torch.manual_seed(0)
    model = trained_a_little(adopt(CONFIGS["qwen2"](), **GEN))
    model.save_pretrained(tmp_path / "adopted")
    plain = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "adopted")  # what transformers alone builds
    assert type(plain) is transformers.Qwen2ForCausalLM
    plain.save_pretrained(tmp_path / "resaved")
    assert "leviathan_generator" in json.loads((tmp_path / "resaved" / "config.json").read_text())
    with pytest.raises(UserError, match=r"lacks 6 of the generator's tensors \(model\.embed_tokens\.codebooks") as e:
        load_adopted(tmp_path / "resaved")
    assert "AutoModelForCausalLM.from_pretrained" in _problem_and_fix(e) and "fit=" in str(e.value)
    with pytest.raises(UserError, match="lacks 6"):  # the class's own from_pretrained, not only load_adopted
        adopted_class(transformers.Qwen2ForCausalLM).from_pretrained(tmp_path / "resaved")
    table_model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "resaved").eval()
    assert (logits(table_model, ids()) - logits(model, ids())).abs().max() < 1e-5
    # one tensor missing is refused too; a complete file still loads, with its loading info when asked for
    tensors = load_file(tmp_path / "adopted" / "model.safetensors")
    save_file({k: v for k, v in tensors.items() if k != "model.embed_tokens.spline_coeff"},
              tmp_path / "adopted" / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(UserError, match=r"lacks 1 of the generator's tensors \(model\.embed_tokens\.spline_coeff\)"):
        load_adopted(tmp_path / "adopted")
    save_file(tensors, tmp_path / "adopted" / "model.safetensors", metadata={"format": "pt"})
    again, info = load_adopted(tmp_path / "adopted", output_loading_info=True)
    assert not info["missing_keys"] and torch.equal(logits(again.eval(), ids()), logits(model, ids()))


def test_an_adopted_class_built_from_its_config_gets_the_reference_init():
    """``adopted_class(cls)(config)`` builds the generator in ``post_init`` and its init runs (not empty memory)."""
    config = adopt(CONFIGS["qwen2"](), **GEN).config
    gen = adopted_class(transformers.Qwen2ForCausalLM)(config).get_input_embeddings()
    assert isinstance(gen, LeviathanGenerator)
    assert torch.equal(gen.ln_weight, torch.ones_like(gen.ln_weight))
    assert abs(gen.spline_coeff.mean().item() - 1.0) < 0.05  # S = 1 + N(0, 0.1^2)
