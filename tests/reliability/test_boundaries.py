"""Nonsense values are refused at the boundary where they enter (issue 30, kind 7): the command line, a YAML
config, the Python API, adoption's options; the message gives the valid range, and nothing is written first.

Before, a negative seed ended in numpy's traceback after the run folder was written, a seed past 64 bits in
torch's, and a seed past 32 bits was reduced modulo 2^32 (two seeds, one model).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from leviathan.cli import main
from leviathan.config import ConfigError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, cli_error, one_error, run_overrides, tree_hashes  # noqa: E402

pytestmark = [pytest.mark.reliability]

RANGE = "must be an integer in [0, 4294967295]"


def test_a_negative_seed_in_a_real_process(data, tmp_path):
    line = cli_error(["train", *run_overrides(data), "seed=-1", "--run-dir", tmp_path / "run"])
    assert f"seed: a seed {RANGE}" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("seed", ["4294967296", "99999999999999999999999"], ids=["33-bit", "huge"])
def test_a_seed_out_of_range_in_a_run_config(capsys, data, tmp_path, seed):
    assert main(["train", *run_overrides(data), f"seed={seed}", "--run-dir", str(tmp_path / "run")]) == 2
    line = one_error(capsys.readouterr().err)  # past 64 bits the config's integer check speaks first (round 6)
    assert f"seed: a seed {RANGE}" in line or f"seed: {seed} does not fit in 64 bits" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv", [
    ["prepare", "stdlib", "--out", "{tmp}/d", "--seed", "-5"],
    ["generate", "{tmp}/run", "--seed", "99999999999999999999"],
    ["analyze", "fit", "--sizes", "1,2,3", "--losses", "3,2,1", "--seed", "-1"],
    ["report", "{tmp}/x", "--seed", "4294967296"],
    ["sweep", "--grid", "smoke", "--seeds", "0,-1", "--list"],
], ids=["prepare", "generate", "analyze", "report", "sweep"])
def test_a_seed_out_of_range_on_the_command_line(capsys, tmp_path, argv):
    with pytest.raises(SystemExit) as info:
        main([a.format(tmp=tmp_path) for a in argv])
    assert info.value.code == 2
    assert RANGE in one_error(capsys.readouterr().err)
    assert not (tmp_path / "d").exists()


def test_a_seed_repeated_on_the_command_line_is_refused_not_dropped(capsys):
    with pytest.raises(SystemExit) as info:
        main(["sweep", "--grid", "smoke", "--seeds", "0,1,0", "--list"])
    assert info.value.code == 2
    assert "seed 0 is listed twice in '0,1,0'; list each seed once" in one_error(capsys.readouterr().err)


def test_a_seed_out_of_range_in_the_python_api(tmp_path):
    from leviathan.data.prepare import prepare
    from leviathan.run_config import RunConfig

    with pytest.raises(ConfigError, match="seed: a seed must be an integer"):
        RunConfig(max_steps=1, seed=-1)
    with pytest.raises(ConfigError, match="seed: a seed must be an integer"):
        prepare("stdlib", tmp_path / "d", seed=2**33)
    assert not (tmp_path / "d").exists()


# ---- training settings that parse but make no sense ------------------------------------------------------------
def test_a_warmup_longer_than_the_run(capsys, data, tmp_path):
    assert main(["train", *run_overrides(data, **{"schedule.warmup_steps": 100}), "--run-dir", str(tmp_path / "run"),
                 "--quiet"]) == 2
    line = one_error(capsys.readouterr().err)
    assert "schedule.warmup_steps=100 is longer than the run (4 steps)" in line and "in [0, 4]" in line
    assert not (tmp_path / "run").exists()


def test_data_without_validation_tokens_is_refused_before_training(capsys, tmp_path):
    from reliability_support import write_corpus

    corpus = write_corpus(tmp_path / "corpus", num_docs=6)
    data = tmp_path / "data"
    assert main(["prepare", str(corpus), "--out", str(data), "--tokenizer", "bpe:300", "--val-fraction", "0",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["train", *run_overrides(data), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 2
    line = one_error(capsys.readouterr().err)
    assert "has no validation tokens (its val split: 0 tokens)" in line and "--val-fraction 0.01" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv, shown", [
    (["lm-eval", "{run}", "--batch-size", "abc"], "argument --batch-size: expected a positive integer or auto (in lower case), got 'abc'"),
    (["lm-eval", "{run}", "--batch-size", "0"], "argument --batch-size: expected a positive integer or auto (in lower case), got '0'"),
    (["prepare", "stdlib", "--out", "{tmp}/d", "--workers", "0"], "argument --workers: must be a positive integer"),
    # round 9 (M88): --bootstrap 10**12 was taken, and on a sweep of several sizes drew until memory ran out
    (["report", "{run}", "--bootstrap", "1000000000000"], "argument --bootstrap: must be at most 100,000"),
    (["analyze", "scaling", "{run}", "--bootstrap", "100001"], "argument --bootstrap: must be at most 100,000"),
], ids=["lm-eval-batch-text", "lm-eval-batch-zero", "prepare-workers-zero", "report-bootstrap-huge",
        "scaling-bootstrap-huge"])
def test_nonsense_sizes_on_the_command_line(capsys, tmp_path, finished_run, argv, shown):
    with pytest.raises(SystemExit) as info:
        main([a.format(run=finished_run, tmp=tmp_path) for a in argv])
    assert info.value.code == 2
    assert shown in one_error(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [
    ["bench", "--quick", "--threads", "1000000"],
    ["prepare", "stdlib", "--out", "{tmp}/d", "--workers", "1000000"],
    ["sweep", "--grid", "smoke", "--list", "--threads", "1000000"],
    ["lm-eval", "{run}", "--threads", "1000000"],
    ["demo", "--threads", "1000000"],
], ids=["bench", "prepare-workers", "sweep", "lm-eval", "demo"])
def test_a_thread_count_past_the_machine_is_refused_before_any_thread_starts(capsys, tmp_path, finished_run, argv):
    """Round 6: ``bench --threads 1000000`` had OpenMP start threads until it segfaulted, and meanwhile other
    processes on the machine could not start a thread and died; ``prepare --workers 1000000`` claimed as many. A
    thread count is at most 4 x the cores the process may use (``commands.values.thread_count``)."""
    from leviathan.value_rules import usable_cores

    with pytest.raises(SystemExit) as info:
        main([a.format(run=finished_run, tmp=tmp_path) for a in argv])
    assert info.value.code == 2
    limit = 4 * usable_cores()
    assert f"must be at most {limit} (4 x the {usable_cores()} cores this process may use), got 1000000" in \
        one_error(capsys.readouterr().err)
    assert not (tmp_path / "d").exists()


# ---- adoption's options ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("settings, shown", [
    (dict(ln_eps=float("nan")), "ln_eps must be a finite number > 0, got nan"),
    (dict(ln_eps=-1.0), "ln_eps must be a finite number > 0, got -1.0"),
    (dict(norm=True, norm_eps=0.0), "norm_eps must be a finite number > 0, got 0.0"),
    (dict(table_std=float("inf")), "table_std must be a finite number > 0, got inf"),
    (dict(table_std="0.02"), "table_std must be a finite number > 0, got '0.02'"),
    (dict(seed_dim=0), "seed_dim must be an integer >= 1, got 0"),
    (dict(rank=2.5), "rank must be an integer >= 1, got 2.5"),
    (dict(knots=1), "knots must be an integer >= 2, got 1"),
    (dict(degree=-1), "degree must be an integer in [1, 3], got -1"),
    (dict(base=1), "base must be an integer >= 2, got 1"),
    (dict(center="no"), "center must be true or false, got 'no'"),
    (dict(norm=1), "norm must be true or false, got 1"),
    # round 15 (B273): finite but past float32: every embedding NaN (1e300) or rows of 2e30 (1e30)
    (dict(init="table_rms", table_std=1e300), "table_std must be in [1e-15, 10000] (a table row's std; 0.02 is the "
                                              "usual), got 1e+300"),
    (dict(init="table_rms", table_std=1e-300), "table_std must be in [1e-15, 10000]"),
], ids=["ln-eps-nan", "ln-eps-negative", "norm-eps-zero", "table-std-inf", "table-std-text", "seed-dim-zero",
        "rank-fraction", "knots-one", "degree-negative", "base-one", "center-text", "norm-int", "B273-table-std-huge",
        "B273-table-std-tiny"])
def test_adoption_refuses_settings_that_would_make_a_nan_model(settings, shown):
    from transformers import LlamaConfig

    from leviathan.errors import UserError
    from leviathan.hf.adoption import adopt

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    with pytest.raises(UserError) as info:
        adopt(cfg, **{"seed_dim": 8, "modes": 2, "knots": 8, "rank": 4, **settings})
    assert shown in str(info.value) and "pick values LeviathanGenerator accepts" in str(info.value)


@pytest.mark.parametrize("fit, shown", [
    (dict(lr=True), "Fit.lr must be a number in (0, 1] (Adam's peak rate; default 3e-3), got True"),
    (dict(seed=-1), "Fit.seed: a seed must be an integer in [0, 4294967295]"),
    (dict(seed=2.5), "Fit.seed: a seed must be an integer"),
    (dict(lr=1e30), "Fit.lr must be a number in (0, 1] (Adam's peak rate; default 3e-3), got 1e+30"),  # round 7, B106
    (dict(steps=10**12), "Fit.steps must be at most 1,000,000 (a fit converges in hundreds; each step is a generator "
                         "forward and backward), got 1,000,000,000,000; e.g. Fit(steps=500)"),  # round 9, M158
], ids=["lr-bool", "seed-negative", "seed-fraction", "lr-huge", "steps-never-ending"])
def test_adoptions_fit_refuses_a_bool_rate_and_a_seed_out_of_range(fit, shown):
    """Round 5: Fit(lr=True) fitted at rate 1.0 and Fit(seed=-1) was used as it was; the seed range is that of every
    other seed (``leviathan.seeds``)."""
    from leviathan.errors import UserError
    from leviathan.hf import Fit

    with pytest.raises(UserError) as info:
        Fit(**fit)
    assert shown in str(info.value)


@pytest.mark.parametrize("frequency", [np.full(300, 1e308), np.r_[np.full(299, 0.5), 1e-300]], ids=["huge", "span"])
def test_adoptions_fit_refuses_counts_past_64_bits(frequency):
    """Round 10 (Q127): ``Fit(frequency=np.full(300, 1e308))`` was "train_freq holds negative counts": the counts'
    cast to int64 wrapped around. Counts (weights in units of the smallest one) summing past 2^62 are named."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf import Fit, adopt

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=2, max_position_embeddings=64)
    with pytest.raises(UserError, match=r"Fit.frequency's counts sum past 4,611,686,018,427,387,904 \(2\^62"):
        adopt(LlamaForCausalLM(cfg), seed_dim=8, modes=2, knots=8, rank=4, fit=Fit(frequency=frequency, steps=2))


