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
