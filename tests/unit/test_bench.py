"""``leviathan bench`` building blocks on tiny models (seconds): timing protocol, memory probe, every section,
the report and the CLI. Measurements here are smoke tests, not performance claims (see docs/benchmarks.md)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from leviathan import bench
from leviathan.cli import main

pytestmark = pytest.mark.usefixtures("single_thread")

TINY = bench.BenchConfig("tiny-test", "cpu-tiny", {"vocab_size": 64, "max_position_embeddings": 16}, "bpe:64", 16, 2,
                         "unit test")


def zipf_stream(n: int = 4000, vocab: int = 64, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.multinomial(1.0 / torch.arange(1, vocab + 1).float(), n, replacement=True, generator=g).numpy()


def test_alternate_interleaves_and_times_each_call():
    calls = []
    times = bench.alternate({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=3, warmup=1)
    assert calls == ["a", "b"] * 4  # one warm-up round, then three timed rounds, always a then b
    assert set(times) == {"a", "b"} and all(len(v) == 3 and min(v) >= 0 for v in times.values())


def test_make_batches_are_shifted_windows_and_short_text_is_an_error():
    stream = zipf_stream(1000)
    batches = bench.make_batches(stream, batch_size=3, seq_len=8, count=4)
    assert len(batches) == 4
    for x, y in batches:
        assert x.shape == y.shape == (3, 8) and x.dtype == torch.int64
        assert torch.equal(x[:, 1:], y[:, :-1])  # y is x shifted by one token
    assert not torch.equal(batches[0][0], batches[-1][0])  # spread over the stream
    with pytest.raises(bench.UserError, match="fewer than one batch"):
        bench.make_batches(stream[:20], batch_size=3, seq_len=8, count=1)


def test_training_section_compares_the_two_variants_on_the_same_batches():
    batches = bench.make_batches(zipf_stream(), TINY.batch_size, TINY.seq_len, count=2)
    r = bench.bench_training(TINY, batches, repeats=2, warmup=1)
    assert set(r["models"]) == {"dense_tied", "leviathan", "generator only"}
    assert r["ratio"] == pytest.approx(r["models"]["leviathan"]["median_s"] / r["models"]["dense_tied"]["median_s"])
    assert r["distinct_ids_per_batch"] == [int(x.unique().numel()) for x, _ in batches]
    assert r["models"]["dense_tied"]["params"]["tied"] and not r["models"]["leviathan"]["params"]["tied"]
    assert all(torch.isfinite(torch.tensor(m["final_loss"])) for n, m in r["models"].items() if n != "generator only")


def test_saved_bytes_sees_the_literal_formula_and_not_the_parameters():
    from leviathan.model.generator import LeviathanGenerator
    from leviathan.model.reference import reference_from_module

    g = LeviathanGenerator(1000, 8, seed_dim=16, modes=2, knots=8, rank=4)
    ids = torch.arange(0, 1000, 37)
    assert bench.saved_bytes(g, lambda: g.out.sum() * 2.0) == 0  # only a parameter is involved
    fast = bench.saved_bytes(g, lambda: g(ids))
    literal = bench.saved_bytes(g, lambda: reference_from_module(g, ids))
    assert 0 < fast < literal


def test_generator_and_memory_sections_at_paper_defaults_on_a_few_ids():
    ids = torch.tensor([0, 5, 77, 1000, 123_456, 200_018])
    r = bench.bench_generator(ids, repeats=1, warmup=0)
    assert r["distinct_ids"] == 6 and r["speedup"] > 0
    assert max(r["max_scaled_error"].values()) < 1e-4  # the fast path is the formula
    m = bench.bench_memory(torch.cat([ids, ids]).view(2, -1), reference_ids=2)
    assert m["distinct_ids"] == 6 and m["positions"] == 12
    assert 8 <= m["fast_kib_per_id"] <= 16 < m["reference_kib_per_id"]


def test_decode_section_and_baked_model_generates_the_same_tokens():
    r = bench.bench_decode(TINY, torch.tensor([[1, 2, 3, 4]]), new_tokens=5, repeats=1, warmup=0)
    assert set(r["models"]) == {"dense_tied", "leviathan"} and r["ratio"] > 0 and r["new_tokens"] == 5
    tps = {v: m["tokens_per_s"] for v, m in r["models"].items()}  # decode's ratio is a speed ratio (> 1: faster)
    assert r["ratio"] == pytest.approx(tps["leviathan"] / tps["dense_tied"])
    assert "times_s" not in r["models"]["leviathan"]  # per-token samples are not kept
    model = bench.build_model(TINY.model("leviathan")).eval()
    prompt = torch.tensor([[3, 1, 4, 1, 5]])
    before = bench.greedy_decode(model, prompt, 6)
    assert torch.equal(bench.greedy_decode(model.bake_(), prompt, 6), before)  # baking changes no token


def test_hf_section_uses_the_same_weights():
    pytest.importorskip("transformers")
    batches = bench.make_batches(zipf_stream(), TINY.batch_size, TINY.seq_len, count=1)
    r = bench.bench_hf(TINY, batches, repeats=1, warmup=0)
    assert r["max_abs_logit_diff"] < 1e-4
    losses = [m["final_loss"] for m in r["models"].values()]
    assert losses[0] == pytest.approx(losses[1], rel=1e-4)  # same weights, same batch, same loss code


def test_targets_and_report():
    result = {"environment": bench.environment(), "quick": True, "wall_s": 1.0,
              "data": {"cpu": {"tokenizer": "bpe:8192", "vocab": 8192, "text": "x", "tokens": 10}},
              "sections": {"train": {"cpu": {"ratio": 1.05, "distinct_ids_per_batch": [3], "tokens_per_batch": 4,
                                             "batch_size": 1, "seq_len": 4, "repeats": 1, "models": {
                                                 "dense_tied": {"median_s": 1.0, "min_s": 1.0, "max_s": 1.0, "cpu_median_s": 1.0,
                                                                "tokens_per_s": 4.0, "params": {"total": 10}},
                                                 "leviathan": {"median_s": 1.05, "min_s": 1.0, "max_s": 1.1, "cpu_median_s": 1.04,
                                                               "tokens_per_s": 3.8, "params": {"total": 12}}}}},
                           "memory": {"fast_kib_per_id": 20.0, "reference_kib_per_id": 900.0, "distinct_ids": 3,
                                      "positions": 4, "reference_ids": 2, "ratio": 45.0}}}
    result["targets"] = bench.evaluate_targets(result)
    verdicts = {t["target"]: t["pass"] for t in result["targets"]}
    assert verdicts == {"train_ratio": True, "saved_kib_per_id": False}
    text = bench.format_report(result)
    assert "PASS" in text and "MISS" in text and "1.050" in text


def tiny_bench_config(tmp_path, monkeypatch):
    """A "tiny" bench config on a small private corpus instead of ../shared or the standard library, so the tests
    are fast and hermetic."""
    words = " ".join(f"word{i % 97} token{i % 13}" for i in range(3000))
    (tmp_path / "a.txt").write_text(words)
    monkeypatch.setattr(bench.data, "corpus_files", lambda split: ([tmp_path / "a.txt"], f"test {split}"))
    monkeypatch.setitem(bench.CONFIGS, "tiny", replace(TINY, name="tiny", tokenizer="bpe:300",
                                                       overrides={"vocab_size": 300, "max_position_embeddings": 16}))


def test_cli_runs_a_section_end_to_end(tmp_path, monkeypatch, capsys):
    tiny_bench_config(tmp_path, monkeypatch)
    out = tmp_path / "r.json"
    code = main(["bench", "--config", "tiny", "--only", "train", "--repeats", "1", "--warmup", "0",
                 "--cache-dir", str(tmp_path / "cache"), "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Training step" in printed and "train_ratio" in printed
    saved = json.loads(out.read_text())
    assert saved["sections"]["train"]["tiny"]["ratio"] > 0
    assert list((tmp_path / "cache").glob("bpe-300-*/tokenizer.json"))  # the trained BPE is cached


def test_cli_rejects_unknown_section_and_config(tmp_path, capsys):
    assert main(["bench", "--only", "speed", "--cache-dir", str(tmp_path)]) == 2
    assert "unknown section" in capsys.readouterr().err
    assert main(["bench", "--config", "gpu", "--cache-dir", str(tmp_path)]) == 2
    assert "unknown config" in capsys.readouterr().err


def test_modes_section_plain_chunked_compiled(tmp_path, monkeypatch, capsys):
    """--only modes: the six (variant, mode) steps side by side, the same loss in every mode, ratios and targets;
    peak memory of one mode in a fresh process."""
    from leviathan.bench import peak_rss_mb

    tiny_bench_config(tmp_path, monkeypatch)
    out = tmp_path / "r.json"
    code = main(["bench", "--config", "tiny", "--only", "modes", "--quick", "--repeats", "1", "--warmup", "0",
                 "--threads", "1", "--cache-dir", str(tmp_path / "cache"), "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    # the chunked head's targets are for a large vocabulary only: a 300-id model reports compile's alone
    assert "Training step by mode" in printed and "compile_speedup" in printed and "chunked_speedup" not in printed
    r = json.loads(out.read_text())["sections"]["modes"]["tiny"]
    assert set(r["steps"]) == {f"{v}/{m}" for v in ("dense_tied", "leviathan") for m in ("plain", "chunked", "compiled")}
    assert r["ratios"]["leviathan chunked / plain"] > 0 and r["steps"]["leviathan/compiled"]["compile_s"] >= 0
    # every mode trains the same model on the same batches: after the same steps, the same loss
    for v in ("dense_tied", "leviathan"):
        losses = [r["steps"][f"{v}/{m}"]["final_loss"] for m in ("plain", "chunked", "compiled")]
        assert losses[1] == pytest.approx(losses[0], rel=1e-4) and losses[2] == pytest.approx(losses[0], rel=1e-3)
    x = torch.randint(0, 300, (2, 16))
    big = torch.ones(200_000_000)  # 800 MB resident in this process: the child must not report it as its own
    child = peak_rss_mb("tiny", "leviathan", "chunked", [(x, x)], steps=1)
    assert 50 < child < 700, child  # torch alone is > 50 MB resident
    del big


def test_width_section_puts_every_width_and_arm_in_one_rotation(tmp_path, monkeypatch, capsys):
    """--only width: each (width, arm) step and each width's head and generator alone, ratios against width 64 (the
    reference even when listed last), the analytic FLOP ratio beside them, and the 2.5x target for width 128."""
    tiny_bench_config(tmp_path, monkeypatch)
    base = bench.CONFIGS["tiny"]
    for width, heads in ((32, 2), (64, 4), (128, 8)):
        overrides = {**base.overrides, "hidden_size": width, "num_attention_heads": heads,
                     "intermediate_size": 3 * width, "num_hidden_layers": 1}
        monkeypatch.setitem(bench.CONFIGS, f"w{width}", replace(base, name=f"w{width}", overrides=overrides,
                                                                 softmax_ids=200))
    out = tmp_path / "r.json"
    code = main(["bench", "--config", "w128,w32,w64", "--only", "width", "--repeats", "1", "--warmup", "0",
                 "--threads", "1", "--cache-dir", str(tmp_path / "cache"), "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Training step per width" in printed and "width_ratio" in printed
    r = json.loads(out.read_text())["sections"]["width"]
    assert r["reference"] == "w64" and set(r["widths"]) == {"w32", "w64", "w128"}
    w = r["widths"]["w128"]
    assert set(w["steps"]) == {"dense_untied", "leviathan", "dense_tied", "head", "generator"}
    assert w["ratio"]["leviathan"] == pytest.approx(w["steps"]["leviathan"]["median_s"]
                                                    / r["widths"]["w64"]["steps"]["leviathan"]["median_s"])
    assert r["widths"]["w64"]["ratio"]["dense_untied"] == 1.0
    assert w["rest_s"] == pytest.approx(w["steps"]["leviathan"]["median_s"] - w["steps"]["head"]["median_s"]
                                        - w["steps"]["generator"]["median_s"])
    assert w["cpu_ratio"]["rest"] == pytest.approx(w["rest_cpu_s"] / r["widths"]["w64"]["rest_cpu_s"])
    # the head over 200 ids costs 2 x 200 x D forward FLOPs per token: exactly twice width 64's
    assert w["flops_per_token"]["head"] == 2 * 200 * 128 and w["flop_ratio"]["head"] == pytest.approx(2.0)
    assert w["body_params"] > r["widths"]["w64"]["body_params"] > r["widths"]["w32"]["body_params"]
    targets = [t for t in json.loads(out.read_text())["targets"] if t["target"] == "width_ratio"]
    assert sorted(t["config"] for t in targets) == ["w128 dense_tied", "w128 dense_untied", "w128 leviathan"]


def test_width_softmax_ids_keep_every_target():
    from leviathan.bench.sections.width import softmax_ids

    batches = [(torch.zeros(1, 3, dtype=torch.long), torch.tensor([[5, 9, 5]]))]
    assert softmax_ids(batches, 4, 20).tolist() == [0, 1, 5, 9]
    assert softmax_ids(batches, None, 20) is None
    with pytest.raises(bench.UserError, match="between the batches' 2 distinct targets"):
        softmax_ids(batches, 1, 20)


def test_bench_names_the_data_setting_whose_folder_holds_no_books(tmp_path, monkeypatch):
    """Round 32's note, carried in round 33: bench on a $LEVIATHAN_DATA folder without the Gutenberg books said only
    "training a BPE ... on stdlib sources", not the variable that chose the folder; ``load_data`` logs demo's
    ``io.books_note`` line first."""
    from leviathan.bench import runner

    class Stop(Exception):
        pass

    def stop(*args):
        raise Stop

    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path))
    monkeypatch.setattr(runner, "bench_tokenizer", stop)
    said: list[str] = []
    with pytest.raises(Stop):
        runner.load_data({"cpu"}, tmp_path / "cache", said.append)
    assert said and "$LEVIATHAN_DATA" in said[0] and str(tmp_path) in said[0] and "holds no Gutenberg books" in said[0]
