"""A NUL byte in the path a writer is given is one UserError naming the argument, before anything is made (issue 30
round 27, S95, S110, S227, S474, S551-S556, S559): every writer (the atomic writes, both Hugging Face classes'
``save_pretrained``, ``bake_adopted``, ``to_plain_llama``, ``prepare``, ``write_report``, ``train``'s run_dir,
``Tokenizer.save``, ``dump_yaml``, ``folder_lock``, ...) ended in Python's raw "ValueError: embedded null byte" from
its first os.stat, while the readers refused the same path in one line (S557, S558). The rule lives in
``value_rules.path_problem``, which every writer's place passes (``ownership.check_path_given``, ``check_not_inside``
and ``check_apart`` ask it too)."""

from __future__ import annotations

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]

SAID = r"holds a NUL byte \('\\x00', character \d+\), which no file or folder name can hold"
GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64))


def _native():
    from leviathan import CausalLM, ModelConfig

    return CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                max_position_embeddings=64))


def _writers(data, scratch):
    """(name, call) of every writer, each given a path with a NUL byte under ``scratch``."""
    from leviathan import io, locking, ownership
    from leviathan.config import dump_yaml
    from leviathan.data.prepare import prepare
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.eval.hf_tokenizer import write_hf_tokenizer, write_hf_tokenizer_owned
    from leviathan.experiments.ablation import write_ablation_report
    from leviathan.experiments.machinery.results import append_result
    from leviathan.experiments.report import write_report
    from leviathan.hf import adopt, bake_adopted
    from leviathan.hf.export import from_native, to_hf, to_plain_llama

    bad = str(scratch / "out\0put")
    adopted, native, tokenizer = adopt(_llama(), **GEN), _native(), load_tokenizer(data)
    return [
        ("atomic_write_text", lambda: io.atomic_write_text(bad, "x")),
        ("atomic_write_bytes", lambda: io.atomic_write_bytes(bad, b"x")),
        ("atomic_write_json", lambda: io.atomic_write_json(bad, {})),
        ("atomic_write_together", lambda: io.atomic_write_together({bad: "x"})),
        ("check_writable", lambda: io.check_writable(bad)),
        ("write_marker", lambda: ownership.write_marker(bad, "export")),
        ("folder_lock", lambda: locking.folder_lock(bad, "test").__enter__()),
        ("dump_yaml", lambda: dump_yaml({"a": 1}, bad)),
        ("Tokenizer.save", lambda: tokenizer.save(bad)),
        ("write_hf_tokenizer", lambda: write_hf_tokenizer(tokenizer, bad)),
        ("write_hf_tokenizer_owned", lambda: write_hf_tokenizer_owned(tokenizer, bad)),
        ("prepare", lambda: prepare(data, bad, "bpe:300")),
        ("write_report", lambda: write_report(scratch / "sweep", bad)),
        ("write_ablation_report", lambda: write_ablation_report([scratch / "sweep"], bad)),
        ("append_result", lambda: append_result(bad, {})),
        ("adopted save_pretrained", lambda: adopted.save_pretrained(bad)),
        ("LeviathanForCausalLM save_pretrained", lambda: from_native(native).save_pretrained(bad)),
        ("LeviathanForCausalLM save_owned", lambda: from_native(native).save_owned(bad)),
        ("bake_adopted", lambda: bake_adopted(adopted, bad)),
        ("to_plain_llama", lambda: to_plain_llama(native, bad)),
        ("to_hf", lambda: to_hf(native, bad)),
    ]


def test_every_writer_refuses_a_nul_byte_in_its_path_in_one_line(data, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    for name, call in _writers(data, scratch):
        with pytest.raises(UserError, match=SAID) as caught:
            call()
        assert "\n" not in str(caught.value), name
        assert list(scratch.iterdir()) == [], f"{name} made {list(scratch.iterdir())}"


def test_train_and_run_sweep_refuse_a_nul_byte_in_their_folder_before_any_work(data, tmp_path):
    from reliability_support import run_overrides, one_run_grid

    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import run_sweep
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    with pytest.raises(UserError, match=r"train: run_dir: .*" + SAID):
        train(load_run_config("tiny", run_overrides(data)), str(tmp_path / "run\0"))
    grid = load_grid(one_run_grid(data, tmp_path))
    with pytest.raises(UserError, match=r"run_sweep: out_dir: .*" + SAID):
        run_sweep(grid, str(tmp_path / "sw\0"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.yaml"]


def test_a_nul_byte_in_a_readers_path_is_named_too(tmp_path):
    from leviathan.experiments.machinery.results import read_results

    with pytest.raises(UserError, match=SAID):  # was "does not exist" (S558): the NUL is the fault
        read_results(str(tmp_path / "sw\0"))


def _readers(data, corpus, out):
    """(name, call, path given) of the readers that said a path with a NUL byte "does not exist" (``errors.missing``)
    or "no such built-in, file or directory" (issue 30 round 30, Y569, Y591, Y592, Y602, Y604), and siblings of theirs
    that ask ``errors.missing`` too."""
    from leviathan.checkpoint.read import load_model
    from leviathan.config import load_yaml
    from leviathan.data.meta import read_meta
    from leviathan.data.prepare import prepare
    from leviathan.data.sources import open_source
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.eval.stream import EvalStream
    from leviathan.hf import LeviathanForCausalLM

    text = str(corpus / "a.txt\0")
    return [
        ("prepare's source (Y569)", lambda: prepare(text, out, "bpe:300")),
        ("prepare's val_source (Y602)", lambda: prepare(str(corpus), out, "bpe:300", val_source=text)),
        ("open_source", lambda: open_source(text)),
        ("load_tokenizer (Y591)", lambda: load_tokenizer(str(data) + "\0/tokenizer.json")),
        ("EvalStream.from_text (Y592)", lambda: EvalStream.from_text(text, load_tokenizer(data))),
        ("LeviathanForCausalLM.from_pretrained (Y604)", lambda: LeviathanForCausalLM.from_pretrained(str(out) + "\0")),
        ("read_meta", lambda: read_meta(str(data) + "\0")),
        ("load_model", lambda: load_model(str(out) + "\0")),
        ("a config file", lambda: load_yaml(str(corpus / "c.yaml\0"))),
    ]


def test_a_nul_byte_in_a_readers_path_is_named_not_said_missing(data, tmp_path):
    """Each reader names the NUL (``errors.nul_byte``, the wording a writer's ``path_problem`` uses) where it said
    "does not exist", which sent the caller looking for a file; nothing is written. The same path without the NUL is
    still "does not exist" (or the reader's own words for a file that is not there)."""
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    corpus.mkdir()
    (corpus / "a.txt").write_text("some words of text\n" * 50)
    for name, call in _readers(data, corpus, out):
        with pytest.raises(UserError, match=SAID) as caught:
            call()
        said = str(caught.value)
        assert "\n" not in said and "does not exist" not in said and "no such" not in said, (name, said)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
    assert [p.name for p in corpus.iterdir()] == ["a.txt"]
    from leviathan.errors import missing, nul_byte

    assert missing(corpus / "b.txt") == "does not exist" and nul_byte(corpus / "b.txt") is None
    assert nul_byte(corpus / "b\0") == "holds a NUL byte ('\\x00', character %d), which no file or folder name can " \
        "hold" % (len(str(corpus)) + 3)