def test_the_generator_itself_refuses_them():
    from leviathan.model.generator import LeviathanGenerator

    with pytest.raises(ValueError, match="norm_eps must be a finite number > 0, got nan"):
        LeviathanGenerator(300, 32, seed_dim=8, modes=2, knots=8, rank=4, norm=True, norm_eps=float("nan"))


# ---- inputs that are not what they claim -----------------------------------------------------------------------
def test_random_bytes_are_not_evaluated_as_text(finished_run, tmp_path):
    import numpy as np

    noise = np.random.default_rng(0).integers(1, 256, size=4000, dtype=np.uint8)  # no NUL: not caught as binary
    (tmp_path / "notes.txt").write_bytes(noise.tobytes())
    line = cli_error(["eval", finished_run, "--text", tmp_path / "notes.txt"])
    assert "notes.txt is not UTF-8 text:" in line and "bytes do not decode" in line and "iconv" in line


def test_a_restricted_softmax_says_what_it_leaves_out(capsys, data, tmp_path):
    run = tmp_path / "run"
    assert main(["train", *run_overrides(data, **{"data.softmax": "corpus"}), "--run-dir", str(run), "--quiet"]) == 0
    from leviathan.data.tokenizer import load_tokenizer

    tokenizer = load_tokenizer(str(data))
    unseen = [i for i in range(tokenizer.vocab_size) if i not in set(np.fromfile(data / "train.bin", dtype=np.uint16))
              and i not in set(np.fromfile(data / "val.bin", dtype=np.uint16))]
    text = tmp_path / "text.txt"
    text.write_text((data.parent / "corpus" / "doc000.txt").read_text() + tokenizer.decode(unseen[:20]))
    capsys.readouterr()
    assert main(["eval", str(run), "--text", str(text)]) == 0
    err = capsys.readouterr().err
    assert "targets" in err and "are outside the" in err and "this model predicts (data.softmax=corpus)" in err
    assert "bits per byte is not reported" in err


# ---- stops before the first step -------------------------------------------------------------------------------
def test_a_sigterm_while_the_model_is_built_says_what_it_stopped(capsys, data, tmp_path, monkeypatch):
    import os
    import signal

    from leviathan.train import loop

    real = loop.initial_model

    def built_then_stopped(cfg):
        os.kill(os.getpid(), signal.SIGTERM)  # a scheduler's stop while the model is being built
        return real(cfg)

    monkeypatch.setattr(loop, "initial_model", built_then_stopped)
    assert main(["train", *run_overrides(data), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "stopped by SIGTERM before the first step of this session (while loading the data and building the " \
           "model): nothing was trained and no checkpoint was written; the run has not started" in err
    assert not (tmp_path / "run").exists()


def test_a_sigterm_before_any_verb_has_started_is_one_line(capsys, data, tmp_path, monkeypatch):
    import os
    import signal

    from leviathan import run_config

    def stopped(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # while the config is read: before train has its own handling
        raise AssertionError("the signal did not stop the verb")

    monkeypatch.setattr(run_config, "load_run_config", stopped)
    assert main(["train", *run_overrides(data), "--run-dir", str(tmp_path / "run")]) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert "stopped by SIGTERM before `leviathan train` finished" in err and "run the same command again" in err
    assert "Traceback" not in err


def test_ctrl_c_in_any_verb_says_what_it_stopped(capsys, finished_run, tmp_path, monkeypatch):
    """Round 5 left this: Ctrl-C printed a bare 'interrupted' where SIGTERM says what stopped and what to do. Now the
    same line, exit 130, and the export's temporary folder is gone."""
    import os
    import signal

    from leviathan.hf import export as export_module

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the export writes its files
        raise AssertionError("the signal did not stop the verb")

    monkeypatch.setattr(export_module, "_save_tokenizer", interrupted)
    assert main(["export", str(finished_run), str(tmp_path / "hf")]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "stopped by Ctrl-C (SIGINT) before `leviathan export` finished: its temporary files are removed and nothing "
        "half-written is taken as valid; run the same command again"), err
    assert list(tmp_path.iterdir()) == []


def test_adoptions_fit_refuses_token_ids_with_fractions():
    """Round 6: ``Fit(text=[[1.5, 2.0, 3.0]])`` was cast to ids 1, 2, 3 and the fit went on; whole numbers given as
    floats still read as the ids they are."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf import Fit, adopt

    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    small = dict(seed_dim=8, modes=2, knots=8, rank=4)
    with pytest.raises(UserError, match="Fit.text must be whole token ids, got torch.float32 values with fractions"):
        adopt(LlamaForCausalLM(cfg), fit=Fit(text=torch.tensor([[1.5, 2.0, 3.0]]), steps=2), **small)
    model = adopt(LlamaForCausalLM(cfg), fit=Fit(text=[[1.0, 2.0, 3.0]], steps=2), **small)
    assert model.leviathan_fit.loss_fit is not None


def test_adoptions_fit_refuses_what_is_not_counts_or_ids_and_takes_numpy_numbers():
    """Round 14: ``Fit(frequency=['a'] * V)`` ended in numpy's ValueError (B78), bools read as counts 1 (B79), complex
    counts lost their imaginary part with a numpy warning (B284); ``Fit(text='hello world')`` ended in torch's TypeError
    (B82), a bool tensor read as ids 0 and 1 (B83), a text longer than GPT-2's learned positions in an IndexError
    (B279); ``Fit(lr=np.float32(1e-2))`` was refused as not a number (B71); ``Fit(batch_ids=2.0)`` gave the example
    of another field (B286); ``add_tokens(True)`` ended in a TypeError and ``add_tokens(2.5)`` named vocab_size
    (B176, B177)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from leviathan import CausalLM, ModelConfig
    from leviathan.errors import UserError
    from leviathan.hf import Fit, adopt

    def gpt2():
        return GPT2LMHeadModel(GPT2Config(vocab_size=300, n_embd=16, n_layer=1, n_head=2, n_positions=32))

    small = dict(seed_dim=8, modes=2, knots=8, rank=4)
    for fit, words in ((dict(frequency=["a"] * 300), "got <U1 values"), (dict(frequency=[True] * 300), "got bool"),
                       (dict(frequency=np.ones(300, dtype=np.complex64)), "got complex64 values"),
                       (dict(text="hello world"), "Fit.text must be token ids, got str 'hello world'"),
                       (dict(text=[[1, 2, 3], [4, 5]]), "Fit.text holds rows of unequal length (3, 2 ids)"),  # AI575
                       (dict(text=torch.ones(1, 10, dtype=torch.bool)), "got torch.bool values"),
                       (dict(text=torch.randint(0, 300, (1, 100))), "rows are 100 tokens, more than the model's 32 "
                                                                    "positions")):
        with pytest.raises(UserError, match=re.escape(words)):
            adopt(gpt2(), fit=Fit(steps=2, **fit), **small)
    assert Fit(lr=np.float32(1e-2)).lr == pytest.approx(1e-2)
    with pytest.raises(UserError, match=re.escape("Fit.batch_ids must be a positive integer, got 2.0; e.g. "
                                                  "Fit(batch_ids=4096)")):
        Fit(batch_ids=2.0)
    model = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                 max_position_embeddings=64, embedding="leviathan", generator_seed_dim=8,
                                 generator_modes=2, generator_knots=8, generator_rank=4))
    for bad in (True, 2.5):
        with pytest.raises(ValueError, match="add_tokens needs a positive whole number of new tokens"):
            model.add_tokens(bad)
    assert model.add_tokens(np.int64(2)) == 302
    # round 14 (B109, B171): an input id past the vocabulary but inside the generator's b^k was embedded silently
    with pytest.raises(ValueError, match=r"input id 302 is outside \[0, 302\) \(the model's vocab_size\)"):
        model(torch.tensor([[1, 2, 302]]))
    from leviathan.hf.export import from_native

    with pytest.raises(TypeError, match="from_native takes a leviathan model"):  # round 14 (B366): AttributeError
        from_native("x")


@pytest.mark.parametrize("scale", [float("nan"), -1.0, 0.0, True, "2"], ids=["nan", "negative", "zero", "bool", "text"])
def test_an_adopted_generators_output_scale_is_a_positive_number(scale):
    """Round 14 (B256, B257): an adopted config.json whose leviathan_generator.output_scale was edited to NaN loaded a
    model whose every embedding was NaN, and -1 one that flipped them, without a word."""
    from leviathan.errors import UserError
    from leviathan.hf.adoption import ScaledLeviathanGenerator

    with pytest.raises(UserError, match="output_scale must be a finite number > 0"):
        ScaledLeviathanGenerator(vocab_size=300, hidden_size=16, seed_dim=8, modes=2, knots=8, rank=4,
                                 output_scale=scale)
    assert ScaledLeviathanGenerator(vocab_size=300, hidden_size=16, seed_dim=8, modes=2, knots=8, rank=4,
                                    output_scale=25.25).output_scale == 25.25


def test_an_export_under_a_file_is_one_error_from_the_python_api(tmp_path):
    """Round 14 (B259, B365): ``to_plain_llama(model, 'afile/x')`` and ``bake_adopted`` ended in mkdir's bare
    FileExistsError."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.errors import UserError
    from leviathan.hf.export import to_hf, to_plain_llama

    (tmp_path / "afile").write_text("x")
    model = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                 max_position_embeddings=64))
    for writer in (to_plain_llama, to_hf):
        with pytest.raises(UserError, match=f"'{tmp_path / 'afile'}' is a file, not a folder; choose another out_dir"):
            writer(model, tmp_path / "afile" / "x")
    assert (tmp_path / "afile").read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("size", ["-5GB", 0, "0MB", "lots"])
def test_an_export_with_a_shard_size_of_zero_or_less_is_refused_before_any_file(tmp_path, size):
    """Round 15 (B248): ``to_plain_llama(m, 'x1', max_shard_size='-5GB')`` (or 0) wrote 21 one-tensor shards, as if
    "as small as possible" had been asked, without a word."""
    from leviathan import CausalLM, ModelConfig
    from leviathan.errors import UserError
    from leviathan.hf.export import to_plain_llama

    model = CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                 max_position_embeddings=64))
    with pytest.raises(UserError, match=f"max_shard_size must be a size above zero, such as '5GB' or '500MB' \\(or a "
                                        f"byte count\\), got {size!r}"):
        to_plain_llama(model, tmp_path / "x1", max_shard_size=size)
    assert not (tmp_path / "x1").exists()
    assert (to_plain_llama(model, tmp_path / "x2", max_shard_size="1GB") / "model.safetensors").is_file()


def test_load_adopted_given_the_config_file_names_the_folder_to_pass(tmp_path):
    """Round 6: ``load_adopted("DIR/config.json")`` said "DIR/config.json has no config.json"."""
    from leviathan.errors import UserError
    from leviathan.hf import load_adopted

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(UserError, match=r"config.json is a file; pass the directory that holds it"):
        load_adopted(tmp_path / "config.json")


@pytest.mark.parametrize("variants, shown", [
    (",", "argument --variants: expected comma-separated variants such as dense_tied,dense_untied,leviathan, got ','"),
    ("leviathan,leviathan", "argument --variants: variant 'leviathan' is listed twice in 'leviathan,leviathan'"),
    ("dense_tied,dense", "argument --variants: unknown variant 'dense'; choose from"),
], ids=["none", "twice", "unknown"])
def test_demo_variants_that_name_nothing_or_one_twice_are_refused_before_any_work(data, tmp_path, variants, shown):
    """Round 7 (B56, B54): ``demo --variants ,`` ended in a ValueError traceback (max() of nothing), and
    ``--variants leviathan,leviathan`` trained two processes into one folder, the second refused after its work by
    the first one's lock, naming the demo's own process."""
    from reliability_support import cli_error

    run = tmp_path / "demo"
    assert shown in cli_error(["demo", "--data-dir", data, "--run-dir", run, "--steps", "2", "--variants", variants])
    assert not run.exists()


def test_a_fit_that_diverges_is_refused_not_returned_as_a_nan_model():
    """Round 7 (B106): ``adopt(model, fit=Fit(lr=1e30))`` returned a model whose input embeddings were all NaN, the
    report's "objective nan" the only sign. The rate is bounded (Adam moves every parameter by about lr per step), and
    a fit whose generator is no longer finite is an error naming the rate and a lower one."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf import Fit, adopt

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2)
    with pytest.raises(UserError) as info:
        adopt(LlamaForCausalLM(cfg), fit=Fit(lr=1.0, steps=30))  # the paper's generator settings
    assert "the generator's fit diverged at Fit.lr=1 (" in str(info.value) and "Fit(lr=0.1)" in str(info.value)
    model = adopt(LlamaForCausalLM(cfg), seed_dim=8, modes=2, knots=8, rank=4, fit=Fit(steps=5))
    assert torch.isfinite(model.get_input_embeddings()(torch.arange(300))).all()


