"""Bad input gets one clear ``error: ...`` line (problem + fix), exit status 2, and damages nothing.

Every case goes through ``leviathan.cli.main`` as a user would. Where files existed before (a prepared
data folder, a run folder with checkpoints), their sha256 hashes are taken first and compared after the
failure. Stops that are not errors (SIGTERM, Ctrl-C, a diverged loss) are here too: they must leave the
last good checkpoint untouched and resumable.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
from torch.nn.modules.module import register_module_forward_hook

from leviathan.cli import main
from leviathan.model.llama import CausalLM
from leviathan.train import checkpoint as ckpt

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import (cli, one_error, refingerprint, refingerprint_data, run_overrides,  # noqa: E402
                                 tree_hashes, write_corpus)
# (reliability_support puts tests/integration on the path)
from test_train import DIVERGE, huge_lr_allowed  # noqa: E402,F401

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def fails(capsys, *argv: str) -> str:
    """Run the CLI, expect exit status 2 and return its single error line."""
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    return one_error(err)


def resume(run: Path, data: Path, *extra: str, **settings) -> list[str]:
    """``train ... --resume auto`` on ``run`` (the finished run's settings, changed by ``settings``)."""
    return ["train", *run_overrides(data, **settings), *extra, "--run-dir", str(run), "--resume", "auto", "--quiet"]


@pytest.fixture
def data_copy(data, tmp_path) -> Path:
    dst = tmp_path / "data"
    shutil.copytree(data, dst)
    return dst


@pytest.fixture(scope="module")
def other_tokenizer_data(tmp_path_factory) -> Path:
    """Data with the same vocabulary size (300) from a BPE trained on another corpus: other ids."""
    from leviathan.data.prepare import prepare

    root = tmp_path_factory.mktemp("other-tokenizer")
    out = root / "data"
    prepare(str(write_corpus(root / "corpus", seed=7)), out, tokenizer="bpe:300", val_fraction=0.2, progress=False,
            log=lambda msg: None)
    return out


# ---- preparing a corpus -------------------------------------------------------------------------
def _file(text: str):
    def make(d: Path) -> Path:
        (d / "corpus.txt").write_text(text)
        return d / "corpus.txt"
    return make


def _empty_folder(d: Path) -> Path:
    (d / "corpus").mkdir()
    return d / "corpus"


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "no-such-corpus", "does not exist; pass a file, a folder, a glob"),
    (_file(""), "holds no text (0 non-empty documents); check the path"),
    (_file(" \n\n \n"), "holds no text (0 non-empty documents); check the path"),
    (_empty_folder, "holds no readable files (looked for .txt"),
], ids=["missing", "empty-file", "whitespace-only", "empty-folder"])
def test_prepare_missing_or_empty_corpus(capsys, tmp_path, data_copy, make, message):
    before = tree_hashes(data_copy)
    source = make(tmp_path)
    line = fails(capsys, "prepare", source, "--out", data_copy, "--overwrite", "--tokenizer", "cl100k_base",
                 "--no-progress")
    assert message in line
    assert tree_hashes(data_copy) == before  # --overwrite never touched the old data
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temp folders


def test_prepare_strict_refuses_undecodable_bytes(capsys, tmp_path, data_copy):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("fine text\n")
    (corpus / "b.txt").write_bytes(b"caf\xe9 au lait\n")  # latin-1, not UTF-8
    before = tree_hashes(data_copy)
    line = fails(capsys, "prepare", corpus, "--out", data_copy, "--overwrite", "--strict",
                 "--tokenizer", "cl100k_base", "--no-progress")
    assert "b.txt: invalid UTF-8 at byte offset 3" in line
    assert "convert the file to UTF-8" in line and "drop --strict" in line
    assert tree_hashes(data_copy) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_prepare_on_a_full_disk(capsys, tmp_path, data_copy, monkeypatch):
    def full(path, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(np, "save", full)  # train_freq.npy, written after the token files
    before = tree_hashes(data_copy)
    line = fails(capsys, "prepare", write_corpus(tmp_path / "corpus", num_docs=5), "--out", data_copy, "--overwrite",
                 "--tokenizer", "cl100k_base", "--no-progress")
    # round 14 (A55): the line named the temporary folder's file, and options of train's (keep_last, --run-dir)
    assert f"'{data_copy}' (its train_freq.npy, written in the temporary folder '.{data_copy.name}.tmp-" in line, line
    assert "): no space left on device (the disk is full, or out of inodes: `df -h`, `df -i`); free disk space or " \
           "write to another disk (--out)" in line
    assert tree_hashes(data_copy) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # the temporary folder is gone


# ---- damaged prepared data ----------------------------------------------------------------------
def _truncate_odd(d: Path):
    raw = (d / "train.bin").read_bytes()
    (d / "train.bin").write_bytes(raw[:1001])


def _shard_of_another_preparation(d: Path):
    raw = (d / "train.bin").read_bytes()
    (d / "train.bin").write_bytes(raw[:1000])  # whole uint16 ids, but not the count meta.json records


def _id_beyond_vocab(d: Path):
    ids = np.fromfile(d / "train.bin", dtype=np.uint16)
    ids[100] = 300  # == vocab_size
    ids.tofile(d / "train.bin")
    refingerprint_data(d)  # meta.json rewritten too: the id check must hold on its own


def _foreign_meta(d: Path):
    (d / "meta.json").write_text("PK\x03\x04 not json")


def _meta_of_another_format(d: Path):
    meta = json.loads((d / "meta.json").read_text())
    (d / "meta.json").write_text(json.dumps({**meta, "format": 7}))


def _missing_split(d: Path):
    (d / "val.bin").unlink()


@pytest.mark.parametrize("damage, message", [
    (_truncate_odd, "train.bin is 1001 bytes, not a multiple of 2 (uint16): the file is truncated or damaged; re-copy"),
    (_shard_of_another_preparation, "train.bin holds 500 tokens but meta.json says 8,"),
    (_id_beyond_vocab, "train.bin: token id 300 at position 100 is >= vocab_size 300 from meta.json: the file belongs "
                       "to another tokenizer or is damaged; re-run `leviathan prepare --overwrite`"),
    (_foreign_meta, "meta.json is not valid JSON"),
    (_meta_of_another_format, "is not a leviathan data dir meta.json (format 7, expected 1)"),
    (_missing_split, "val.bin is missing; the data dir is incomplete; re-run `leviathan prepare`"),
], ids=["truncated-shard", "foreign-shard", "id-beyond-vocab", "foreign-meta", "meta-format", "missing-split"])
def test_damaged_data_is_refused_before_the_run_is_touched(capsys, run_copy, data_copy, damage, message):
    before = tree_hashes(run_copy)
    damage(data_copy)
    line = fails(capsys, *resume(run_copy, data_copy, max_steps=6))
    assert message in line
    assert tree_hashes(run_copy) == before


def test_missing_data_folder(capsys, tmp_path):
    line = fails(capsys, "train", *run_overrides(tmp_path / "nowhere"), "--run-dir", tmp_path / "run", "--quiet")
    assert "has no meta.json; prepare the data first (leviathan prepare) or set model.vocab_size" in line
    assert not (tmp_path / "run").exists()


def _long_name(tmp_path: Path) -> Path:
    return tmp_path / ("a" * 300)


def _under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "b0.txt").write_text("some text\n")
    return tmp_path / "b0.txt" / "d"


