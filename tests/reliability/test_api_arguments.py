"""The Python API's arguments are held to the rules of the flags they mirror (issue 30 round 17): a switch is True or
False, a count a whole number in its range, a list a list, a path not '', a callback callable, and a window fits the
model. Each was taken as something else (a text as true, a str letter by letter, 2.0 as a float that broke torch
later) or reached a traceback after files were written; each is refused first, naming the argument, nothing written.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from leviathan.errors import UserError

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, one_run_grid, run_overrides, tree_hashes, write_corpus  # noqa: E402

pytestmark = [pytest.mark.reliability]


def test_a_text_given_a_switch_is_refused_before_the_data_folder_is_replaced(data, tmp_path):
    """E194 (damage), E190: ``prepare(OTHER, DATA, overwrite='no')`` read 'no' as true and replaced DATA with OTHER's
    tokens, exit 0; E19: ``train(cfg, RUN, quiet='no')`` trained printing nothing. A switch is True or False."""
    from leviathan.data.prepare import prepare
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    copy = Path(shutil.copytree(data, tmp_path / "data"))
    before = tree_hashes(copy)
    other = write_corpus(tmp_path / "other", num_docs=10, seed=5)
    for value in ("no", "yes", 0):
        with pytest.raises(TypeError) as info:
            prepare(str(other), copy, "bpe:300", val_fraction=0.2, overwrite=value, progress=False, log=print)
        assert f"prepare: overwrite must be True or False, got {value!r}; pass overwrite=True or overwrite=False" \
            in str(info.value), str(info.value)
    with pytest.raises(TypeError, match="prepare: progress must be True or False, got 'no'"):
        prepare(str(other), tmp_path / "new", "bpe:300", progress="no")
    assert tree_hashes(copy) == before and not (tmp_path / "new").exists()
    cfg = load_run_config(None, run_overrides(data, max_steps=1))
    with pytest.raises(TypeError, match="train: quiet must be True or False, got 'no'"):
        train(cfg, tmp_path / "run", quiet="no")
    assert not (tmp_path / "run").exists()


def test_trains_resume_and_an_edited_configs_float_size_are_refused_or_read_as_a_files(data, tmp_path, capsys):
    """E18: ``train(cfg, RUN, resume=True)`` was pathlib's TypeError traceback from checkpoint.find; E23:
    ``cfg.data.seq_len = 32.0`` passed ``check_run_config`` and broke ``range()`` at step 1 after the run folder was
    written. ``resume`` is refused naming its values; the float is read as a file's 32.0 is (C156): 32, and the run
    trains and records 32."""
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import train

    cfg = load_run_config(None, run_overrides(data, max_steps=2, checkpoint_interval=2))
    for resume in (True, 1, ""):
        with pytest.raises(TypeError, match="train: resume must be None .a fresh run., 'auto'"):
            train(cfg, tmp_path / "r18", resume=resume, quiet=True)
    assert not (tmp_path / "r18").exists()
    cfg.data.seq_len = 32.0
    summary = train(cfg, tmp_path / "r23", quiet=True)
    assert summary.steps == 2
    assert yaml.safe_load((tmp_path / "r23" / "config.yaml").read_text())["data"]["seq_len"] == 32
    assert "seq_len: 32\n" in (tmp_path / "r23" / "config.yaml").read_text()


def test_sweep_options_take_the_rules_of_the_sweeps_flags(data, tmp_path):
    """E64-E66, E69, E70: ``SweepOptions(jobs=True)`` ran one job, ``max_runs=0`` created the folder and stopped "after
    0 runs", ``only='a-...'`` was read letter by letter, ``shard=(2, 1)`` blamed the selection, and ``threads=1.5``
    reached torch's set_num_threads after grid.json and the marker were written. Each is refused as its flag is."""
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import SweepOptions, run_sweep

    cases = [(dict(jobs=True), "SweepOptions: jobs: expected a positive integer, got True"),
             (dict(max_runs=0), "SweepOptions: max_runs: must be a positive integer, got 0"),
             (dict(only="a-leviathan-s0"), "SweepOptions: only: expected a list of names, got str 'a-leviathan-s0'"),
             (dict(shard=(2, 1)), "SweepOptions: shard: (2, 1) is not (i, n) with 1 <= i <= n"),
             (dict(threads=1.5), "SweepOptions: threads: expected a positive integer, got 1.5"),
             (dict(threads=10**6), "SweepOptions: threads: must be at most"),
             (dict(skip_eval="no"), "SweepOptions: skip_eval: must be True or False, got 'no'"),
             (dict(regimes="scaling"), "SweepOptions: regimes: expected a list of names, got str")]
    for kw, words in cases:
        with pytest.raises(UserError) as info:
            SweepOptions(**kw)
        assert words in str(info.value), str(info.value)
    grid = load_grid(str(one_run_grid(data, tmp_path)))
    with pytest.raises(UserError, match="SweepOptions: threads: expected a positive integer, got 1.5"):
        run_sweep(grid, tmp_path / "p70", SweepOptions(threads=1.5), log=lambda s: None)  # E70's call
    assert not (tmp_path / "p70").exists()  # grid.json and the marker were written before