def test_a_stop_while_a_module_is_imported_waits_for_the_import(tmp_path, monkeypatch):
    """Round 8: SIGTERM 0.8 s into `train` came while torch imported numpy.linalg; the stop, raised inside the import,
    left the module half set up (and was swallowed below it), and the verb ended in a RecursionError traceback. A stop
    that comes during an import is now delivered once the import is done: the module is whole, the verb still stops
    with its one line and exit 143."""
    import signal
    import time

    from leviathan import cli

    package = tmp_path / "r8_slow_import"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "part.py").write_text("import os, signal, time\nos.kill(os.getpid(), signal.SIGTERM)\n"
                                     "for _ in range(100):\n    time.sleep(0.001)\nWHOLE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    class Verb:
        @staticmethod
        def run(args):
            import r8_slow_import.part  # noqa: F401
            time.sleep(5)
            raise AssertionError("the signal did not stop the verb")

    try:
        assert cli._run_verb(Verb, None, "train") == 128 + signal.SIGTERM
        import r8_slow_import

        assert r8_slow_import.part.WHOLE  # imported whole, and set on its package
    finally:
        for name in ("r8_slow_import.part", "r8_slow_import"):
            sys.modules.pop(name, None)


def test_the_python_apis_model_calls_name_the_argument_and_its_range():
    """Round 8: ``count_config("cpu-tiny")`` ended in an AttributeError, labels outside the vocabulary in torch's
    ``IndexError: Target 999 is out of bounds`` (a device-side assert on a GPU), and float token ids were truncated to
    whole ids without a word (``nn.Embedding`` refuses them)."""
    from leviathan import CausalLM, LeviathanGenerator, ModelConfig, count_config

    cfg = ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=64)
    with pytest.raises(TypeError, match=r"count_config takes a ModelConfig, got str 'cpu-tiny'; for a preset"):
        count_config("cpu-tiny")
    model = CausalLM(cfg)
    ids = torch.tensor([[1, 2, 3]])
    for return_logits in (True, False):
        with pytest.raises(ValueError, match=r"label 999 is outside \[0, 300\) \(the model's vocab_size; -100 marks"):
            model(ids, labels=torch.tensor([[1, 2, 999]]), return_logits=return_logits)
    with pytest.raises(ValueError, match=r"label -5 is outside \[0, 300\)"):
        model(ids, labels=torch.tensor([[1, -5, -100]]))
    with pytest.raises(ValueError, match=r"labels must have the shape of input_ids \(1, 3\)"):
        model(ids, labels=torch.tensor([[1, 2]]))
    with pytest.raises(TypeError, match="labels must be an integer tensor"):
        model(ids, labels=ids.float())
    assert torch.isfinite(model(ids, labels=torch.tensor([[1, -100, 299]]))[1])  # -100 ignored, 299 the last id
    with pytest.raises(TypeError, match=r"token ids must be an integer tensor \(torch.long\), got torch.float32"):
        LeviathanGenerator(vocab_size=300, hidden_size=16)(torch.tensor([1.5]))
    with pytest.raises(TypeError, match="token ids must be an integer tensor"):
        model(ids.float())