_NOT_THERE = [(_long_name, "is 300 bytes, more than the 255 the file system allows for one name"),
              (_under_a_file, "b0.txt' above it is a file, not a folder, so nothing can be under it")]


@pytest.mark.parametrize("vocab", ["null", "300"], ids=["vocab-from-data", "vocab-given"])
@pytest.mark.parametrize("where, said", _NOT_THERE, ids=["AD36-name-too-long", "AD37-under-a-file"])
def test_a_data_path_that_cannot_exist_gets_the_inputs_line(capsys, tmp_path, vocab, where, said):
    """Round 33 (AD36, AD37): a 300-byte data.path got the output's line "the file name is too long ...; choose a
    shorter name ... (--run-dir)" (pathlib's exists raised ENAMETOOLONG), and one under a file "has no meta.json;
    prepare the data first" (model.vocab_size from the data). ``meta.data_folder_problem``: the input named, with why."""
    path = where(tmp_path)
    line = fails(capsys, "train", *run_overrides(path), f"model.vocab_size={vocab}", "--run-dir", tmp_path / "run",
                 "--quiet")
    assert line.startswith("error: data.path ") and " does not exist: " in line and said in line, line
    assert "--run-dir" not in line and "meta.json" not in line and not (tmp_path / "run").exists()


@pytest.mark.parametrize("where, said", _NOT_THERE, ids=["name-too-long", "under-a-file"])
def test_eval_data_that_cannot_exist_gets_the_inputs_line(capsys, tmp_path, run_copy, where, said):
    """Round 33 (AD36's kind in eval): ``eval --data`` of a 300-byte name got the output's line "the file name is too
    long ...; choose a shorter name" (pathlib's exists). ``meta.data_folder_problem``, as train's data.path."""
    line = fails(capsys, "eval", run_copy, "--data", where(tmp_path))
    assert " does not exist: " in line and said in line and "pass a folder `leviathan prepare` wrote as --data" in line


def test_a_mistyped_key_is_named_before_the_missing_data(capsys, tmp_path):
    """Round 5 left this: with data not prepared yet, a mistyped key was hidden behind the data error (fix the data,
    rerun, and only then learn of the typo). The config's own mistakes come first."""
    line = fails(capsys, "train", *run_overrides(tmp_path / "nowhere"), "model.hiden_size=8", "--run-dir",
                 tmp_path / "run", "--quiet")
    assert "unknown key 'model.hiden_size' in ModelConfig; did you mean 'model.hidden_size'?" in line


# ---- tokenizers ---------------------------------------------------------------------------------
def test_resume_on_data_of_another_tokenizer(capsys, run_copy, other_tokenizer_data):
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, other_tokenizer_data, max_steps=6))
    assert "cannot resume: the checkpoint" in line and "was trained with tokenizer 'bpe:300' (vocabulary 300)" in line
    assert "was prepared with a different one ('bpe:300', vocabulary 300) that maps text to other ids" in line
    assert "--tokenizer" in line  # the fix: prepare the corpus with the checkpoint's tokenizer
    assert tree_hashes(run_copy) == before


def test_eval_on_data_of_another_tokenizer(capsys, run_copy, other_tokenizer_data):
    before = tree_hashes(run_copy)
    line = fails(capsys, "eval", run_copy, "--data", other_tokenizer_data)
    assert "cannot evaluate" in line and "maps text to other ids" in line
    assert tree_hashes(run_copy) == before


def test_tokenizer_file_that_contradicts_the_data(capsys, tmp_path, data_copy):
    spec = json.loads((data_copy / "tokenizer.json").read_text())
    spec["model"]["vocab"]["zzzz"] = 300  # one more id than meta.json's vocab_size: not this data's tokenizer
    (data_copy / "tokenizer.json").write_text(json.dumps(spec))
    line = fails(capsys, "train", *run_overrides(data_copy), "--run-dir", tmp_path / "run", "--quiet")
    assert "has vocab_size=301 but its metadata says 300; the directory was edited by hand; re-create it" in line
    assert not (tmp_path / "run").exists()


# ---- checkpoints of another model ---------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    ({"model.embedding": "dense_tied"}, "embedding: 'leviathan' in the checkpoint, 'dense_tied' now"),
    ({"model.num_hidden_layers": 3}, "num_hidden_layers: 2 in the checkpoint, 3 now"),
], ids=["variant", "size"])
def test_resume_a_checkpoint_of_another_model(capsys, data, run_copy, change, message):
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, data, max_steps=6, **change))
    assert "the model section differs from the checkpoint's" in line and message in line
    assert "resume with the checkpoint's model settings" in line
    assert tree_hashes(run_copy) == before


