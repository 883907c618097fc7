"""The train / eval / generate / export / demo verbs through ``leviathan.cli.main``, and sampling."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from leviathan import CausalLM
from leviathan.cli import main
from leviathan.generation import generate, sample_next_token
from leviathan.presets import preset
from leviathan import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from test_train import make_data, tiny_overrides, write_corpus  # noqa: E402

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A leviathan model trained for a few steps through the CLI: (data dir, run dir)."""
    root = tmp_path_factory.mktemp("cli")
    data = make_data(root)
    run = root / "run"
    code = main(["train", *tiny_overrides(data, max_steps=8, checkpoint_interval=4, eval_interval=4),
                 "--run-dir", str(run), "--quiet"])
    assert code == 0
    return data, run


def test_eval_prepared_split_and_text(trained, tmp_path, capsys):
    data, run = trained
    assert main(["eval", str(run), "--json", "--batch-size", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    meta = json.loads((data / "meta.json").read_text())
    assert out["tokens"] == meta["splits"]["val"]["tokens"] - 1
    assert out["ppl"] == pytest.approx(math.exp(out["loss"]))
    assert out["bpb"] == pytest.approx(out["loss"] * out["tokens"] / math.log(2) / meta["splits"]["val"]["bytes"])
    assert out["checkpoint"].endswith("step-00000008")
    # the training run's own final validation (eval_tokens=400) is the same computation on a prefix
    assert main(["eval", str(run / "checkpoints" / "step-00000008"), "--json", "--max-tokens", "400"]) == 0
    prefix = json.loads(capsys.readouterr().out)
    final = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if "val_loss" in line][-1]
    assert prefix["loss"] == pytest.approx(final["val_loss"], rel=1e-6) and prefix["tokens"] == 400
    # raw text, tokenized with the checkpoint's tokenizer; bpb uses the file's UTF-8 size
    text = tmp_path / "notes.txt"
    text.write_text("the model returns a token. the spline layer sums the basis. import self data.\n" * 3)
    assert main(["eval", str(run), "--text", str(text), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tok = ckpt.load_tokenizer(run)
    assert out["tokens"] == len(tok.encode(text.read_text())) - 1
    assert out["bpb"] == pytest.approx(out["loss"] * out["tokens"] / math.log(2) / len(text.read_bytes()))
    assert main(["eval", str(run)]) == 0
    assert "ppl" in capsys.readouterr().out
    assert main(["eval", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_generate_is_reproducible(trained, capsys):
    _, run = trained
    args = ["generate", str(run), "--prompt", "the model", "--max-new-tokens", "12", "--seed", "3", "--top-k", "20",
            "--top-p", "0.9"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first and first.startswith("the model")
    assert main(["generate", str(run), "--temperature", "0", "--max-new-tokens", "5", "--no-bake", "--no-cache"]) == 0
    assert main(["generate", str(run), "--temperature", "-1"]) == 2


def test_export_hf_and_plain_llama(trained, tmp_path, capsys):
    pytest.importorskip("leviathan.hf.export")
    _, run = trained
    assert main(["export", str(run), str(tmp_path / "hf")]) == 0
    assert main(["export", str(run), str(tmp_path / "llama"), "--plain-llama"]) == 0
    assert "plain LlamaForCausalLM" in capsys.readouterr().out
    for d in ("hf", "llama"):
        assert (tmp_path / d / "config.json").is_file() and (tmp_path / d / "tokenizer.json").is_file()
    from transformers import LlamaForCausalLM

    hf = LlamaForCausalLM.from_pretrained(tmp_path / "llama").eval()
    model, _ = ckpt.load_model(run)
    ids = torch.tensor([[1, 5, 9, 2, 7]])
    torch.testing.assert_close(hf(ids).logits, model(ids)[0], rtol=1e-4, atol=1e-4)
    assert main(["export", str(run), str(tmp_path / "hf")]) == 2  # exists: refused without --overwrite


def test_demo_runs_on_a_prepared_folder(trained, tmp_path, capsys):
    data, _ = trained
    run = tmp_path / "demo"
    code = main(["demo", "--data-dir", str(data), "--run-dir", str(run), "--steps", "3", "--preset", "cpu-tiny",
                 "--seq-len", "32", "--batch-tokens", "128", "--eval-tokens", "256"])
    assert code == 0
    captured = capsys.readouterr()
    out, err = captured.out, captured.err
    # the first screen: the committed verdict and the time it will take, before any training
    assert err.startswith("what the project found") and "committed verdict (" in err.splitlines()[1]
    assert err.index("about ") < err.index("started") and " min on this machine" in err
    # live progress of every arm (parallel workers): steps, tokens, loss; validations; a line per finished run
    for variant in ("dense_tied", "dense_untied", "leviathan"):
        assert re.search(rf"^{variant}\s+step 1/3, 128 tokens, loss \d", err, re.M), err
        assert re.search(rf"^{variant}\s+validation loss \d", err, re.M)
        assert re.search(rf"^{variant} finished in \d+ s: validation loss \d", err, re.M)
    assert "val ppl" in out and "tied" in out
    report = json.loads((run / "demo.json").read_text())
    rows = {r["variant"]: r for r in report["rows"]}
    assert list(rows) == ["dense_tied", "dense_untied", "leviathan"]  # the untied table is the third arm
    assert len({r["params"]["body"] for r in rows.values()}) == 1  # iso-body
    assert rows["dense_tied"]["params"]["tied"] and rows["dense_tied"]["params"]["head"] == 0
    assert not rows["dense_untied"]["params"]["tied"] and rows["dense_untied"]["params"]["head"] > 0
    assert all(math.isfinite(r["val_loss"]) and r["tokens"] == 3 * 128 for r in rows.values())
    assert "| dense_untied |" in (run / "demo.md").read_text()
    # the gap curve (validation every steps / 6 steps) of every arm
    assert [t for t, _ in report["curve"]] == [128, 256, 384] and set(report["curve"][0][1]) == set(rows)
    # the headline: the phase measured and both gaps, then the committed verdict beside it
    lines = report["verdict"]
    assert lines[0].startswith("this demo (384 tokens per model; the early phase") and "unigram entropy" in lines[0]
    assert "leviathan - dense_tied" in lines[1] and "leviathan - dense_untied" in lines[1]
    assert lines[2].startswith("committed verdict (") and any("leviathan - dense_untied: +" in x for x in lines)
    assert 0 < report["info"]["estimated_s"] < 60
    assert report["info"]["concurrent"] == "at the same time, one process each"
    assert all((run / v / "checkpoints").is_dir() for v in rows)
    # sequential: the same progress lines, from this process
    seq = tmp_path / "demo-seq"
    assert main(["demo", "--data-dir", str(data), "--run-dir", str(seq), "--steps", "2", "--preset", "cpu-tiny",
                 "--seq-len", "32", "--batch-tokens", "128", "--eval-tokens", "256", "--sequential",
                 "--variants", "dense_untied,leviathan"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^dense_untied\s+step 2/2, 256 tokens", err, re.M) and "leviathan finished in" in err
    # a second demo replaces the first; a folder that is not a demo is never deleted
    other = tmp_path / "precious"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    assert main(["demo", "--data-dir", str(data), "--run-dir", str(other), "--steps", "1", "--quiet"]) == 2
    assert (other / "keep.txt").exists()
    # --vocab with a prepared --data-dir: that folder's tokenizer is used, so another --vocab is refused, not ignored
    capsys.readouterr()
    assert main(["demo", "--data-dir", str(data), "--run-dir", str(tmp_path / "v"), "--vocab", "4096", "--quiet"]) == 2
    assert f"--vocab 4,096 does not match --data-dir {str(data)!r}, prepared with tokenizer" in capsys.readouterr().err
    assert not (tmp_path / "v").exists()


def test_the_demo_estimate_is_calibrated_on_its_default_model():
    """The estimate's throughput is per FLOP of the default demo model (cpu-tiny, V 32,768, sequence 128): the
    constant must be that model's forward FLOPs per token."""
    import argparse

    from leviathan.commands import demo
    from leviathan.model.accounting import flops_per_token
    from leviathan.model.config import ModelConfig
    from leviathan.presets import preset_dict

    cfg = ModelConfig(**{**preset_dict("cpu-tiny"), "vocab_size": demo.BPE_VOCAB, "embedding": "dense_tied"})
    assert flops_per_token(cfg, 128)["total"] == pytest.approx(demo.DEMO_FLOPS_PER_TOKEN, rel=0.01)
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    args = parser.parse_args([])

    class Run:  # what estimate reads of a run config
        def __init__(self, embedding):
            self.model = ModelConfig(**{**preset_dict("cpu-tiny"), "vocab_size": demo.BPE_VOCAB,
                                        "embedding": embedding})

    three = [Run(v) for v in demo.VARIANTS]
    assert demo.estimate(three, args, cores=2) < 600  # the default demo: under 10 minutes on 2 cores
    assert demo.estimate(three, args, cores=3) < demo.estimate(three, args, cores=2)


# ---- sampling ----------------------------------------------------------------------------------
def test_sampling_filters():
    logits = torch.tensor([[0.0, 3.0, 1.0, 2.0]])
    assert sample_next_token(logits, temperature=0).item() == 1
    g = torch.Generator().manual_seed(0)
    assert {sample_next_token(logits, top_k=1, generator=g).item() for _ in range(20)} == {1}
    assert {sample_next_token(logits, top_p=0.01, generator=g).item() for _ in range(20)} == {1}
    # top-p 0.9: p = softmax([0, 3, 1, 2]) = [.032, .644, .087, .237]; the first three by rank hold .968 >= .9
    seen = {sample_next_token(logits, top_p=0.9, generator=g).item() for _ in range(300)}
    assert seen == {1, 2, 3}
    seen = {sample_next_token(logits, top_k=2, temperature=5.0, generator=g).item() for _ in range(300)}
    assert seen == {1, 3}


def test_kv_cache_matches_full_recompute():
    torch.manual_seed(0)
    model = CausalLM(preset("cpu-tiny", vocab_size=97, max_position_embeddings=24)).eval()
    prompt = torch.randint(0, 97, (2, 5))
    cached = generate(model, prompt, 12, temperature=0)
    full = generate(model, prompt, 12, temperature=0, use_cache=False)
    assert torch.equal(cached, full) and cached.shape == (2, 17)
    a = generate(model, prompt[0], 6, temperature=1.0, top_k=10, seed=1)
    b = generate(model, prompt[0], 6, temperature=1.0, top_k=10, seed=1, use_cache=False)
    assert torch.equal(a, b)
    # never past the model's positions
    assert generate(model, prompt[0], 100, temperature=0).shape[1] == 24
    # eos: a finished sequence keeps emitting eos
    eos = int(cached[0, 5])
    out = generate(model, prompt, 6, temperature=0, eos_id=eos)
    assert (out[0, 5:] == eos).all()
    baked = CausalLM(preset("cpu-tiny", vocab_size=97, max_position_embeddings=24))
    baked.load_state_dict(model.state_dict())
    baked.bake_()
    assert torch.equal(generate(baked.eval(), prompt, 8, temperature=0), generate(model, prompt, 8, temperature=0))