@pytest.mark.parametrize("settings, shown", [
    ({"rank": 10**9}, "these settings give the generator 32,896,000,135,808 parameters (122,547 GiB in float32), "
                      "more than the 2,147,483,648 any generator can use"),
    ({"base": 10**12}, "most of them in its codebooks (k x base x seed_dim); lower base, k or seed_dim"),
    ({"k": 100}, "k must be an integer in [1, 64]"),
])
def test_generator_sizes_no_memory_holds_are_refused_before_any_tensor(settings, shown):
    """Round 8: ``adopt(model, rank=10**9)`` ended in the allocator's traceback (131 TB asked for); ``ModelConfig``
    and ``LeviathanGenerator`` meet the same check."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan import LeviathanGenerator
    from leviathan.errors import UserError
    from leviathan.hf import adopt

    with pytest.raises(ValueError) as caught:
        LeviathanGenerator(vocab_size=300, hidden_size=16, **settings)
    assert shown in str(caught.value)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2))
    with pytest.raises(UserError) as caught:
        adopt(model, **settings)
    assert "invalid generator setting" in str(caught.value) and shown in str(caught.value)


def test_a_generator_no_memory_holds_is_refused_by_trains_config(data, tmp_path):
    """Round 8: ``train model.generator_rank=1000000000`` went on to build the model (the allocator's traceback, or
    the machine's memory)."""
    line = cli_error(["train", *run_overrides(data), "model.embedding=leviathan", "model.generator_rank=1000000000",
                      "--run-dir", tmp_path / "run"])
    assert "model.generator_*: these settings give the generator" in line
    assert ("most of them in its splines (modes x seed_dim x (seed_dim + 2 + knots x rank)); lower "
            "model.generator_knots, model.generator_rank, model.generator_seed_dim or model.generator_modes") in line
    assert not (tmp_path / "run").exists()


def test_the_training_and_analysis_api_names_a_misused_argument(tmp_path):
    """Round 8 (Q1, Q2, Q4, Q8): ``load_run_config(None, {"max_steps": 3})`` read the dict's keys ("override
    'max_steps' must look like key=value"), a string its letters ("override 'm' ..."); ``train(cfg, None)`` was
    os.fspath's TypeError; ``paired_comparisons("runs/x")`` an AttributeError traceback."""
    from leviathan.experiments.method.paired import paired_comparisons
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    for overrides, shown in (({"max_steps": 3}, "got dict {'max_steps': 3}"), ("max_steps=3", "got str 'max_steps=3'")):
        with pytest.raises(TypeError, match=r"overrides must be a list of 'key=value' strings, e\.g\. \['max_steps="):
            load_run_config(None, overrides)
        with pytest.raises(TypeError, match=shown):
            load_run_config(None, overrides)
    cfg = load_run_config(None, ["max_steps=1", "model.vocab_size=300"], check_data=False)
    with pytest.raises(TypeError, match=r"run_dir must be the path of the run folder \(str or Path\), got None"):
        train(cfg, None)
    with pytest.raises(TypeError, match=r"rows must be results rows, e\.g\. paired_comparisons\(read_results\("):
        paired_comparisons(str(tmp_path))
    with pytest.raises(TypeError, match="rows must be ResultRow objects"):
        paired_comparisons([{"name": "a"}])
    assert list(tmp_path.iterdir()) == []


def test_a_resume_past_the_configs_last_step_is_refused_before_anything_is_written(capsys, data, run_copy):
    """Round 8 (SV2): ``train --resume auto max_steps=3`` on a run at step 4 said "3 steps x ... tokens", trained
    nothing, rewrote its summary and exited 0."""
    from reliability_support import tree_hashes

    before = tree_hashes(run_copy)
    assert main(["train", "--run-dir", str(run_copy), "--resume", "auto", "max_steps=3", "--quiet"]) == 2
    line = one_error(capsys.readouterr().err)
    assert "step-00000004' is at step 4, past the 3 steps this config trains (max_steps / max_tokens): there is " \
           "nothing to continue; give a larger max_steps" in line
    assert tree_hashes(run_copy) == before
    assert main(["train", "--run-dir", str(run_copy), "--resume", "auto", "max_steps=4", "--quiet"]) == 0  # finished


def test_train_in_python_checks_an_edited_config_and_names_the_checkpoint_to_evaluate(data, finished_run, tmp_path):
    """Round 16: ``train(cfg, 'tr5', resume=RUN2)`` past the config's steps offered "leviathan eval tr5", a folder that
    does not exist (C247): the checkpoint itself is named. A config edited after ``load_run_config`` is checked as a
    file's is: ``cfg.max_steps = -3`` was blamed on the warmup with the range "[0, -3]" (C248), ``cfg.optim.lr = nan``
    reached torch's "Invalid learning rate: nan" (C250)."""
    from leviathan.errors import UserError
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    cfg = load_run_config(None, run_overrides(data, max_steps=2))
    with pytest.raises(UserError) as refused:
        train(cfg, tmp_path / "tr5", resume=str(finished_run), quiet=True)
    step = finished_run / "checkpoints" / "step-00000004"
    assert f"past the 2 steps this config trains" in str(refused.value)
    assert f"evaluate the checkpoint as it is (leviathan eval {str(step)!r})" in str(refused.value), refused.value
    cfg.max_steps = -3
    with pytest.raises(ConfigError, match=r"^max_steps must be a positive integer or null, got -3$"):
        train(cfg, tmp_path / "tr6", quiet=True)
    cfg.max_steps, cfg.optim.lr = 2, float("nan")
    with pytest.raises(ConfigError, match=r"^optim\.lr: expected a finite number, got nan"):
        train(cfg, tmp_path / "tr8", quiet=True)
    assert not (tmp_path / "tr6").exists() and not (tmp_path / "tr8").exists()


def test_an_adopted_folder_whose_config_no_longer_fits_its_weights_and_a_text_overwrite_are_refused(tmp_path):
    """Round 8 (A24, A26): an adopted folder whose config.json vocab_size was edited from 300 to 301 ended in
    transformers' RuntimeError traceback ("You set `ignore_mismatched_sizes` to `False`"); ``bake_adopted(model, DIR,
    overwrite="yes")`` read the text as true (an earlier bake there would have been replaced; "no" likewise)."""
    import json

    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf import adopt, bake_adopted, load_adopted

    model = adopt(LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32,
                                               num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)))
    folder = tmp_path / "adopted"
    model.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "vocab_size": 301}))
    with pytest.raises(UserError, match=r"do not fit the sizes its config.json gives .*config.json was edited or comes "
                                        r"from another model; restore it"):
        load_adopted(folder)
    (tmp_path / "baked").mkdir()
    (tmp_path / "baked" / "mine.txt").write_text("mine")
    with pytest.raises(TypeError, match="overwrite must be True or False, got 'yes'"):
        bake_adopted(model, tmp_path / "baked", overwrite="yes")
    assert (tmp_path / "baked" / "mine.txt").read_text() == "mine"


def test_numpy_integers_are_integers_at_every_boundary(data, tmp_path):
    """Round 8 left (P2, Q11): ``ModelConfig(hidden_size=np.int64(32))`` and ``prepare(..., seed=np.int64(3))`` were
    refused as "must be a positive integer, got np.int64(32)" while ``LeviathanGenerator`` took numpy integers; one
    test now (``leviathan.integers``), and what is stored is a plain int (YAML and JSON write it). Bools and floats
    are still refused."""
    import json

    from leviathan.config import dump_yaml, to_dict
    from leviathan.data.prepare import prepare
    from leviathan.hf import Fit
    from leviathan.model.config import ModelConfig
    from leviathan.run_config import load_run_config

    cfg = ModelConfig(vocab_size=np.int64(300), hidden_size=np.int64(32), num_attention_heads=np.int32(2))
    assert type(cfg.hidden_size) is int and "hidden_size: 32" in dump_yaml(to_dict(cfg))
    for bad in (True, 32.0, np.float64(32.0), "32"):
        with pytest.raises(ConfigError, match="model.hidden_size must be a positive integer"):
            ModelConfig(hidden_size=bad)
    fit = Fit(steps=np.int64(3), seed=np.uint32(7))
    assert (type(fit.steps), type(fit.seed)) == (int, int)
    run = load_run_config(None, run_overrides(data))
    assert type(type(run)(**{**run.__dict__, "seed": np.int64(5)}).seed) is int
    meta = prepare(str(data.parent / "corpus"), tmp_path / "d", tokenizer="bpe:300", seed=np.int64(3),
                   val_fraction=0.2, progress=False, log=lambda m: None)
    assert json.loads((tmp_path / "d" / "meta.json").read_text())["settings"]["seed"] == 3 == meta["settings"]["seed"]
    with pytest.raises(ConfigError, match="seed: a seed must be an integer"):
        prepare(str(data.parent / "corpus"), tmp_path / "e", tokenizer="bpe:300", seed=np.float64(3.0),
                progress=False, log=lambda m: None)


def test_demo_refuses_a_data_folder_inside_its_run_folder_before_preparing_it(tmp_path):
    """Round 14 (A244, A246): ``demo --run-dir D --data-dir D/data`` prepared the corpus into D/data (34 s), then
    refused D as holding files no demo writes; the data then blocked that command for good. Refused first now."""
    from reliability_support import cli

    demo = tmp_path / "D"
    proc = cli(["demo", "--data-dir", demo / "data", "--run-dir", demo, "--steps", "1"])
    assert proc.returncode == 2 and "preparing" not in proc.stderr, proc.stderr
    line = one_error(proc.stderr)
    assert f"--run-dir '{demo}' holds --data-dir '{demo / 'data'}': an output folder must be apart from its input; " \
           f"choose another --run-dir" in line, line
    assert not demo.exists()


def test_demo_given_a_folder_that_is_not_prepared_data_names_its_own_flag(finished_run, tmp_path):
    """Round 8 left (D2): ``demo --data-dir RUN`` (a train run folder) said "preparing the demo corpus ... into RUN",
    then "--out RUN exists and is not a leviathan data dir", a flag of prepare the user never gave. Now demo's own
    flag is named before anything is printed or written."""
    from reliability_support import cli, tree_hashes

    before = tree_hashes(finished_run)
    proc = cli(["demo", "--data-dir", finished_run, "--run-dir", tmp_path / "demo", "--steps", "2"])
    assert proc.returncode == 2, proc.stderr
    line = one_error(proc.stderr)
    assert f"--data-dir {str(finished_run)!r} is a folder that is not a prepared data folder (no meta.json)" in line
    assert "--out" not in proc.stderr and "preparing" not in proc.stderr
    assert tree_hashes(finished_run) == before and not (tmp_path / "demo").exists()


def test_a_bootstrap_no_time_holds_is_refused_in_the_python_api_and_a_huge_size_names_its_part():
    """Round 9 (M88, M55): ``fit_power_law(num_bootstrap=10**12)`` drew until memory ran out; a generator made huge by
    ``hidden_size: 1e9`` was refused naming only rank, knots, modes, seed_dim and base."""
    from leviathan.errors import UserError
    from leviathan.experiments.method.scaling import fit_power_law
    from leviathan.model.config import ModelConfig

    with pytest.raises(UserError, match=r"num_bootstrap: must be at most 100,000"):
        fit_power_law([1e5, 1e6, 1e7, 1e8], [4.0, 3.5, 3.2, 3.0], num_bootstrap=10**12)
    with pytest.raises(ConfigError) as info:  # its own range first since round 25 (X59)
        ModelConfig(vocab_size=300, hidden_size=10**9, num_attention_heads=2)
    assert "model.hidden_size=1,000,000,000 is outside the range any model uses: set it in [1, 65,536]" in \
        str(info.value)
    with pytest.raises(ConfigError) as info:  # within its range, still too wide for the generator's rank
        ModelConfig(vocab_size=300, hidden_size=65536, num_attention_heads=2, generator_rank=10**4)
    assert "most of them in its output maps (modes x rank x hidden_size); lower model.hidden_size, " \
           "model.generator_rank or model.generator_modes" in str(info.value)