@pytest.mark.parametrize("how", ["auto", "run-folder", "step-folder"])
def test_a_resume_without_config_continues_with_the_checkpoints_own_config(capsys, run_copy, how):
    """Round 5 left this: ``--resume`` with no ``--config`` built the default config (another data path, another
    model) and failed naming neither; the checkpoint's own config.yaml is the one a resume means."""
    target = {"auto": "auto", "run-folder": str(run_copy),
              "step-folder": str(run_copy / "checkpoints" / "step-00000004")}[how]
    run_dir = run_copy if how == "auto" else run_copy.parent / "continued"
    code = main(["train", "max_steps=6", "--run-dir", str(run_dir), "--resume", target, "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "note: no --config given: resuming with the checkpoint's own config (" in err
    assert "step-00000004/config.yaml), overrides on top (max_steps=6)" in err
    state = json.loads((run_dir / "checkpoints" / "step-00000006" / "state.json").read_text())
    assert state["step"] == 6


def test_a_resume_without_config_of_a_folder_without_checkpoints_starts_from_the_defaults(capsys, tmp_path):
    """Nothing to resume: ``--resume auto`` is a fresh start, and a fresh start without --config uses the defaults
    (here they name data that does not exist, which is the error a user sees)."""
    line = fails(capsys, "train", "--run-dir", tmp_path / "empty", "--resume", "auto", "--quiet")
    assert "no --config given" not in line


def _weights_of_another_size(tensors: dict) -> dict:
    return {**tensors, "model.norm.weight": tensors["model.norm.weight"][:32].clone()}


def _weights_of_another_variant(tensors: dict) -> dict:
    out = {k: v for k, v in tensors.items() if not k.startswith("model.embed_tokens.")}
    out["model.embed_tokens.weight"] = tensors["lm_head.weight"].clone()
    return out


@pytest.mark.parametrize("swap, message", [
    (_weights_of_another_size, "do not fit the model built from its config (model.norm.weight is (32,) in the file "
                               "but (64,) in the model): they come from a model of another size"),
    (_weights_of_another_variant, "do not match the model: missing ['model.embed_tokens.codebooks'"),
], ids=["size", "variant"])
def test_load_weights_of_another_model(capsys, run_copy, swap, message):
    from safetensors.torch import load_file, save_file

    step = run_copy / "checkpoints" / ckpt.step_name(4)
    save_file(swap(load_file(str(step / "model.safetensors"))), str(step / "model.safetensors"))
    refingerprint(step)  # state.json rewritten too: the shape check must hold on its own
    before = tree_hashes(run_copy)
    line = fails(capsys, "eval", step)
    assert message in line and "use the config.yaml the weights were trained with" in line
    assert tree_hashes(run_copy) == before


@pytest.mark.parametrize("verb, line, edited", [
    ("eval", "  hidden_size: 64\n", "  hidden_size: -3\n"),
    ("resume", "  hidden_size: 64\n", "  hidden_size: -3\n"),
    ("eval", "  vocab_size: 300\n", "  vocab_size: 10000000000000\n"),  # a model no memory holds: refused first
], ids=["eval", "resume", "vocab"])
def test_an_impossible_value_in_a_steps_config_names_the_file_and_the_fix(capsys, data, run_copy, verb, line, edited):
    step = run_copy / "checkpoints" / ckpt.step_name(4)
    text = (step / "config.yaml").read_text()
    assert line in text
    (step / "config.yaml").write_text(text.replace(line, edited))
    refingerprint(step)  # edited with its fingerprint: the value check must hold on its own
    before = tree_hashes(run_copy)
    argv = ("eval", step) if verb == "eval" else ("train", *run_overrides(data), "--run-dir", run_copy,
                                                 "--resume", step)
    line = fails(capsys, *argv)
    assert f"'{step / 'config.yaml'}' does not read as the config it was saved as (model.{edited.split(':')[0].strip()}" \
        in line
    assert "restore the file, or resume from an earlier checkpoint" in line
    assert tree_hashes(run_copy) == before


# ---- configuration ------------------------------------------------------------------------------
def test_misspelled_key_in_a_config_file(capsys, data, run_copy, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("model:\n  preset: cpu-tiny\n  hiden_size: 64\n")
    before = tree_hashes(run_copy)
    line = fails(capsys, "train", "--config", config, *run_overrides(data), "--run-dir", run_copy, "--resume", "auto")
    assert line == "error: unknown key 'model.hiden_size' in ModelConfig; did you mean 'model.hidden_size'?"
    assert tree_hashes(run_copy) == before


@pytest.mark.parametrize("override, message", [
    ("optim.lr=fast", "error: optim.lr: expected a number, got 'fast'"),
    ("max_steps=1.5", "error: max_steps: expected an integer, got 1.5"),
    ("model.hidden_size=true", "error: model.hidden_size: expected an integer, got True"),
    ("data.shuffle=window", "error: data.shuffle: 'window' is not one of 'windows', 'buffer', 'none'; did you mean "
                            "'windows'?"),
    ("optim.learning_rate=1e-3", "error: unknown key 'optim.learning_rate' in OptimConfig; valid keys:"),
], ids=["lr-text", "steps-float", "size-bool", "shuffle-typo", "unknown-key"])
def test_mistyped_or_unknown_settings(capsys, data, run_copy, override, message):
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, data, max_steps=6), override)
    assert line.startswith(message)
    assert tree_hashes(run_copy) == before


@pytest.mark.parametrize("override, message", [
    ("model.hidden_size=0", "model.hidden_size must be a positive integer, got 0"),
    ("model.num_attention_heads=-2", "model.num_attention_heads must be a positive integer, got -2"),
    ("micro_batch_size=-4", "micro_batch_size must be a positive integer, got -4"),
    ("data.seq_len=0", "data.seq_len must be a positive integer, got 0"),
    ("max_steps=0", "max_steps must be a positive integer or null, got 0"),
], ids=["width", "heads", "micro-batch", "seq-len", "steps"])
def test_zero_or_negative_sizes(capsys, data, run_copy, override, message):
    before = tree_hashes(run_copy)
    assert message in fails(capsys, *resume(run_copy, data), override)
    assert tree_hashes(run_copy) == before


@pytest.mark.parametrize("argv, message", [
    (["eval", "{run}", "--batch-size", "0"], "argument --batch-size: must be a positive integer, got 0"),
    (["eval", "{run}", "--max-tokens", "-5"], "argument --max-tokens: must be a positive integer, got -5"),
    (["generate", "{run}", "--max-new-tokens", "0"], "argument --max-new-tokens: must be a positive integer, got 0"),
], ids=["eval-batch", "eval-tokens", "generate-tokens"])
def test_zero_or_negative_command_line_sizes(capsys, run_copy, argv, message):
    with pytest.raises(SystemExit) as info:  # argparse: usage + one error line, status 2
        main([a.format(run=run_copy) for a in argv])
    assert info.value.code == 2
    assert message in one_error(capsys.readouterr().err)


def test_sequence_length_beyond_the_model(capsys, data, run_copy):
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, data, max_steps=6), "data.seq_len=256")
    assert line == ("error: data.seq_len=256 exceeds model.max_position_embeddings=128; lower data.seq_len or raise "
                    "model.max_position_embeddings")
    line = fails(capsys, "eval", run_copy, "--seq-len", "1000")
    assert line == ("error: --seq-len 1000 exceeds the model's max_position_embeddings (128); pass a smaller "
                    "--seq-len")
    assert tree_hashes(run_copy) == before