def test_run_sweeps_arguments_of_the_wrong_kind_are_named_before_anything_is_written(data, tmp_path):
    """G464-G466: ``run_sweep(grid, OUT, log='yes')`` raised "'str' object is not callable" after grid.json and the
    marker were written; a grid file's name and a dict of options ended in raw AttributeErrors."""
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import SweepOptions, run_sweep

    grid_file = str(one_run_grid(data, tmp_path))
    grid = load_grid(grid_file)
    for args, kw, words in [((grid_file, tmp_path / "s"), {}, "run_sweep: grid must be a Grid"),
                            ((grid, tmp_path / "s", {"only": ["a"]}), {}, "run_sweep: options must be a SweepOptions"),
                            ((grid, tmp_path / "s", SweepOptions()), {"log": "yes"}, "run_sweep: log must be a function")]:
        with pytest.raises(TypeError, match=words):
            run_sweep(*args, **kw)
        assert not (tmp_path / "s").exists()


def test_a_list_given_as_a_string_and_a_callback_that_is_not_one_are_named(data, finished_run, tmp_path):
    """E62: ``load_grid(g, overrides='max_steps=3')`` said "override 'm' must look like key=value" (as
    load_run_config says since round 8, it must be a list); E27, E30: ``read_results(sweep, report='yes')`` was taken
    on a whole file and a TypeError "'str' object is not callable" at a torn line."""
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.results import read_results
    from leviathan.train.metrics import read_metric_rows

    with pytest.raises(TypeError, match="overrides must be a list of 'key=value' strings, e.g. \\['max_steps=100'\\], "
                                        "got str 'max_steps=3'"):
        load_grid(str(one_run_grid(data, tmp_path)), overrides="max_steps=3")
    sweep = tmp_path / "sw"
    sweep.mkdir()
    (sweep / "results.jsonl").write_text('{"torn\n')
    (tmp_path / "no-rows-yet").mkdir()
    for folder in (sweep, tmp_path / "no-rows-yet"):  # a torn line (E30), no line to report (E27)
        with pytest.raises(TypeError, match="read_results: report must be a function taking one message"):
            read_results(folder, report="yes")
    with pytest.raises(TypeError, match="read_metric_rows: report must be a function"):
        read_metric_rows(finished_run, report="yes")