def test_a_run_config_built_in_python_holds_its_integers_to_64_bits():
    """Round 10 (Q118): ``RunConfig(max_steps=2**64)`` was taken, where a config file's ``max_steps`` past 64 bits is
    refused (round 6: a run that trains toward a step it never reaches)."""
    from leviathan.run_config import RunConfig

    with pytest.raises(ConfigError, match=r"max_steps: 18446744073709551616 does not fit in 64 bits"):
        RunConfig(max_steps=2**64)
    with pytest.raises(ConfigError, match=r"eval_tokens: 9223372036854775808 does not fit in 64 bits"):
        RunConfig(max_steps=4, eval_tokens=2**63)


def test_the_python_api_names_a_misused_argument_in_round_9(data, tmp_path):
    """Round 9 (M131, M132, M134, M136-M138, M140, M143, M133): ``train("x", DIR)``, ``generator([1, 2])``,
    ``CausalLM(...)([[1, 2]])`` and ``flops_per_token(None)`` ended in AttributeErrors; ``prepare(123, OUT)``,
    ``read_results(123)`` and ``RunConfig(max_steps="4")`` in TypeErrors that named no argument;
    ``ModelConfig(initializer_range=inf)`` was taken; ``load_run_config(None, None)`` said "'NoneType' object is not
    iterable" (None now means no overrides)."""
    from leviathan import CausalLM, LeviathanGenerator, ModelConfig, flops_per_token
    from leviathan.data.prepare import prepare
    from leviathan.experiments.machinery.results import read_results
    from leviathan.run_config import RunConfig, load_run_config
    from leviathan.train.loop import train

    with pytest.raises(TypeError, match="cfg must be a RunConfig"):
        train("x", tmp_path / "run")
    with pytest.raises(TypeError, match="token ids must be an integer tensor .* got list"):
        LeviathanGenerator(300, 16)([1, 2])
    small = ModelConfig(vocab_size=300, hidden_size=16, num_attention_heads=2, num_hidden_layers=1)
    with pytest.raises(TypeError, match=r"input_ids must be a \(batch, length\) tensor of token ids, got list"):
        CausalLM(small)([[1, 2]])
    with pytest.raises(TypeError, match=r"input_ids must be a \(batch, length\) tensor of token ids, got \(2,\)"):
        CausalLM(small)(torch.tensor([1, 2]))
    with pytest.raises(TypeError, match="flops_per_token takes a ModelConfig, got NoneType"):
        flops_per_token(None)
    with pytest.raises(TypeError, match="source must be a path"):
        prepare(123, tmp_path / "d", tokenizer="bpe:300", progress=False)
    with pytest.raises(TypeError, match="path must be a sweep folder or its results.jsonl"):
        read_results(123)
    with pytest.raises(ConfigError, match="max_steps must be an integer, got '4'"):
        RunConfig(max_steps="4")
    with pytest.raises(ConfigError, match="model.initializer_range must be a positive number, got inf; nan and inf"):
        ModelConfig(initializer_range=float("inf"))
    with pytest.raises(ConfigError, match="set exactly one of max_steps and max_tokens"):  # the config's own problem
        load_run_config(None, None)
    assert not (tmp_path / "run").exists() and not (tmp_path / "d").exists()