# ---- where the run is written -------------------------------------------------------------------
def test_run_folder_that_is_a_file(capsys, data, tmp_path):
    blocker = tmp_path / "runs"
    blocker.write_text("not a folder\n")
    for run_dir in (blocker, blocker / "tiny"):
        line = fails(capsys, "train", *run_overrides(data), "--run-dir", run_dir, "--quiet")
        assert f"cannot use run folder '{run_dir}': '{blocker}' is a file, not a folder; choose another --run-dir" in line
    assert blocker.read_text() == "not a folder\n"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="running as root: chmod does not stop root from writing (test_run_folder_that_is_a_file "
                           "covers an unusable run folder)")
def test_run_folder_without_write_permission(capsys, data, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        line = fails(capsys, "train", *run_overrides(data), "--run-dir", locked / "run", "--quiet")
    finally:
        locked.chmod(0o700)
    assert "is not writable (permission denied); make it writable (chmod u+w) or choose another --run-dir" in line
    assert list(locked.iterdir()) == []


def test_disk_full_during_a_checkpoint_write(capsys, data, run_copy, monkeypatch):
    real = ckpt.save_file

    def half_then_full(tensors, path, *args, **kwargs):  # the disk fills up in the middle of the weights
        real(tensors, path, *args, **kwargs)
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(ckpt, "save_file", half_then_full)
    before = tree_hashes(run_copy / "checkpoints")
    line = fails(capsys, *resume(run_copy, data, max_steps=8))
    assert line.startswith(f"error: could not save the checkpoint of step 6 of run '{run_copy}' ('")
    assert "no space left on device (the disk is full, or out of inodes: `df -h`, `df -i`); free disk space " \
           "(delete old runs or checkpoints, or lower " \
           "keep_last) or write to another disk (--run-dir / --out))" in line
    assert f"the last complete checkpoint '{run_copy / 'checkpoints' / 'step-00000004'}' is intact" in line
    assert line.endswith("after making room, continue with --resume auto")
    assert tree_hashes(run_copy / "checkpoints") == before  # no partial folder, old ones untouched
    assert ckpt.latest_checkpoint(run_copy).name == "step-00000004"
    ckpt.load_state(ckpt.latest_checkpoint(run_copy))
    monkeypatch.setattr(ckpt, "save_file", real)  # space freed: the same command continues
    assert main(resume(run_copy, data, max_steps=8)) == 0
    assert [s for s, _ in ckpt.list_checkpoints(run_copy)] == [2, 4, 6, 8]


# ---- stops: divergence, SIGTERM, Ctrl-C ---------------------------------------------------------
@contextlib.contextmanager
def on_micro_step(n: int, action):
    """Run ``action()`` during this process's ``n``-th training forward of the model (2 micro steps per optimizer
    step), through torch's global module forward hook."""
    calls = {"n": 0}

    def hook(module, args, output):
        if isinstance(module, CausalLM) and module.training:
            calls["n"] += 1
            if calls["n"] == n:
                action()

    handle = register_module_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def test_non_finite_loss_keeps_the_last_good_checkpoint(capsys, data, run_copy, huge_lr_allowed):
    before = tree_hashes(run_copy / "checkpoints")
    line = fails(capsys, *resume(run_copy, data, max_steps=8, **DIVERGE))  # step 5 explodes the weights, 6 is NaN
    assert line.startswith("error: training diverged at step 6: loss is nan at lr ")
    assert f"the last good checkpoint is {run_copy / 'checkpoints' / 'step-00000004'}" in line
    assert "Try a lower learning rate, for example optim.lr=" in line and "continue with --resume auto" in line
    assert tree_hashes(run_copy / "checkpoints") == before
    assert train_steps(run_copy) == [1, 2, 3, 4, 5]  # the diverged step 6 is not logged


def train_steps(run: Path) -> list[int]:
    return [r["step"] for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines()) if "train_loss" in r]