def test_evaluate_refuses_what_the_cli_eval_refuses(finished_run, data):
    """E103: ``evaluate(model, toks, 32.0, 4)`` was a TypeError traceback in window_batches; E105: ``num_bytes=-5``
    returned bpb -11305.7; E106: float ids 0.7 above the true ones were cut to them and scored as them; E107: seq_len
    200 on a model of 64 positions was scored without a word (``eval --seq-len 200`` and generate refuse it)."""
    from leviathan.checkpoint.read import load_model
    from leviathan.eval.perplexity import evaluate

    model, _ = load_model(str(finished_run))
    limit = model.config.max_position_embeddings
    tokens = np.fromfile(data / "val.bin", dtype=np.uint16)[:200]
    cases = [(lambda: evaluate(model, tokens, 32.0, 4), "seq_len expected a positive integer, got 32.0"),
             (lambda: evaluate(model, tokens, 32, True), "batch_size expected a positive integer, got True"),
             (lambda: evaluate(model, tokens, 32, 4, num_bytes=-5), "num_bytes must be the UTF-8 size in bytes"),
             (lambda: evaluate(model, tokens.astype(np.float32) + 0.7, 32, 4),
              "tokens must be integer token ids, got an array of float32"),
             (lambda: evaluate(model, tokens, limit + 1, 4),
              f"seq_len {limit + 1} exceeds the model's max_position_embeddings ({limit}); pass seq_len <= {limit}")]
    for call, words in cases:
        with pytest.raises(ValueError) as info:
            call()
        assert words in str(info.value), str(info.value)
    result = evaluate(model, tokens, np.int64(limit), 4, num_bytes=1000)
    assert result.tokens == len(tokens) - 1 and result.bpb > 0


def test_a_null_setting_says_to_write_a_value_or_delete_the_key(data, tmp_path):
    """E11: ``device: ~`` in a config was "error: device: expected a string, got None", exit 2, with no value to write
    and no word that deleting the key takes the default; a Literal setting lists its values."""
    config = tmp_path / "c11.yaml"
    base = {"model": {"preset": "cpu-tiny"}, "data": {"path": str(data), "seq_len": 32}, "batch_tokens": 256,
            "micro_batch_size": 8, "max_steps": 1}
    config.write_text(yaml.safe_dump({**base, "device": None}))
    line = cli_error(["train", "--config", config, "--run-dir", tmp_path / "r11"])
    assert "device: null (~, or nothing after the colon) is not a value of it; write a value, or delete the key to " \
           "take its default (auto)" in line, line
    config.write_text(yaml.safe_dump({**base, "dtype": None}))
    line = cli_error(["train", "--config", config, "--run-dir", tmp_path / "r11"])
    assert "write a value (one of auto, float32, bfloat16), or delete the key" in line, line
    assert not (tmp_path / "r11").exists()


def test_an_empty_path_is_not_the_current_folder_to_the_model_loaders(tmp_path, monkeypatch):
    """E168: ``load_adopted('')`` was read as '.' (". has no config.json"), as ``load_model('')`` was: both name the
    empty path, as the verbs and train, write_report and read_results do."""
    from leviathan.checkpoint.read import load_model
    from leviathan.hf import load_adopted

    monkeypatch.chdir(tmp_path)
    for load, name in ((load_adopted, "load_adopted's path"), (load_model, "load_model's path")):
        with pytest.raises(UserError, match=f"{name} is an empty path"):
            load("")


def test_train_bpes_show_progress_is_a_switch_named_as_one():
    """E434: ``train_bpe(texts, 300, show_progress='no')`` was the tokenizers library's "'str' object is not an
    instance of 'bool'", naming no argument, where vocab_size and min_frequency are named."""
    from leviathan.data.tokenizer import train_bpe

    with pytest.raises(TypeError, match=r"train_bpe: show_progress must be True or False, got 'no'; pass "
                                        r"show_progress=True or show_progress=False"):
        train_bpe(["hello world"] * 50, 300, show_progress="no")