LATE_STOP = r"""
import atexit, os, signal, sys
stop = getattr(signal, sys.argv[1])
atexit.register(lambda: os.kill(os.getpid(), stop))  # as the process ends, after the verb
sys.argv = ["leviathan", *sys.argv[2:]]
from leviathan.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("sig, status, name", [("SIGTERM", 143, "SIGTERM"), ("SIGINT", 130, "Ctrl-C (SIGINT)")])
def test_a_stop_as_a_verb_ends_says_what_it_stopped(finished_run, tmp_path, sig, status, name):
    """Round 9 (M114): a SIGTERM that came as `analyze embeddings` ended (its records written, its lines printed)
    killed the process without a word, exit 143: the verb had restored the default handlers. A stop after the verb
    has returned now says so in one line, and that its work is complete."""
    import os
    import subprocess

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    record = tmp_path / "record.json"
    proc = subprocess.run([sys.executable, "-c", LATE_STOP, sig, "analyze", "embeddings", str(finished_run), "--out",
                           str(record)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr and record.is_file() and f"wrote {record}" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f"stopped by {name} as `leviathan analyze` was ending, after it had finished: its work is complete (what it "
        f"printed and wrote stands); nothing needs running again")


@pytest.mark.parametrize("group", [False, True, "SIGHUP"], ids=["its-process", "then-its-group", "sighup-group"])
def test_a_sigterm_to_a_demo_training_its_models_at_once_stops_them(data, tmp_path, group):
    """Round 10 (Q94b): a SIGTERM sent to the demo's own process (``kill PID``; Ctrl-C reaches the whole process
    group, a kill does not) while its models trained in worker processes left the workers training and the demo
    waiting for them, without a word: 70 s later all three were still training. The demo now passes the stop to its
    workers, which save a checkpoint each, and ends with its stop line."""
    import os
    import signal
    import subprocess
    import time

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    run = tmp_path / "demo"
    proc = subprocess.Popen([sys.executable, "-m", "leviathan", "demo", "--data-dir", str(data), "--seq-len", "32",
                             "--batch-tokens", "64", "--eval-tokens", "64", "--variants", "dense_tied,leviathan",
                             "--quiet", "--run-dir", str(run), "--steps", "1000000"], env=env, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # its own group: a failure kills it with its workers
    metrics = [run / variant / "metrics.jsonl" for variant in ("dense_tied", "leviathan")]
    deadline = time.time() + 300
    while not all(m.is_file() for m in metrics) and time.time() < deadline:  # both workers have begun training
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.1)
    time.sleep(2)
    stop = signal.SIGHUP if group == "SIGHUP" else signal.SIGTERM
    if group == "SIGHUP":  # round 13 (S4, S9): a closed terminal: SIGHUP to the whole group killed multiprocessing's
        os.killpg(proc.pid, signal.SIGHUP)  # resource tracker, whose restarts filled stderr with tracebacks
    else:
        proc.send_signal(signal.SIGTERM)  # the demo's process only, not its group
    if group is True:  # round 12 (U271), round 13 (V111): as GNU timeout, systemd and schedulers stop a job, then its whole
        time.sleep(0.2)  # group: a worker killed as it sent its result held the result queue's lock forever
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        status = proc.wait(timeout=240)  # a loaded 2-core machine: once 86 s
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"the demo did not stop within 240 s of its SIGTERM: {proc.stderr.read()}") from None
    err = proc.stderr.read()
    assert status == 128 + stop and "Traceback" not in err and "resource_tracker" not in err, err
    assert f"stopped by {stop.name} before `leviathan demo` finished" in err
    assert "after it had finished: its work is complete" not in err, err
    # round 14 (A56, A166): each worker added its own lines, one promising "exit status 0": one line for the demo
    assert [line for line in err.splitlines() if line.strip()] == [line for line in err.splitlines()
                                                                   if line.startswith("stopped by ")], err
    assert err.count("stopped by ") == 1 and "received: finishing this step" not in err, err
    assert all(list((m.parent / "checkpoints").glob("step-*")) for m in metrics)  # each saved where it stopped
    deadline = time.time() + 30
    while time.time() < deadline:  # no worker outlives the demo
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("a worker of the demo outlived it")


SLOW_VERB = r"""
import json
import re
import shutil
import sys
sys.path.insert(0, sys.argv[1])
from leviathan import cli
cli.VERBS["slow"] = ("r10_slow_verb", "a verb whose module takes a while to import, as bench's does (torch)")
sys.argv = ["leviathan", "slow"]
sys.exit(cli.main())
"""


def test_a_stop_while_the_verbs_module_is_imported_says_what_it_stopped(tmp_path):
    """Round 10 (Q132): the stop handlers were set only once the verb's module was imported, and `leviathan bench`
    imports torch with it (seconds): a SIGTERM 2 s or 4 s in killed it without a word, exit 143. The module's import
    and the parsing of its arguments now run inside the handling."""
    import os
    import signal
    import subprocess

    (tmp_path / "r10_slow_verb.py").write_text(
        "import os, signal, time\nos.kill(os.getpid(), signal.SIGTERM)  # while this module is imported\n"
        "time.sleep(0.5)\n\ndef add_arguments(parser):\n    pass\n\ndef run(args):\n    time.sleep(30)\n    return 0\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    proc = subprocess.run([sys.executable, "-c", SLOW_VERB, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip() == ("stopped by SIGTERM before `leviathan slow` finished: its temporary files are "
                                   "removed and nothing half-written is taken as valid; run the same command again")


def test_a_top_p_below_float32s_range_keeps_the_likeliest_token(finished_run):
    """Round 10 (Q166): ``generate --top-p 1e-300`` ended in a RuntimeError traceback from torch.multinomial: the
    threshold compared as 0 in float32 and dropped every token, the first too. The likeliest token is always kept."""
    from leviathan.generation import sample_next_token
    from reliability_support import cli

    logits = torch.tensor([[0.5, 3.0, -1.0, 2.0]])
    for _ in range(5):
        assert sample_next_token(logits, temperature=1.0, top_p=1e-300).tolist() == [1]
    proc = cli(["generate", finished_run, "--prompt", "hi", "--top-p", "1e-300", "--max-new-tokens", "3"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("temperature", [1e-300, 1e-39])
def test_a_temperature_below_float32s_range_picks_the_likeliest_token(temperature):
    """Round 11 (S79): ``generate --temperature 1e-300`` (and 1e-39) ended in a RuntimeError traceback from
    torch.multinomial: the logits divided by it overflowed float32 to +-inf and softmax gave NaN."""
    from leviathan.generation import sample_next_token

    logits = torch.tensor([[0.5, 3.0, -1.0, 2.0], [-4.0, -5.0, float("-inf"), -3.5]])
    for _ in range(5):
        assert sample_next_token(logits, temperature=temperature).tolist() == [1, 3]


def test_an_input_id_outside_a_tables_vocabulary_is_named():
    """Round 11 (S147c): a dense model given an input id >= vocab_size ended in torch's ``IndexError: index out of
    range in self``, naming neither the id nor the range (round 8 named out-of-range labels only)."""
    from leviathan import CausalLM, ModelConfig

    model = CausalLM(ModelConfig(vocab_size=300, hidden_size=16, num_attention_heads=2, num_hidden_layers=1,
                                 embedding="dense_tied"))
    with pytest.raises(ValueError, match=r"input id 300 is outside \[0, 300\) \(the model's vocab_size\)"):
        model(torch.tensor([[5, 300]]))
    with pytest.raises(ValueError, match=r"input id -1 is outside"):
        model(torch.tensor([[-1, 3]]))
    assert model(torch.tensor([[5, 299]]))[0].shape == (1, 2, 300)



def test_round_11s_values_that_parse_but_make_no_sense_are_refused(capsys):
    """Round 11: ``params --variants leviathan,leviathan`` printed the row twice and ``--variants ''`` an empty table
    (S93, S95); ``sweep --seeds '0,'`` dropped the empty item (S212); ``flops_per_token(cfg, -1)`` returned a negative
    attention term (S155)."""
    from leviathan.model.accounting import flops_per_token
    from leviathan.model.config import ModelConfig

    for argv, words in ((["params", "--variants", "leviathan,leviathan"], "variant 'leviathan' is listed twice"),
                        (["params", "--variants", ""], "expected comma-separated variants"),
                        (["sweep", "--grid", "cpu-tiny", "--seeds", "0,", "--list"], "an empty item in '0,'")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        assert words in one_error(capsys.readouterr().err)
    for bad in (-1, 0, 2.5, True):
        with pytest.raises(ValueError, match="seq_len must be a positive whole number of positions"):
            flops_per_token(ModelConfig(), bad)
    assert flops_per_token(ModelConfig(), 128)["total"] > 0


@pytest.mark.parametrize("name", ["tiny\nx", "-tiny", "tiny "], ids=["newline", "dash", "space"])
def test_a_grid_name_that_is_no_plain_folder_name_is_refused(tmp_path, name):
    """Round 11 (S59, S60): a grid named ``"tiny\\nx"`` trained into ``runs/tiny<newline>x/``; ``"-tiny "`` made a
    folder with an invisible trailing space."""
    import yaml

    from leviathan.experiments.machinery.grid import load_grid

    grid = tmp_path / "g.yaml"
    grid.write_text(yaml.safe_dump({"name": name, "seeds": [0], "sizes": {"a": "cpu-tiny"},
                                    "experiments": {"iso_body": {"variants": ["dense_tied"], "sizes": ["a"]}}}))
    with pytest.raises(ConfigError, match="is not a plain name"):
        load_grid(str(grid))


def test_a_grid_tolerance_written_as_yaml_text_is_the_number_it_spells(tmp_path):
    """Round 11 (S207): YAML 1.1 reads ``tolerance: 1e-2`` as text; the grid refused it as if 0.01 were out of
    (0, 1). It is the number it spells, as in a train config."""
    from leviathan.experiments.machinery.grid_file import tolerance_of

    assert tolerance_of("1e-2") == 0.01
    with pytest.raises(ConfigError, match=r"expected a number in \(0, 1\)"):
        tolerance_of("abc")


def test_a_sigint_the_parent_ignores_does_not_stop_a_verb(data, tmp_path):
    """Round 11 (S196): a shell that is not interactive starts a background job with SIGINT ignored; leviathan's
    handlers undid that, so a SIGINT meant for the shell stopped `report` as it finished (exit 130, no line). An
    ignored SIGINT now stays ignored: training goes on to its last step."""
    import os
    import signal
    import subprocess
    import time

    from reliability_support import REPO

    run = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "leviathan", "train", *map(str, run_overrides(data, max_steps=60)),
                             "--run-dir", str(run), "--quiet"], env=env, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.time() + 240
    while not (run / "metrics.jsonl").is_file() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "stopped" not in err, err
    assert json.loads((run / "summary.json").read_text())["steps"] == 60


def test_round_12s_python_api_values_are_refused_with_their_range(finished_run, data):
    """Round 12: the Python API took values the CLI refuses, or ended in another library's traceback:
    ``generate(..., temperature=nan)`` (torch.multinomial), ``max_new_tokens=-1``, ``top_k=-1``, ``eos_id`` past the
    vocabulary, ``seed=-1``, ``top_p=True``, a float prompt (U128-U135); ``to_hf('a string', ...)`` (U142);
    ``load_model(RUN, device='cuda:7')`` without CUDA (U145); ``tokenizer.decode([-1])`` / ``[10**6]`` (U152,
    U153); the harness's ``limit=1e30`` / ``inf`` / ``True``, ``num_fewshot=1.5`` / ``True``, ``batch_size=-3``,
    ``device='cuda:7'`` (U78, U155-U162); ``CausalLM`` given uint16 ids, the token files' dtype (U124)."""
    from leviathan.checkpoint.read import load_model, load_tokenizer
    from leviathan.eval.harness import check_harness_options
    from leviathan.generation import generate
    from leviathan.hf.export import to_hf

    model, _ = load_model(str(finished_run))
    for kwargs, words in (({"temperature": float("nan")}, "temperature must be a finite number >= 0"),
                          ({"max_new_tokens": -1}, "max_new_tokens must be a whole number >= 0"),
                          ({"top_k": -1}, "top_k must be a whole number >= 1"),
                          ({"eos_id": 10**6}, "eos_id must be a token id in [0, "),
                          ({"seed": -1}, "seed: "),
                          ({"top_p": True}, "top_p must be a number in (0, 1]")):
        with pytest.raises(ValueError, match=re.escape(words)):
            generate(model, [5], **{"max_new_tokens": 3, **kwargs})
    with pytest.raises(TypeError, match="prompt_ids must be integer token ids"):
        generate(model, [5.7], 3)
    # round 14: the public sampler and Decoder took what generate refuses (B116, B329-B331, B333); NaN logits,
    # use_cache="no" and a ragged batch reached torch's errors or were taken (B111, B115, B117)
    from leviathan.generation import Decoder, sample_next_token

    logits = torch.randn(1, 300)
    for kwargs, words in (({"top_k": -3}, "top_k must be a whole number >= 1"), ({"top_k": 1.5}, "top_k must be"),
                          ({"top_p": 2.0}, "top_p must be a number in (0, 1]"), ({"top_p": 0.0}, "top_p must be"),
                          ({"temperature": float("nan")}, "temperature must be a finite number >= 0")):
        with pytest.raises(ValueError, match=re.escape(words)):
            sample_next_token(logits, **kwargs)
        with pytest.raises(ValueError, match=re.escape(words)):
            Decoder(model, **{"temperature": 1.0, **kwargs})
    with pytest.raises(ValueError, match="the logits hold NaN, so no token can be sampled or is likelier"):
        sample_next_token(torch.full((1, 300), float("nan")))
    with pytest.raises(TypeError, match="use_cache must be True or False, got 'no'"):
        generate(model, [5], 3, use_cache="no")
    with pytest.raises(ValueError, match="prompt_ids of several sequences must have equal lengths"):
        generate(model, [[1, 2], [3]], 3)
    with pytest.raises(TypeError, match="to_hf takes a leviathan model"):
        to_hf("a string", "/nonexistent/x")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available here"):
            load_model(str(finished_run), device="cuda:7")
    tok = load_tokenizer(str(finished_run))
    for ids in ([-1], [10**6]):
        with pytest.raises(ValueError, match=r"is outside this tokenizer's ids \[0, "):
            tok.decode(ids)
    for ids, words in (([1.5], "got float 1.5"), ([True], "got the bool True"), (["5"], "got str '5'"),
                       ([np.bool_(True)], "got the bool")):  # round 13 (W92, W94): decoded as ids 1 and 5
        with pytest.raises(TypeError, match=re.escape(f"token ids are integers, {words}")):
            tok.decode(ids)
    assert tok.decode([np.int64(5), torch.tensor(6)]) == tok.decode([5, 6])  # numpy's and torch's integers are ids
    for kwargs, words in (({"limit": 1e30}, "limit must be a fraction in (0, 1)"),
                          ({"limit": float("inf")}, "limit must be a fraction in (0, 1)"),
                          ({"limit": True}, "limit must be a fraction in (0, 1)"),
                          ({"limit": 2.5}, "limit must be a fraction in (0, 1)"),
                          ({"num_fewshot": 1.5}, "num_fewshot must be a whole number >= 0"),
                          ({"num_fewshot": True}, "num_fewshot must be a whole number >= 0"),
                          ({"batch_size": -3}, "batch_size must be 'auto' or a whole number >= 1")):
        options = {"limit": None, "batch_size": 8, "num_fewshot": None, "device": "cpu", **kwargs}
        with pytest.raises(ValueError, match=re.escape(words)):
            check_harness_options(**options)
    check_harness_options(limit=0.5, batch_size="auto", num_fewshot=0, device="cpu")
    check_harness_options(limit=2.0, batch_size=1, num_fewshot=None, device="cpu")
    from leviathan.eval.harness import evaluate_model  # round 14 (B135, B136): --dtype bogus / int8

    for dtype in ("bogus", "int8"):
        with pytest.raises(ValueError, match=f"dtype must be one of float32, bfloat16, float16, float64 .* got "
                                             f"'{dtype}'"):
            evaluate_model(None, None, "piqa", hf_dir="unused", dtype=dtype)
    ids = torch.tensor([[1, 2, 3]])
    assert torch.equal(model(ids.to(torch.uint16))[0], model(ids)[0])