@pytest.mark.parametrize("sig, code, last_line", [
    (signal.SIGTERM, 0, "stopped by SIGTERM at step 6; checkpoint saved, continue with --resume auto"),  # --quiet too
    (signal.SIGINT, 130, "stopped by SIGINT at step 6; checkpoint saved, continue with --resume auto"),  # one line
    # round 6: SIGHUP (the terminal closed) killed the run mid-step, no checkpoint, no word (exit 129)
    (signal.SIGHUP, 0, "stopped by SIGHUP at step 6; checkpoint saved, continue with --resume auto"),
], ids=["SIGTERM", "Ctrl-C", "SIGHUP"])
def test_signal_saves_and_leaves_earlier_checkpoints_alone(capsys, data, run_copy, sig, code, last_line):
    before = tree_hashes(run_copy / "checkpoints")
    with on_micro_step(3, lambda: os.kill(os.getpid(), sig)):  # during step 6 of the run resumed at 4
        assert main(resume(run_copy, data, max_steps=8, checkpoint_interval=0)) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == last_line
    assert f"{signal.Signals(sig).name} received: finishing this step, saving a checkpoint, then stopping" in err
    after = tree_hashes(run_copy / "checkpoints")
    assert {k: v for k, v in after.items() if not k.startswith("step-00000006")} == before
    assert ckpt.latest_checkpoint(run_copy).name == "step-00000006"
    assert main(resume(run_copy, data, max_steps=8, checkpoint_interval=0)) == 0
    assert train_steps(run_copy) == list(range(1, 9))


def test_a_sighup_that_nohup_ignores_stays_ignored(monkeypatch):
    """SIGHUP stops a verb like SIGTERM, except where it is ignored when the verb starts: ``nohup leviathan train``
    must outlive its terminal (``leviathan.stop_signals``)."""
    from leviathan.stop_signals import stop_signals

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert stop_signals() == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert stop_signals() == [signal.SIGTERM, signal.SIGHUP]


def test_second_ctrl_c_during_the_checkpoint_write(capsys, data, run_copy, monkeypatch):
    real = ckpt.save_file

    def impatient(tensors, path, *args, **kwargs):  # the user presses Ctrl-C again while it saves
        real(tensors, path, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(ckpt, "save_file", impatient)
    before = tree_hashes(run_copy / "checkpoints")
    with on_micro_step(3, lambda: os.kill(os.getpid(), signal.SIGINT)):  # during step 6
        assert main(resume(run_copy, data, max_steps=8, checkpoint_interval=0)) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == (  # the same line as any verb's stop (round 5 left
        "stopped by Ctrl-C (SIGINT) before `leviathan train` finished: its temporary files are removed and "  # a bare
        "nothing half-written is taken as valid; run the same command again")  # 'interrupted')
    assert tree_hashes(run_copy / "checkpoints") == before  # no half-written step-6, no .tmp-* left
    assert ckpt.latest_checkpoint(run_copy).name == "step-00000004"


def test_a_file_of_the_run_given_as_the_checkpoint_names_the_folder_to_pass(capsys, finished_run, tmp_path):
    """Round 8 (N5): ``eval RUN/config.yaml`` said the file "holds no complete checkpoint (expected
    checkpoints/step-XXXXXXXX folders)"."""
    line = fails(capsys, "eval", finished_run / "config.yaml")
    assert f"checkpoint '{finished_run / 'config.yaml'}' is a file, not a folder; pass the run folder " \
           f"('{finished_run}')" in line
    text = tmp_path / "corpus" / "b0.txt"  # round 14 (B235, B371): a text file's folder was offered as the run
    text.parent.mkdir()
    text.write_text("some text\n")
    line = fails(capsys, "generate", text, "--prompt", "The")
    assert "pass a run folder (as `leviathan train` writes)" in line and f"'{text.parent}'" not in line, line


def test_a_data_or_sweep_folder_given_as_the_checkpoint_is_named_for_what_it_is(capsys, data, tmp_path):
    """Round 9 (M115, M122, M124): ``eval DATA``, ``lm-eval DATA`` and ``export SWEEP`` said only "holds no complete
    checkpoint"; the folder is now named for what it is, with the way on."""
    line = fails(capsys, "eval", data, "--max-tokens", "64")
    assert "it is a prepared data folder (meta.json, as `leviathan prepare` writes): pass a run folder" in line
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "results.jsonl").write_text("")
    line = fails(capsys, "export", sweep, tmp_path / "hf")
    runs = sweep / "runs" / "NAME"
    assert f"it is a sweep folder (results.jsonl, grid.json): pass one of its runs ('{runs}')" in line
    assert not (tmp_path / "hf").exists()


@pytest.mark.parametrize("name, what", [
    ("results.jsonl", "is a sweep's results.jsonl (written by `leviathan sweep`: results rows, one JSON object a line)"),
    ("metrics.jsonl", "is a run's metrics.jsonl (written by `leviathan train`: training metrics, one JSON object a "
                      "line)"),
    ("checkpoints/step-00000004/model.safetensors", "is a safetensors file (a model's weights)"),
    ("checkpoints/step-00000004/optimizer.pt", "is a zip archive (PyTorch saves its .pt files as one)"),
    # round 10 (Q149): a JSON file leviathan writes ("unknown key 'path' in RunConfig; did you mean 'data.path'?")
    ("checkpoints/step-00000004/state.json", "is a checkpoint's state.json (written by `leviathan train`)"),
    ("leviathan_output.json", "is a verb's ownership marker (leviathan_output.json)"),
])
def test_a_file_that_is_not_settings_given_as_the_config_is_named_for_what_it_is(capsys, finished_run, tmp_path,
                                                                                 name, what):
    """Round 9 (M116): ``train --config results.jsonl`` said "not valid YAML (expected '<document start>' ...);
    correct it where named", and a checkpoint's weights "not UTF-8 text": the file is named for what it is, and the
    line says what --config takes. A results.jsonl is a sweep's; a run folder's metrics.jsonl has the same form."""
    path = finished_run / name
    if name == "results.jsonl":  # two rows, as a sweep of two runs writes them (the second torn: still results)
        row = {"name": "a-leviathan-s0", "variant": "leviathan", "seed": 0, "params": {"total": 1}, "eval": {}}
        path = tmp_path / name
        path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n" + json.dumps(row)[:20])
    before = tree_hashes(finished_run)
    for verb in (["train", "--config", path, "--run-dir", tmp_path / "run"], ["sweep", "--grid", path, "--out",
                                                                            tmp_path / "sweep"]):
        line = fails(capsys, *verb)
        assert f"config file '{path}' {what}, not YAML settings; pass a YAML file of settings (for train a run " \
               f"config, such as `--config tiny` or a run folder's config.yaml; for sweep a grid file)" in line
    assert not (tmp_path / "run").exists() and not (tmp_path / "sweep").exists()
    assert tree_hashes(finished_run) == before