def test_nan_logits_are_not_told_to_sample_greedily(finished_run):
    """E405: all-NaN logits were refused with "... or pass temperature=0 for the likeliest token", and greedy
    decoding of them returns id 0: no token is likelier. The advice stays for logits with inf and no NaN. The
    logits are the finished run's model's, with its weights made NaN (a diverged model)."""
    import torch

    from leviathan.checkpoint.read import load_model
    from leviathan.generation import sample_next_token

    model, _ = load_model(str(finished_run))
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float("nan"))
        logits = model(torch.tensor([[1, 2, 3]]))[0][:, -1]
    with pytest.raises(ValueError) as caught:
        sample_next_token(logits)
    assert "the logits hold NaN" in str(caught.value) and "temperature=0" not in str(caught.value), caught.value
    with pytest.raises(ValueError, match="the logits hold inf, .*or pass temperature=0 for the likeliest token"):
        sample_next_token(torch.tensor([[0.0, float("inf"), 1.0]]))

def test_adopt_stores_numpy_settings_as_plain_numbers_and_saves_whole(tmp_path):
    """G82, G83 (damage): ``adopt(cfg, modes=np.int64(2))`` (or ``ln_eps=np.float32(1e-5)``) kept the numpy scalar in
    config.leviathan_generator; ``save_pretrained`` raised json's TypeError and left a config.json cut short alone in
    the folder. The settings are stored as plain numbers and the folder loads back; a numpy value put there by hand is
    refused before anything is written."""
    import json

    from transformers import LlamaConfig

    from leviathan.hf import adopt, load_adopted

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, max_position_embeddings=64)
    model = adopt(config, modes=np.int64(2), ln_eps=np.float32(1e-5), seed_dim=np.int64(16), rank=4, knots=8)
    model.save_pretrained(tmp_path / "ad82")
    saved = json.loads((tmp_path / "ad82" / "config.json").read_text())["leviathan_generator"]
    assert saved["modes"] == 2 and saved["seed_dim"] == 16 and abs(saved["ln_eps"] - 1e-5) < 1e-9
    assert load_adopted(tmp_path / "ad82").config.leviathan_generator["modes"] == 2
    model.config.leviathan_generator["rank"] = np.int64(4)
    with pytest.raises(UserError, match="leviathan_generator holds a value config.json cannot hold"):
        model.save_pretrained(tmp_path / "ad83")
    assert not (tmp_path / "ad83").exists()


def test_api_arguments_a_library_broke_on_are_refused_naming_them(data, finished_run):
    """Round 18: each of these reached a raw library error naming no argument. ``isoparametric_depth(max_layers=0 /
    nan)`` min()'s "empty sequence" (G11, G12); ``load_model(device=3 / 0 / True)`` torch's "Cannot access
    accelerator device" or "only accepts floating point dtypes" (G28, G35, G38); ``generate(seed=np.int64(5))``
    torch's "an integer is required" (G146); ``sample_next_token`` of no ids torch's amax IndexError (G150);
    ``evaluate(dtype='bfloat16')`` torch's set_autocast_dtype TypeError (G327); ``make_buckets(F, 5.0)`` range()'s
    TypeError (G333); ``count_model(nn.Linear)`` an AttributeError (G385)."""
    import torch

    from leviathan import ModelConfig, count_model, isoparametric_depth
    from leviathan.checkpoint.read import load_model
    from leviathan.data.loader import TokenDataset
    from leviathan.eval.frequency import make_buckets
    from leviathan.eval.perplexity import evaluate
    from leviathan.generation import generate, sample_next_token

    dense = ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        embedding="dense_untied")
    for bad in (0, float("nan")):
        with pytest.raises(UserError, match="isoparametric_depth: max_layers: .*; pass the deepest model"):
            isoparametric_depth(dense, "leviathan", max_layers=bad)
    assert isoparametric_depth(dense, "leviathan", max_layers=np.int64(8)).config.num_hidden_layers <= 8
    for device, said in ((3, "is 'cuda:3', but"), (0, "is 'cuda:0', but"), (True, "must be cpu, cuda or cuda:N")):
        if torch.cuda.is_available() and device is not True:
            continue
        with pytest.raises(UserError, match=f"load_model: device {said}"):
            load_model(finished_run, device=device)
    model = load_model(finished_run, device=torch.device("cpu"))[0]
    assert generate(model, [1, 2, 3], 3, seed=np.int64(5)).tolist() == generate(model, [1, 2, 3], 3, seed=5).tolist()
    with pytest.raises(ValueError, match=r"logits must hold one score per id .* got shape \(1, 0\)"):
        sample_next_token(torch.randn(1, 0))
    tokens = np.asarray(TokenDataset(data, "val").tokens[:200])
    with pytest.raises(TypeError, match="dtype must be None or one of torch.float32.* pass torch.bfloat16"):
        evaluate(model, tokens, 32, 4, dtype="bfloat16")
    with pytest.raises(UserError, match="num_buckets must be a whole number between 2 and .* got 5.0"):
        make_buckets(np.ones(300), 5.0, "mass")
    with pytest.raises(TypeError, match="count_model takes a built model .a causal LM.* got Linear"):
        count_model(torch.nn.Linear(3, 3))
    assert count_model(model).total > 0