def test_an_empty_frequency_file_is_one_error(capsys, finished_run, data, tmp_path):
    """Round 12 (U198): an empty train_freq.npy (its digest in meta.json recomputed) ended in numpy's EOFError."""
    import shutil

    from leviathan.data.companions import load_train_freq
    from leviathan.errors import UserError

    from reliability_support import refingerprint_data

    copy = Path(shutil.copytree(data, tmp_path / "data"))
    (copy / "train_freq.npy").write_bytes(b"")
    refingerprint_data(copy)  # as a hand edit that also fixed the digest: the file's own reading is reached
    with pytest.raises(UserError, match="train_freq.npy' is not a readable .npy array"):
        load_train_freq(copy)


FORKED_CHILD = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from leviathan import cli

def call():
    pid = os.fork()
    if pid == 0:  # as lm-eval's bootstrap pool forks its workers, and ends them with SIGTERM
        os.kill(os.getpid(), signal.SIGTERM)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print("signaled" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM else f"status {status}")
    return 0

sys.exit(cli._stoppable("x", call))
"""


def test_a_process_forked_by_a_verb_takes_a_stop_signals_default_action(tmp_path):
    """Round 13 (V8, V8a): lm-eval's bootstrap pool forks workers that inherit the verb's stop handler; the pool ends
    them with SIGTERM, and the handler raised ``Stopped`` inside the worker: a traceback after a right result, and at
    times a pool waiting forever on a worker. A forked child now takes the signal's default action."""
    import subprocess

    proc = subprocess.run([sys.executable, "-c", FORKED_CHILD, str(Path(__file__).parents[2] / "src")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "signaled", (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "stopped by" not in proc.stderr, proc.stderr


def test_adoptions_fit_of_a_float16_model_names_float16_not_the_rate():
    """Round 15 (B54): ``adopt(LlamaForCausalLM(cfg).half(), fit=Fit(steps=2))`` said "fit diverged at Fit.lr=0.003
    ... adopt it with a lower rate", and at 3e-5 the same: float16 (Adam's eps underflows) is the cause. It is named,
    before the model changes."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf import Fit, adopt

    cfg = LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(cfg).half()
    with pytest.raises(UserError) as info:
        adopt(model, fit=Fit(steps=2), seed_dim=8, modes=2, knots=8, rank=4)
    assert str(info.value).startswith("the model is float16") and "lower rate" not in str(info.value)
    assert type(model) is LlamaForCausalLM  # refused before anything changed


def test_a_model_or_a_count_given_a_name_is_a_type_error_naming_it():
    """Round 13 (W69, W103): ``CausalLM('cpu-tiny')`` and ``count_model('x')`` ended in AttributeErrors."""
    from leviathan import CausalLM, count_model

    with pytest.raises(TypeError, match=r"CausalLM takes a ModelConfig, got str 'cpu-tiny'; for a preset: "):
        CausalLM("cpu-tiny")
    with pytest.raises(TypeError, match="count_model takes a built model"):
        count_model("x")


@pytest.mark.parametrize("damage, shown", [
    (lambda w: w[5].fill_(float("nan")), "the model's input table holds NaN or inf in 1 of its 300 rows (ids 5)"),
    (lambda w: w.mul_(1e30), "the model's input table has a root mean square of "),
    (lambda w: w.zero_(), "the model's input table is all zeros: there is nothing to fit"),
], ids=["B252-nan-row", "B253-scaled-1e30", "B254-all-zero"])
def test_adoptions_fit_names_an_input_table_it_cannot_follow(damage, shown):
    """Round 14 (B252, B253, B254): ``adopt(m, fit=Fit(...))`` of a model whose input table held a NaN row, or was
    multiplied by 1e30, was blamed on the rate ("adopt it with a lower rate, e.g. Fit(lr=0.0003)"); an all-zero table
    fitted without a word (objective 1.2e+35, cosine 0). The table is named before anything changes, with the fix."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.errors import UserError
    from leviathan.hf import Fit, adopt

    cfg = LlamaConfig(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        damage(model.get_input_embeddings().weight)
    with pytest.raises(UserError) as info:
        adopt(model, fit=Fit(steps=2), seed_dim=8, modes=2, knots=8, rank=4)
    assert shown in str(info.value) and "adopt it without fit=" in str(info.value), str(info.value)
    assert "lower rate" not in str(info.value)
    assert type(model) is LlamaForCausalLM  # refused before anything changed


def _tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64))


_SMALL = dict(k=2, seed_dim=8, modes=2, knots=4, rank=4)
_META = "is on the meta device (a shape and a dtype, no values"


def test_round_15s_python_api_inputs_are_one_clear_error(finished_run, tmp_path):
    """Round 15: tracebacks from deep inside torch, transformers or tokenizers for inputs the API can name: a model or
    ids on the meta device given to adopt's fit, Fit.text, generate and LeviathanGenerator (B56, B63, B121, B135); a
    text or a transformers model given to generate (B124, B303); bytes given to train_bpe (B129); to_hf's
    training='bogus' (B249); from_native(m, vocab_size=5) (B250); and a path given as bake_adopted's tokenizer (B233).
    numpy's True is a bool to adopt, as its ints and floats are numbers (B270)."""
    from leviathan.checkpoint.read import load_model
    from leviathan.data.tokenizer import train_bpe
    from leviathan.errors import UserError
    from leviathan.generation import generate
    from leviathan.hf import Fit, adopt, bake_adopted
    from leviathan.hf.export import from_native, to_hf
    from leviathan.model.generator import LeviathanGenerator

    with torch.device("meta"):
        meta = _tiny_llama()
    model, _ = load_model(str(finished_run))
    meta_ids = torch.tensor([[1, 2, 3]], device="meta")
    cases = [(lambda: adopt(meta, fit=Fit(steps=2), **_SMALL), UserError, f"the model's input table (the fit's target) "
              f"{_META}"),
             (lambda: adopt(_tiny_llama(), fit=Fit(steps=2, text=torch.empty(1, 10, dtype=torch.long, device="meta")),
                            **_SMALL), UserError, f"Fit.text {_META}"),
             (lambda: generate(model, meta_ids, 3), UserError, f"prompt_ids {_META}"),
             (lambda: LeviathanGenerator(300, 16, **_SMALL)(torch.tensor([1], device="meta")), UserError,
              f"the ids given to LeviathanGenerator {_META}"),
             (lambda: generate("not a model", [1, 2, 3], 3), UserError, "generate() takes leviathan's CausalLM"),
             (lambda: generate(adopt(_tiny_llama(), **_SMALL), [1, 2, 3], 3), UserError,
              "is a transformers model (adopted or not), whose forward takes no leviathan KV cache: use its own "
              "model.generate("),
             (lambda: train_bpe([b"ab"] * 10, vocab_size=300), UserError, "train_bpe takes texts (str), got bytes"),
             (lambda: to_hf(model, tmp_path / "x3", training="bogus"), TypeError,
              "to_hf: training must be a leviathan.hf.model_card.Training"),
             (lambda: from_native(model, vocab_size=5), UserError, "from_native: vocab_size is the model's own"),
             (lambda: bake_adopted(adopt(_tiny_llama(), **_SMALL), tmp_path / "bk", tokenizer="../tokenizer.json"),
              TypeError, "tokenizer= takes a tokenizer object, not the path '../tokenizer.json': load it first")]
    for call, kind, words in cases:
        with pytest.raises(kind) as info:
            call()
        assert words in str(info.value), str(info.value)
    assert not (tmp_path / "x3").exists() and not (tmp_path / "bk").exists()
    adopted = adopt(_tiny_llama().config, center=np.bool_(True), **_SMALL)
    assert adopted.config.leviathan_generator["center"] is True


def test_round_16s_python_api_inputs_are_refused_not_taken(data, finished_run, tmp_path):
    """Round 16: ``train_bpe('hello world', 300)`` trained a BPE of the text's characters, one text each (C273);
    ``generate(model, [5] * 200, 2)`` on a model of 128 positions cut the prompt to its last 127 ids and returned
    (1, 128), not the (B, T + new) its docstring promises (C102); ``load_tokenizer(DATA).save(RUN)`` wrote its files
    among a train run's (C275). Each is refused; a prompt that fits, and a tokenizer saved into a folder of its own,
    still work, each file written whole."""
    from leviathan.checkpoint.read import load_model
    from leviathan.data.tokenizer import load_tokenizer, train_bpe
    from leviathan.errors import UserError
    from leviathan.generation import generate

    model, _ = load_model(str(finished_run))
    limit = model.config.max_position_embeddings
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    before = tree_hashes(run)
    tokenizer = load_tokenizer(str(data))
    cases = [(lambda: train_bpe("hello world", 300), UserError, "train_bpe takes an iterable of texts, got one str"),
             (lambda: train_bpe(b"hello world", 300), UserError, "pass a list of texts, e.g. [text]"),
             (lambda: generate(model, [5] * 200, 2), ValueError, f"the prompt has 200 ids but the model has {limit} "
              f"positions, so no new id fits after it; pass at most its last {limit - 1} ids"),
             (lambda: generate(model, [5] * limit, 1), ValueError, f"pass at most its last {limit - 1} ids"),
             (lambda: tokenizer.save(run), UserError, f"{str(run)!r} is the output of `leviathan train`")]
    for call, kind, words in cases:
        with pytest.raises(kind) as info:
            call()
        assert words in str(info.value), str(info.value)
    assert tree_hashes(run) == before
    assert generate(model, [5] * (limit - 1), 2, temperature=0).shape == (1, limit)  # one new id fits
    assert load_tokenizer(str(tokenizer.save(tmp_path / "tok"))).fingerprint() == tokenizer.fingerprint()
    assert sorted(p.name for p in (tmp_path / "tok").iterdir()) == ["leviathan_tokenizer.json", "tokenizer.json"]


def test_a_factorized_rank_past_any_use_is_refused_by_the_config(tmp_path):
    """Round 15 (B207): ``train ... model.embedding=factorized model.embedding_rank=1000000000`` reached the allocator
    ("you tried to allocate 1200000000000 bytes"), exit 1; it is refused as a config value, exit 2."""
    line = cli_error(["params", "model.embedding=factorized", "model.embedding_rank=1000000000"])
    assert "model.embedding_rank=1,000,000,000 gives the factorized table" in line and "lower model.embedding_rank" \
        in line, line


def test_params_counts_the_embedding_an_override_names():
    """Round 17 (E244): ``params --preset cpu-tiny model.embedding=factorized model.embedding_rank=8`` printed the
    default three-row table (dense_tied, dense_untied, leviathan), the override read and dropped, exit 0. The table
    now counts the variant model.embedding names; with a --variants that says otherwise it is refused."""
    import json

    done = cli(["params", "--preset", "cpu-tiny", "model.embedding=factorized", "model.embedding_rank=8", "--json"])
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["name"] for r in rows] == ["factorized"] and rows[0]["input"] < rows[0]["head"], rows
    assert [r["name"] for r in json.loads(cli(["params", "--preset", "cpu-tiny", "--json"]).stdout)] == \
        ["dense_tied", "dense_untied", "leviathan"]
    line = cli_error(["params", "--preset", "cpu-tiny", "model.embedding=factorized", "--variants", "leviathan"])
    assert line.startswith("error: model.embedding=factorized and --variants leviathan both say which variants to "
                           "count; give one"), line

def test_greedy_decoding_refuses_logits_that_have_no_likeliest_token(finished_run):
    """Round 17 (E410, E411, E412): ``sample_next_token(all-NaN logits, temperature=0)`` and all -inf logits returned
    id 0 as "the likeliest token", and ``generate(model with a NaN weight, [1, 2, 3], 4, temperature=0)`` four id-0
    tokens, without a word, where sampling refused the same logits. Greedy decoding now refuses them too; a row with
    some ids masked to -inf still has its likeliest token."""
    from leviathan.checkpoint import load_model
    from leviathan.generation import generate, sample_next_token

    for logits, words in ((torch.full((1, 300), float("nan")), "the logits of row 0 hold NaN"),
                          (torch.full((2, 300), float("-inf")), "the logits of row 0 are -inf for every id"),
                          (torch.tensor([[0.0, 1.0], [float("nan"), 2.0]]), "the logits of row 1 hold NaN")):
        with pytest.raises(ValueError, match=re.escape(words)):
            sample_next_token(logits, temperature=0)
    assert sample_next_token(torch.tensor([[float("-inf"), 1.0, float("-inf")]]), temperature=0).tolist() == [1]
    model = load_model(str(finished_run))[0]
    next(model.parameters()).data.fill_(float("nan"))
    with pytest.raises(ValueError, match="hold NaN, so no token is the likeliest"):
        generate(model, [1, 2, 3], 4, temperature=0)


@pytest.mark.parametrize("ids", [{"bos_token_id": 999}, {"eos_token_id": -5}, {"pad_token_id": 1.5},
                                 {"eos_token_id": [3, 300]}, {"pad_token_id": True}])
def test_from_native_refuses_special_token_ids_outside_the_vocabulary(finished_run, tmp_path, ids):
    """Round 17 (E419, E420): ``from_native(m, bos_token_id=999)`` on a vocabulary of 300, and ``to_hf(from_native(m,
    eos_token_id=-5, pad_token_id=1.5), out)``, were taken and written into config.json and generation_config.json
    without a word. ``LeviathanConfig`` (from_native's, and a config.json's when loaded) refuses an id that is not a
    whole number of the model's vocabulary, before anything is written."""
    from leviathan.checkpoint import load_model
    from leviathan.hf.export import from_native, to_hf

    model = load_model(str(finished_run))[0]
    name = next(iter(ids))
    with pytest.raises(ConfigError, match=re.escape(f"{name} ") + r".* is not a token id of this model \(whole "
                       r"numbers 0 to 299"):
        to_hf(from_native(model, **ids), tmp_path / "x")
    assert list(tmp_path.iterdir()) == []
    assert from_native(model, eos_token_id=[3, 299], pad_token_id=0).config.eos_token_id == [3, 299]


@pytest.mark.parametrize("signame", ["SIGHUP", "SIGTERM"])
def test_a_stop_held_over_an_import_that_train_then_takes_is_said_once(capsys, data, tmp_path, monkeypatch, signame):
    """Round 17 (E160): a SIGHUP 1.5 s into `leviathan train` came while a module was imported; the CLI held it and a
    timer delivered it again once train's own stop flag was in place, which said it ("SIGHUP received ... (exit status
    0)", "stopped by SIGHUP before the first step ..."), but the stop stayed pending in the CLI, which raised it once
    more after train returned: a third line, "stopped by SIGHUP before `leviathan train` finished ...; run the same
    command again", and exit 129. The stop is now the verb's once delivered: train's lines only, exit 0."""
    import os
    import signal
    import threading
    import time

    from leviathan import cli
    from leviathan.train import loop

    stop = getattr(signal, signame)
    if signal.getsignal(stop) is signal.SIG_IGN:
        pytest.skip(f"{signame} is ignored in this process (nohup): no verb handles it")
    package = tmp_path / "e160_import"
    package.mkdir()
    (package / "__init__.py").write_text(f"import os, signal, time\nos.kill(os.getpid(), signal.{signame})\n"
                                         f"for _ in range(20):\n    time.sleep(0.001)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real_check, real_model = loop.check_run_config, loop.initial_model

    def check_importing(cfg):  # before train's stop flag: the CLI's handler holds the stop over this import
        import e160_import  # noqa: F401
        return real_check(cfg)

    flag_in_place = threading.Event()
    real_deliver = cli._deliver_again

    def deliver_once_train_has_its_flag(signum, held):  # the CLI's timer: 0.05 s, and then train's flag is in place
        flag_in_place.wait(60)  # under load (CI, 11 processes on 2 cores) train's folder checks took longer than the
        real_deliver(signum, held)  # timer's 0.05 s: the CLI then rightly stopped train before it began, exit 143

    def slow_model(cfg):  # the held stop is delivered again while the model is built, train's flag in place
        flag_in_place.set()
        time.sleep(0.5)
        return real_model(cfg)

    monkeypatch.setattr(cli, "_deliver_again", deliver_once_train_has_its_flag)
    monkeypatch.setattr(loop, "check_run_config", check_importing)
    monkeypatch.setattr(loop, "initial_model", slow_model)
    try:
        status = main(["train", *run_overrides(data), "--run-dir", str(tmp_path / "run"), "--quiet"])
    finally:
        sys.modules.pop("e160_import", None)
    err = capsys.readouterr().err
    assert status == 0, err
    assert err.count("stopped by") == 1 and f"stopped by {signame} before the first step of this session" in err, err
    assert "run the same command again" not in err and not (tmp_path / "run").exists(), err


def test_a_stop_before_the_first_step_through_the_api_is_not_promised_a_checkpoint(data, tmp_path):
    """Round 18 (G256): ``train(cfg, DIR, quiet=True)`` given SIGTERM while it loaded the data said "SIGTERM received:
    finishing this step, saving a checkpoint, then stopping", then "stopped by SIGTERM before the first step ...:
    nothing was trained and no checkpoint was written". Before the first step the handler says what will happen; a
    real SIGTERM in a real process (sent while the model is built), train returns steps 0, stopped 'SIGTERM'."""
    import os
    import subprocess

    from reliability_support import REPO

    script = (f"import os, signal\nfrom leviathan.train import loop\nfrom leviathan.run_config import load_run_config\n"
              f"real = loop.initial_model\n"
              f"def model(cfg):\n    os.kill(os.getpid(), signal.SIGTERM)\n    return real(cfg)\n"
              f"loop.initial_model = model\n"
              f"s = loop.train(load_run_config(None, {run_overrides(data)!r}), {str(tmp_path / 'run')!r}, quiet=True)\n"
              f"print(s.steps, s.stopped)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1"})
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 0 and proc.stdout.split() == ["0", "SIGTERM"], proc.stderr
    assert lines[0] == "SIGTERM received: stopping before the first step (nothing will be trained or saved) (exit " \
                       "status 0; send SIGTERM again to stop at once)", proc.stderr  # round 22 (Q57): a second stop
    assert len(lines) == 2 and lines[1].startswith("stopped by SIGTERM before the first step of this session"), lines