def test_analyze_frequency_refuses_the_options_it_reads_only_with_runs(capsys, finished_run, tmp_path):
    """Round 10 (Q154): ``analyze frequency SWEEP --data RUN_FOLDER`` printed the rows' buckets, exit 0: --data (and
    --seq-len, --max-tokens) are read only with --runs, and were ignored without a word."""
    line = fails(capsys, "analyze", "frequency", tmp_path, "--data", finished_run, "--max-tokens", "64")
    assert "--data, --max-tokens are read only with --runs (they say how to evaluate checkpoints now); without " \
           "--runs the rows' own bucket losses are shown: drop them, or pass --runs RUN_DIR ..." in line


def test_a_run_folder_or_a_meta_json_given_as_data_is_named_for_what_it_is(capsys, data, finished_run, tmp_path):
    """Round 10 (Q141, Q157): a run folder as ``data.path`` was "has no meta.json; prepare the data first", and the
    data folder's meta.json as ``--data`` "is not a prepared data folder (no meta.json)"."""
    overrides = [o for o in run_overrides(data) if not o.startswith("data.path=")]
    line = fails(capsys, "train", *overrides, f"data.path={finished_run}", "--run-dir", tmp_path / "run")
    assert f"data.path '{finished_run}' is a run folder (checkpoints/, as `leviathan train` writes), not prepared " \
           f"data; pass the data folder it trained on (data.path in its config.yaml)" in line
    line = fails(capsys, "eval", finished_run, "--data", data / "meta.json", "--max-tokens", "64")
    assert f"'{data / 'meta.json'}' is a file, not a folder; pass its folder ('{data}')" in line
    assert not (tmp_path / "run").exists()
    # round 14 (A70, A71, A167): a text file as data.path said no fix; eval's fix named the --data it was given
    text = tmp_path / "notes.txt"
    text.write_text("some text\n")
    line = fails(capsys, "train", *overrides, f"data.path={text}", "--run-dir", tmp_path / "run")
    assert f"is a file, not a folder; pass a folder `leviathan prepare` wrote (`leviathan prepare {text} --out DIR` " \
           f"makes one of a text file)" in line, line
    line = fails(capsys, "eval", finished_run, "--data", text, "--max-tokens", "64")
    assert "pass --data or --text" not in line and line.endswith("(or score a text file with --text FILE)"), line
    empty = tmp_path / "empty"
    empty.mkdir()
    line = fails(capsys, "eval", finished_run, "--data", empty, "--max-tokens", "64")
    assert f"'{empty}' is not a prepared data folder (no meta.json); prepare it with `leviathan prepare SOURCE --out " \
           f"{empty}`, or pass a folder `leviathan prepare` wrote (or score a text file with --text FILE)" in line, line


def test_a_pipe_or_a_device_given_as_a_file_is_named_for_what_it_is(capsys, tmp_path):
    """Round 11 (S159, S162): ``prepare FIFO`` said "source 'p.txt' does not exist" and ``analyze embeddings REC
    /dev/zero`` "'/dev/zero' does not exist": both exist; they are a pipe and a device."""
    fifo = tmp_path / "p.txt"
    os.mkfifo(fifo)
    line = fails(capsys, "prepare", fifo, "--out", tmp_path / "d", "--tokenizer", "bpe:300")
    assert "is a named pipe (FIFO), not a regular file" in line, line
    line = fails(capsys, "analyze", "embeddings", "/dev/zero", "/dev/zero")
    assert "'/dev/zero' is a character device, not a regular file" in line, line
    assert not (tmp_path / "d").exists()