def test_counts_that_are_not_whole_and_settings_the_model_fixes_are_named(finished_run):
    """G332: ``make_buckets`` of counts holding a NaN cast it to a negative int64 (numpy's RuntimeWarning) and blamed
    "negative counts"; 2.5 was cut to 2 without a word. G458: ``plain_llama_config(cfg, vocab_size=5)`` was
    LlamaConfig's raw "got multiple values for keyword argument 'vocab_size'". Both name the value and the fix."""
    import warnings

    from leviathan.checkpoint.read import load_model
    from leviathan.eval.frequency import make_buckets
    from leviathan.hf.export import plain_llama_config

    for value, shown in ((np.nan, "nan"), (2.5, r"2\.5"), (1e300, r"1e\+300")):
        counts = np.ones(300)
        counts[3] = value
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy RuntimeWarning before the line
            with pytest.raises(UserError, match=rf"train_freq\[3\] is {shown}, not a count .*pass one whole-number"):
                make_buckets(counts, 5, "mass")
    assert make_buckets(np.ones(300), 5, "mass") is not None
    cfg = load_model(str(finished_run))[1].model
    for key, value in (("vocab_size", 5), ("rms_norm_eps", float("nan"))):
        with pytest.raises(TypeError, match=f"plain_llama_config: {key} is the model's own .*change the ModelConfig"):
            plain_llama_config(cfg, **{key: value})
    assert plain_llama_config(cfg, use_cache=False).vocab_size == cfg.vocab_size