def test_a_dangling_link_in_a_corpus_folder_is_one_line_naming_it(tmp_path):
    """Round 18 (G391, G392, G471): a symbolic link to nothing in a corpus folder (or a sub-folder) ended `leviathan
    prepare` and the API's prepare in a FileNotFoundError traceback from the fingerprint's stat."""
    from reliability_support import cli_error, write_corpus

    from leviathan.data.prepare import prepare
    from leviathan.errors import UserError

    corpus = write_corpus(tmp_path / "corpus", seed=2)
    (Path(corpus) / "sub").mkdir()
    os.symlink("/nonexistent", Path(corpus) / "sub" / "dead.txt")
    line = cli_error(["prepare", corpus, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--val-fraction", "0"])
    assert "dead.txt' in the corpus folder" in line and "symbolic link to '/nonexistent'" in line, line
    with pytest.raises(UserError, match="symbolic link to '/nonexistent'"):
        prepare(corpus, tmp_path / "d", "bpe:300", val_fraction=0)
    assert not (tmp_path / "d").exists()


def test_a_users_folder_with_a_meta_json_that_is_no_json_is_not_offered_overwrite(capsys, tmp_path):
    """Round 11 (R65): a user's folder whose meta.json is a link to a text file: prepare --out said "the data dir is
    damaged; pass --overwrite", and --overwrite was then refused (no marker). The first line now says so."""
    from reliability_support import write_corpus

    corpus = write_corpus(tmp_path / "corpus", seed=2)
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "meta.json").symlink_to(next(p for p in Path(corpus).rglob("*") if p.is_file()))
    line = fails(capsys, "prepare", corpus, "--out", folder, "--tokenizer", "bpe:300", "--no-progress")
    assert "holds no marker of `leviathan prepare`, so --overwrite (overwrite=True) would not replace it either" in \
        line, line


@pytest.mark.parametrize("size, words", [("100", "is too small: it needs 256 byte tokens"),
                                         ("99999999999", "is above the 262,144 supported here")])
def test_a_bpe_size_out_of_range_is_refused_before_any_work(capsys, tmp_path, size, words):
    """Round 8's leftover: ``prepare --tokenizer bpe:99999999999`` printed "training a byte-level BPE with
    99,999,999,999 ids" before refusing the size."""
    from reliability_support import write_corpus

    corpus = write_corpus(tmp_path / "corpus", seed=2)
    assert main(["prepare", str(corpus), "--out", str(tmp_path / "d"), "--tokenizer", f"bpe:{size}",
                 "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert words in one_error(err) and "training a byte-level BPE" not in out + err, err
    assert not (tmp_path / "d").exists()


def test_a_pipe_where_a_verb_reads_a_file_is_one_error_not_a_hang(data, finished_run, tmp_path):
    """Round 12 (T60, T64, T72, T190, T204): a named pipe among a corpus folder's files, as a run's metrics.jsonl or as
    a results folder's results.jsonl / a sweep's grid.json made the verb wait forever in open() (train deaf to
    SIGTERM). Each is now one error naming the pipe."""
    import subprocess

    from reliability_support import REPO, cli, write_corpus

    corpus = write_corpus(tmp_path / "corpus", seed=2)
    os.mkfifo(Path(corpus) / "zz.txt")
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    (run / "metrics.jsonl").unlink()
    os.mkfifo(run / "metrics.jsonl")
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    os.mkfifo(sweep / "grid.json")
    (sweep / "results.jsonl").write_text(json.dumps({"name": "r0", "variant": "dense_tied"}) + "\n")
    collect = [sys.executable, str(REPO / "scripts" / "collect_results.py"), str(sweep), "--dest", str(tmp_path / "d")]
    for argv, shown in ((["prepare", corpus, "--out", tmp_path / "d1", "--tokenizer", "bpe:300", "--no-progress"],
                         "zz.txt"),
                        (["train", *run_overrides(data, max_steps=6), "--run-dir", run, "--resume", "auto", "--quiet"],
                         "metrics.jsonl")):
        proc = cli(argv, timeout=120)
        assert proc.returncode == 2 and f"{shown}' " in one_error(proc.stderr), proc.stderr
        assert "is a named pipe (FIFO), not a regular file" in proc.stderr
    proc = subprocess.run(collect, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 2 and "grid.json' is a named pipe (FIFO)" in one_error(proc.stderr), proc.stderr


def test_one_source_named_twice_is_refused(capsys, tmp_path):
    """Round 12 (U200): ``prepare same.txt same.txt`` counted the document twice and put one copy in each split, so
    validation was a copy of training; the same file as --val-source likewise."""
    text = tmp_path / "same.txt"
    text.write_text("the quick brown fox jumps over the lazy dog. " * 200)
    for extra in ([str(text)], ["--val-source", str(text)]):
        line = fails(capsys, "prepare", text, *extra, "--out", tmp_path / "d", "--tokenizer", "bpe:300",
                     "--no-progress")
        assert "are one source named twice" in line, line
    assert not (tmp_path / "d").exists()


def test_a_validation_file_that_is_also_a_training_document_is_refused(tmp_path):
    """F180, F181, G115, G118, G119: ``prepare corpus --val-source corpus/b.txt`` (the file inside the source folder),
    or a byte-identical copy of b.txt under another name, trained on the validation document and then scored on it,
    without a word. The first is refused before anything is read, the copy by its digest; nothing is left. A
    validation file of other text is prepared as before."""
    from leviathan.data.prepare import prepare
    from leviathan.errors import UserError

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, word in enumerate(("alpha", "bravo", "charlie")):
        (corpus / f"{word}.txt").write_text(f"{word} document number {i}. " * 300)
    (tmp_path / "copy.txt").write_bytes((corpus / "bravo.txt").read_bytes())
    (tmp_path / "other.txt").write_text("a held-out text of other words. " * 50)
    for val, shown in ((corpus / "bravo.txt", "lies inside the folder"),
                       (tmp_path / "copy.txt", "1 of the 1 documents of the validation source")):
        proc = cli(["prepare", corpus, "--val-source", val, "--out", tmp_path / "d", "--tokenizer", "bpe:300",
                    "--no-progress"], timeout=120)
        assert proc.returncode == 2 and shown in one_error(proc.stderr), proc.stderr
        with pytest.raises(UserError, match=shown):
            prepare(str(corpus), tmp_path / "d", "bpe:300", val_source=str(val), progress=False, log=lambda m: None)
        assert not (tmp_path / "d").exists() and not list(tmp_path.glob(".d*"))
    meta = prepare(str(corpus), tmp_path / "d", "bpe:300", val_source=str(tmp_path / "other.txt"), progress=False,
                   log=lambda m: None)
    assert meta["splits"]["train"]["documents"] == 3 and meta["splits"]["val"]["documents"] == 1


def test_a_verbs_output_inside_a_corpus_folder_is_named_not_read(exported, tmp_path):
    """F72, F74: ``prepare mix`` of a corpus folder holding an export (``mix/exp``) tokenized the export's README.md,
    its model card, as a third document, without a word ('prepare exp1' alone is refused as an export's output); a
    sweep folder there was refused at its results.jsonl, the cause unnamed. A folder a verb wrote, met in the walk, is
    refused naming it; nothing is written; the corpus without it is prepared."""
    mix = tmp_path / "mix"
    mix.mkdir()
    for i in range(3):
        (mix / f"doc{i}.txt").write_text(f"document {i} of the corpus, with words of its own. " * 100)
    shutil.copytree(exported, mix / "sub" / "exp")
    proc = cli(["prepare", mix, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--no-progress"], timeout=120)
    line = one_error(proc.stderr)
    assert proc.returncode == 2 and f"'{mix / 'sub' / 'exp'}' in the corpus folder '{mix}' is the output of " \
        "`leviathan export`" in line and "move it out of the corpus folder" in line, line
    assert not (tmp_path / "d").exists()
    shutil.move(mix / "sub" / "exp", tmp_path / "exp")
    proc = cli(["prepare", mix, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--no-progress"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    splits = json.loads((tmp_path / "d" / "meta.json").read_text())["splits"]
    assert splits["train"]["documents"] + splits["val"]["documents"] == 3


def test_resume_auto_of_a_run_killed_before_its_first_checkpoint_starts_it_again_as_begun(capsys, run_copy):
    """Round 14 (A247, A252): ``train --run-dir R --resume auto`` (no --config) of a run killed before its first
    checkpoint built the default config and stopped on "model.vocab_size is null ... 'data/stdlib' has no meta.json".
    The config.yaml train wrote when the run started is used, with a note."""
    import shutil

    from leviathan.cli import main

    shutil.rmtree(run_copy / "checkpoints")  # as a kill -9 before the first save leaves it
    capsys.readouterr()
    assert main(["train", "--run-dir", str(run_copy), "--resume", "auto", "--quiet", "max_steps=2"]) == 0
    err = capsys.readouterr().err
    assert "no checkpoint in" in err and "starting the run again with the config.yaml it was started with" in err, err
    assert (run_copy / "checkpoints").is_dir()


def test_a_run_folder_given_to_prepare_as_its_corpus_is_named_as_a_run(capsys, finished_run, tmp_path):
    """Round 14 (A117): ``prepare RUN --out X`` read the run's metrics.jsonl as a corpus and said "no 'text' field ...;
    pass --text-field NAME", a fix that would make a corpus of metrics."""
    line = fails(capsys, "prepare", finished_run, "--out", tmp_path / "x", "--tokenizer", "bpe:300", "--no-progress")
    assert f"source '{finished_run}' is the output of `leviathan train`" in line and "not a corpus" in line, line
    assert "--text-field" not in line and not (tmp_path / "x").exists()


def test_a_json_record_cut_off_is_counted_aloud_by_prepare(capsys, tmp_path):
    """Round 14 (B208): a JSONL corpus whose last record was cut off was prepared without it and without a word (only
    meta.json's source_stats counted it)."""
    from leviathan.cli import main

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "the cat sat on the mat"}\n{"text": "the dog')
    assert main(["prepare", str(corpus), "--out", str(tmp_path / "d"), "--tokenizer", "bpe:300", "--val-fraction",
                 "0", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "1 JSON record(s) skipped (not valid JSON, or a null text; --strict refuses them)" in err, err


def test_an_input_whose_name_is_too_long_to_exist_is_said_not_to_exist(finished_run, tmp_path):
    """Round 14 (B328): an INPUT path whose name is 300 bytes (``eval RUN --text X300.txt``, ``report X300``,
    ``lm-eval X300``, collect_results.py X300, ``eval X300``) got the advice for an output, "choose a shorter name or
    a less deeply nested location (--run-dir / --out)": no file can have that name, so it does not exist. Each says
    so, and names no output option."""
    import subprocess

    from reliability_support import REPO, cli

    long = str(tmp_path / ("x" * 300))
    said = "does not exist: its name 'xxxxxxxxxxxxxxxxxxxxxxxx…' is 30"  # 300 bytes, 304 with .txt
    why = "bytes, more than the 255 the file system allows for one name, so nothing can have it (check the path)"
    collect = subprocess.run([sys.executable, str(REPO / "scripts" / "collect_results.py"), long, "--dest",
                              str(tmp_path / "d")], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    procs = [cli(argv, timeout=300) for argv in (["eval", finished_run, "--text", long + ".txt"], ["eval", long],
                                                 ["report", long, "--out", tmp_path / "r"], ["lm-eval", long])]
    for proc in [*procs, collect]:
        line = one_error(proc.stderr)
        assert proc.returncode == 2 and said in line and why in line, proc.stderr
        assert "shorter name" not in line and "(--" not in line, line  # no output advice: "(--run-dir / --out)"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, option", [
    (["report", ""], "the results argument"), (["report", "sw", "--out", ""], "--out"),
    (["eval", ""], "the checkpoint argument"), (["lm-eval", "run1", "--tasks", "piqa", "--out", ""], "--out"),
    (["train", "--config", "tiny", "--run-dir", ""], "--run-dir"),
    (["analyze", "embeddings", "--sweep", "", "--dest", "x"], "--sweep"),
    (["bench", "--quick", "--config", "tiny", "--only", "generator", "--json", ""], "--json"),  # round 15, A191
    (["sweep", "--grid", "smoke", "--out", "o", "--reuse", ""], "--reuse"),
    (["report", "sw", "--out", "r", "--fair-shot", ""], "--fair-shot"),  # round 19, H206: the API's line
], ids=["report", "report-out", "eval", "lm-eval-out", "train-run-dir", "analyze-sweep", "bench-json", "sweep-reuse",
        "report-fair-shot"])
def test_an_empty_path_option_is_refused_not_read_as_the_current_folder(tmp_path, argv, option):
    """Round 15 (B186, B185 in the verbs): "" given where a path belongs was read as the current folder ('.' holds no
    complete checkpoint; a report or run written into the folder the command ran in). It is one line naming the
    option; nothing is written."""
    from reliability_support import cli_error

    line = cli_error(argv, cwd=tmp_path)
    assert f"{option} is an empty path (\"\"), which would be read as the current folder" in line, line
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("inside", [False, True], ids=["same", "inside"])
def test_lm_eval_out_in_its_task_data_root_is_refused_before_any_write(tmp_path, finished_run, inside):
    """Round 15 (B105): `lm-eval RUN --data-root D --out D` wrote lm_eval.json and lm-eval's marker among the task files
    of D, which then claimed to be lm-eval's output. Refused before anything is written; an --out that holds the data
    root is fine (nothing is written into the data)."""
    from reliability_support import cli_error

    root = tmp_path / "tasks"
    (root / "piqa").mkdir(parents=True)
    (root / "piqa" / "valid.jsonl").write_text('{"goal": "g", "sol1": "a", "sol2": "b"}\n')
    out = root / "res" if inside else root
    before = sorted(p.name for p in root.rglob("*"))
    line = cli_error(["lm-eval", finished_run, "--tasks", "piqa", "--limit", "1", "--data-root", root, "--out", out])
    assert f"the task data root (--data-root '{root}')" in line and "choose an --out outside it" in line, line
    assert sorted(p.name for p in root.rglob("*")) == before