def test_a_fit_changed_after_construction_is_checked_again(tmp_path):
    """G61 (and G60): ``Fit`` is a mutable dataclass checked at construction; ``f.lr = nan`` set afterwards reached
    Adam's raw "Invalid learning rate: nan" (``f.steps = -5`` a fit blamed on the rate). adopt checks it again."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from leviathan.hf import Fit, adopt

    llama = LlamaForCausalLM(LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                         num_attention_heads=4, max_position_embeddings=64))
    for name, value, said in (("lr", float("nan"), "Fit.lr must be a number in"),
                              ("steps", -5, "Fit.steps must be a positive integer")):
        fit = Fit(steps=2)
        setattr(fit, name, value)
        with pytest.raises(UserError, match=said):
            adopt(llama, fit=fit, seed_dim=8, modes=2, knots=8, rank=4)
    assert type(llama).__name__ == "LlamaForCausalLM"  # nothing changed


def test_batch_loader_seed_and_saved_position_are_checked_where_taken(data):
    """G198, G199, G204, G206: ``BatchLoader(..., seed=-1)`` was taken and broke numpy at the first batch,
    ``seed=nan`` int()'s ValueError; ``load_state_dict`` took ``position=-5`` (a NoneType TypeError at the next batch)
    and ``'abc'`` (int()'s ValueError). Each is refused naming the argument; the state it saves loads back."""
    from leviathan.data.loader import BatchLoader

    for seed in (-1, float("nan"), 2**40, "0"):
        with pytest.raises(UserError, match="BatchLoader: seed: must be an integer in"):
            BatchLoader(data, 32, 4, seed=seed)
    with pytest.raises(UserError, match="BatchLoader: seq_len: .*got nan"):
        BatchLoader(data, float("nan"), 4)
    loader = BatchLoader(data, 32, 4, seed=np.int64(3))
    loader.next_batch()
    state = loader.state_dict()
    for position in (-5, "abc", 2.5, None):
        with pytest.raises(UserError, match="BatchLoader.load_state_dict: position: .*pass a state that"):
            BatchLoader(data, 32, 4, seed=3).load_state_dict({**state, "position": position})
    again = BatchLoader(data, 32, 4, seed=3)
    again.load_state_dict(state)
    assert again.next_batch()[0].tolist() == loader.next_batch()[0].tolist()


def test_batch_loader_refuses_token_arrays_of_fractional_or_negative_ids(data):
    """G200, G201 (and G196, G197, G202, G203, fixed before with G198): a token array of floats was cut to other ids
    (297.8 trained as 297), one of negative ids returned in batches, both without a word; sizes that are not whole
    numbers and a seed past 32 bits are refused. Integer ids >= 0 still load, a TokenDataset as before."""
    from leviathan.data.loader import BatchLoader

    with pytest.raises(UserError, match="BatchLoader: dataset: token ids must be integers, got an array of float64"):
        BatchLoader(np.random.default_rng(0).random(1000) * 300, 32, 4)
    with pytest.raises(UserError, match="BatchLoader: dataset: token id -500 at position 0 is negative"):
        BatchLoader(np.arange(-500, 500), 32, 4)
    for kwargs in ({"seq_len": 32.7}, {"seq_len": True}, {"shuffle": "buffer", "shuffle_buffer": 2.5},
                   {"seed": 2**70}):
        with pytest.raises(UserError, match="BatchLoader: "):
            BatchLoader(data, **{"seq_len": 32, "batch_size": 4, **kwargs})
    assert BatchLoader(np.arange(0, 500, dtype=np.uint16), 32, 4).next_batch()[0].shape == (4, 32)
    assert BatchLoader(data, 32, 4).next_batch()[0].shape == (4, 32)


def test_method_functions_refuse_what_they_cannot_compute_naming_it():
    """G216, G217, G220, G281, G283: ``t_interval(['1', '2'])`` was math's "must be real number, not str";
    ``least_squares_slope`` of equal x a ZeroDivisionError; ``lr_sweep.pick(tolerance=-1)`` min()'s "empty sequence";
    ``analyze_tables`` of a table with a NaN row numpy's broadcast error, and ``top_k=2.5`` range()'s TypeError."""
    from leviathan.experiments.method.embeddings import analyze_tables
    from leviathan.experiments.method.lr_sweep import pick
    from leviathan.experiments.method.paired import least_squares_slope, t_interval

    with pytest.raises(UserError, match="t_interval: diffs: expected numbers .*got '1'"):
        t_interval(["1", "2"])
    with pytest.raises(UserError, match="t_interval: ci: must lie strictly between 0 and 1"):
        t_interval([0.1, 0.2], ci=2)
    assert t_interval([np.float64(-0.2), None, -0.21]).n == 2  # None: a pair without a difference (a NaN: G213)
    with pytest.raises(UserError, match="least_squares_slope: xs: are all equal"):
        least_squares_slope([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert least_squares_slope([0.0, 1.0], [1.0, 3.0]) == 2.0
    for tolerance in (-1, float("nan"), "0.01"):
        with pytest.raises(UserError, match="lr_sweep.pick: tolerance: must be a finite number >= 0"):
            pick({1e-3: 5.0, 3e-3: 4.0}, tolerance=tolerance)
    assert pick({1e-3: 4.005, 3e-3: 4.0}) == 1e-3
    rng = np.random.default_rng(0)
    table, counts = rng.normal(size=(300, 16)), rng.integers(1, 100, 300)
    broken = table.copy()
    broken[5] = np.nan
    with pytest.raises(UserError, match=r"analyze_tables: final: holds NaN or inf in 1 of its 300 rows \(ids 5\)"):
        analyze_tables(table, broken, counts)
    with pytest.raises(UserError, match="analyze_tables: top_k: expected a positive integer, got 2.5"):
        analyze_tables(table, table, counts, top_k=2.5)
    assert analyze_tables(table, table, counts, top_k=np.int64(3)).probes


def test_write_sweep_records_checks_redo_and_log_before_writing_a_record(data, tmp_path, capsys):
    """J222: ``write_sweep_records(SW, dest=X, log='x')`` raised "'str' object is not callable" after the first
    record was written; J224: ``redo='no'`` was read as true and rewrote every record. Both are refused first."""
    from leviathan.experiments.machinery.embedding_files import write_sweep_records
    from leviathan.experiments.machinery.grid import load_grid
    from leviathan.experiments.machinery.sweep import run_sweep

    sweep = tmp_path / "sw"
    run_sweep(load_grid(str(one_run_grid(data, tmp_path))), sweep, log=lambda message: None)
    with pytest.raises(TypeError, match="write_sweep_records: log must be a function taking one message"):
        write_sweep_records(sweep, dest=tmp_path / "x", log="x")
    assert not (tmp_path / "x").exists()
    written = write_sweep_records(sweep, dest=tmp_path / "x", log=None)  # None: the default, print
    assert len(written) == 1 and "wrote" in capsys.readouterr().out
    before = tree_hashes(tmp_path / "x")
    for value in ("no", 1):
        with pytest.raises(TypeError, match=f"write_sweep_records: redo must be True or False, got {value!r}"):
            write_sweep_records(sweep, dest=tmp_path / "x", redo=value)
    assert tree_hashes(tmp_path / "x") == before


def test_a_writer_given_no_path_names_its_argument(finished_run, data, tmp_path):
    """J244: ``to_hf(m, None)`` was os.fspath's TypeError "expected str, bytes or os.PathLike object, not NoneType"
    from ownership.py, naming no argument; so were its siblings' (to_plain_llama, bake_adopted, save_pretrained,
    Tokenizer.save, prepare). Each names the argument now (``value_rules.path_problem``, write_report's rule)."""
    from leviathan.checkpoint import load_model
    from leviathan.data.prepare import prepare
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.hf.export import from_native, to_hf, to_plain_llama

    model = load_model(str(finished_run))[0]
    calls = [(lambda: to_hf(model, None), "out_dir"), (lambda: to_plain_llama(model, None), "out_dir"),
             (lambda: from_native(model).save_pretrained(None), "save_pretrained"),
             (lambda: load_tokenizer(str(data)).save(None), "Tokenizer.save"),
             (lambda: prepare(write_corpus(tmp_path / "c"), None, "bpe:300", progress=False), "prepare: out_dir")]
    for call, named in calls:
        with pytest.raises(UserError) as info:
            call()
        assert str(info.value).startswith(f"{named}: expected a path (a str or a pathlib.Path), got None"), info.value


@pytest.mark.parametrize("given, said", [
    ({"piece_chars": -1}, "prepare: piece_chars: must be a positive integer, got -1"),
    ({"piece_chars": 0}, "prepare: piece_chars: must be a positive integer, got 0"),
    ({"batch_chars": -1}, "prepare: batch_chars: must be a positive integer, got -1"),
    ({"max_documents": True}, "prepare: max_documents: expected a positive integer, got True"),
    ({"max_documents": 0}, "prepare: max_documents: must be a positive integer, got 0"),
    ({"text_field": 5}, "prepare: text_field: expected a field name (a non-empty str), got 5"),
    ({"num_workers": True}, "prepare: num_workers: expected a positive integer, got True")])
def test_prepares_arguments_take_the_rules_of_its_flags(tmp_path, given, said):
    """J190 (a hang): ``piece_chars=-1`` cut every long document into the same piece forever (6.9 GB, killed); J182:
    ``max_documents=True`` was read as 1 document; J183: ``text_field=5`` was accepted and entered the data
    fingerprint. Each is refused before anything is read or written, naming the argument."""
    from leviathan.data.prepare import prepare

    corpus = write_corpus(tmp_path / "corpus", num_docs=4)
    with pytest.raises(UserError) as info:
        prepare(corpus, tmp_path / "d", "bpe:300", progress=False, **given)
    assert str(info.value).startswith(said), str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]

def test_a_tokenizer_giving_numpy_ids_is_held_to_the_vocabulary_too():
    """A tokenizer built from arrays gives np.int64 sizes and ids, which ``_tokenizer_size`` and ``_eos_id`` read as
    "no id", so the fit check above passed them (noticed in fix29b)."""
    from types import SimpleNamespace

    import numpy as np

    from leviathan.hf.export import check_tokenizer_fits

    wide = SimpleNamespace(name="np-wide", vocab_size=np.int64(400), eot_id=np.int64(2))
    past = SimpleNamespace(name="np-past", eot_id=np.int64(305))
    with pytest.raises(UserError, match=r"to_hf: tokenizer: 'np-wide' gives 400 ids, but the model's vocab_size "
                                        r"is 300"):
        check_tokenizer_fits(wide, 300, "to_hf")
    with pytest.raises(UserError, match=r"to_hf: tokenizer: 'np-past''s end-of-text id 305 is outside"):
        check_tokenizer_fits(past, 300, "to_hf")
    check_tokenizer_fits(SimpleNamespace(name="np-fits", vocab_size=np.int64(300), eot_id=np.int64(299)), 300, "to_hf")


def test_a_tokenizer_with_ids_past_the_models_vocabulary_is_refused_by_the_writers(finished_run, data, tmp_path):
    """G101, G299: ``to_hf(model, d, tokenizer=load_tokenizer('o200k_base'))`` of a 300-id model wrote config.json's
    ``eos_token_id`` 199999 and o200k's tokenizer beside it, and ``bake_adopted`` of a 300-id adopted model likewise,
    without a word. ``to_hf``, ``to_plain_llama`` and ``bake_adopted`` refuse a tokenizer giving more ids than the
    model has, or an end-of-text id past them, before anything is written; the run's own tokenizer is written."""
    from types import SimpleNamespace

    import transformers

    from leviathan.checkpoint.read import load_model
    from leviathan.data.tokenizer import load_tokenizer
    from leviathan.hf import adopt, bake_adopted
    from leviathan.hf.export import to_hf, to_plain_llama

    model = load_model(finished_run)[0]
    vocab = model.config.vocab_size
    wide = SimpleNamespace(name="o200k_base", vocab_size=200_019, eot_id=199_999, save=lambda folder: None)
    past = SimpleNamespace(name="mine", vocab_size=vocab, eot_id=vocab + 5, save=lambda folder: None)
    for write, tokenizer, shown in ((to_hf, wide, f"gives 200,019 ids, but the model's vocab_size is {vocab}"),
                                    (to_plain_llama, past, f"end-of-text id {vocab + 5} is outside")):
        with pytest.raises(UserError, match=f"{write.__name__}: tokenizer: .*{shown}"):
            write(model, tmp_path / "x", tokenizer=tokenizer)
        assert not (tmp_path / "x").exists()
    adopted = adopt(transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                             num_attention_heads=4, max_position_embeddings=64))
    with pytest.raises(UserError, match="bake_adopted: tokenizer: 'o200k_base' gives 200,019 ids"):
        bake_adopted(adopted, tmp_path / "bk", tokenizer=wide)
    assert not (tmp_path / "bk").exists()
    to_hf(model, tmp_path / "ok", tokenizer=load_tokenizer(data))
    assert (tmp_path / "ok" / "tokenizer.json").is_file()
