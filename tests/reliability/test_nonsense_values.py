"""Values that parse but make no sense, input that is not text, and limits applied without a word (issue 22).

- nan / inf / negative numbers in training settings and command-line options: one error line, status 2;
- a binary file where text is expected (a results file) is reported line by line, never a traceback;
- generation longer than the model's positions says what it did, and prints the tokens it generated.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from leviathan.cli import main

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import one_error, run_overrides, tree_hashes  # noqa: E402
from test_bad_input import fails, resume  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


@pytest.mark.parametrize("override, message", [
    ("optim.lr=inf", "optim.lr: expected a finite number, got inf"),
    ("optim.lr=nan", "optim.lr: expected a finite number, got nan"),
    ("optim.weight_decay=inf", "optim.weight_decay: expected a finite number, got inf"),
    ("optim.eps=-inf", "optim.eps: expected a finite number, got -inf"),
    ("schedule.min_lr_ratio=nan", "schedule.min_lr_ratio: expected a finite number, got nan"),
], ids=["lr-inf", "lr-nan", "decay-inf", "eps-minus-inf", "ratio-nan"])
def test_non_finite_training_settings(capsys, data, run_copy, override, message):
    before = tree_hashes(run_copy)
    line = fails(capsys, *resume(run_copy, data, max_steps=6), override)
    assert message in line and "nan and inf are not settings" in line
    assert tree_hashes(run_copy) == before


def test_an_integer_setting_past_64_bits_is_refused(data, tmp_path):
    """Round 6: ``max_steps: 1000000000000000000000000000000`` in a config file trained toward a step no run reaches
    (20,000 steps in before it was stopped), where ``1e400`` was refused: an integer setting must fit in 64 bits."""
    from reliability_support import cli_error

    config = tmp_path / "run.yaml"
    config.write_text("max_steps: 1000000000000000000000000000000\n")
    line = cli_error(["train", "--config", config, f"data.path={data}", "--run-dir", tmp_path / "run"])
    assert "max_steps: 1000000000000000000000000000000 does not fit in 64 bits" in line
    line = cli_error(["train", "--config", "tiny", f"data.path={data}", "eval_tokens=1e19", "--print-config"])
    assert "eval_tokens: 10000000000000000000 does not fit in 64 bits" in line
    assert not (tmp_path / "run").exists()


def test_a_run_far_longer_than_its_data_is_refused(data, tmp_path):
    """Round 30 (X54): ``max_steps=1e12`` on a split of tens of thousands of tokens was taken without a word (about
    2e11 passes, thousands of years). A run may read its training split at most ``MAX_PASSES_PER_RUN`` times; the
    line names the setting, the passes and a length of about one pass; nothing is made."""
    from reliability_support import cli_error

    line = cli_error(["train", "--config", "tiny", f"data.path={data}", "max_steps=1e12", "--run-dir",
                      tmp_path / "rbig"])
    assert line.startswith("error: max_steps=1,000,000,000,000 would read the ") and "at most 100,000 passes are " \
        "taken); lower it (max_steps=" in line and "is about one pass) or prepare more text" in line, line
    assert not (tmp_path / "rbig").exists()


def test_demos_absurd_steps_are_named_as_its_option_before_anything_is_made(capsys, data, tmp_path):
    """Round 31 (Z61): ``demo --steps 100000000000`` was refused by the training loop in the config's words
    ("max_steps=... lower it (max_steps=11 is about one pass)") after an estimate of 273,066,667 minutes, and left its
    --run-dir made. The demo checks the length first, naming --steps and its fix; nothing is made."""
    from leviathan.cli import main

    assert main(["demo", "--steps", "100000000000", "--data-dir", str(data), "--run-dir", str(tmp_path / "dm")]) == 2
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if x.startswith("error: ")][-1]
    assert line.startswith("error: --steps 100,000,000,000 would read the ") and "lower it (--steps " in line, line
    assert "max_steps" not in line and " min on this machine" not in err and not (tmp_path / "dm").exists(), err


def test_max_tokens_far_past_the_data_is_refused_and_a_long_stop_test_run_is_not(data, tmp_path):
    from leviathan.errors import UserError
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import MAX_PASSES_PER_RUN, train

    cfg = load_run_config(None, run_overrides(data, max_steps="null", max_tokens="1e15"))
    with pytest.raises(UserError, match=r"^max_tokens=1,000,000,000,000,000 would read the [0-9,]+ tokens of the "
                                        r"training split"):
        train(cfg, tmp_path / "r", quiet=True)
    assert not (tmp_path / "r").exists()
    from leviathan.data.meta import read_meta
    from leviathan.train.loop import _check_run_length

    tokens = read_meta(data).splits["train"].tokens  # the stop tests' "forever": demo --steps 1000000 of 64 tokens
    assert 1_000_000 * 64 <= MAX_PASSES_PER_RUN * tokens
    _check_run_length(load_run_config(None, run_overrides(data, max_steps=100_000)), read_meta(data))


@pytest.mark.parametrize("argv, message", [
    (["analyze", "fit", "--sizes", "1e6,2e6,4e6", "--losses", "3,2.5,2", "--bootstrap", "-3"],
     "argument --bootstrap: must be a whole number >= 0, got -3"),
    (["report", "{run}", "--ci", "1.5"], "argument --ci: must lie strictly between 0 and 1, got '1.5'"),
    (["sweep", "--grid", "cpu", "--out", "{run}", "--max-runs", "0"], "argument --max-runs: must be a positive integer"),
    (["prepare", "stdlib", "--out", "{run}", "--max-documents", "-1"],
     "argument --max-documents: must be a positive integer, got -1"),
    (["bench", "--warmup", "-1"], "argument --warmup: must be a whole number >= 0, got -1"),
    # round 31 (Z157, Z166): taken without a word, and timed until killed
    (["bench", "--quick", "--only", "generator", "--repeats", "1000000000"],
     "argument --repeats: must be at most 1,000 (each round times every model once; the sections' defaults are 1 to "
     "9), got 1,000,000,000"),
    (["bench", "--quick", "--only", "generator", "--warmup", "1000000000"], "argument --warmup: must be at most 1,000"),
    (["analyze", "embeddings", "--sweep", "{run}", "--buckets", "1000000000"],
     "argument --buckets: must be at most 1000 (each bucket averages a share of the training tokens), "
     "got 1,000,000,000"),  # round 6: accepted, and looped over the buckets until memory ran out
    (["analyze", "frequency", "--buckets", "1"], "argument --buckets: must be an integer >= 2, got 1"),
    # round 14: an unknown regime, baseline or ladder variant was taken ("no nope pairs", exit 0: B52, B53, B182),
    # and 1e400 parameters placed on a fit as "inf params" (B48)
    (["analyze", "frequency", "{run}", "--regime", "nope"], "argument --regime: invalid choice: 'nope'"),
    (["analyze", "frequency", "{run}", "--baseline", "nonsense"], "argument --baseline: invalid choice: 'nonsense'"),
    (["report", "{run}", "--ladder", "nope"], "argument --ladder: invalid choice: 'nope'"),
], ids=["bootstrap-negative", "ci-above-1",
        "max-runs-zero", "max-documents-negative", "warmup-negative", "repeats-huge", "warmup-huge", "buckets-huge", "buckets-one", "regime-unknown",
        "baseline-unknown", "ladder-unknown"])
def test_nonsense_command_line_numbers(capsys, tmp_path, argv, message):
    with pytest.raises(SystemExit) as info:  # argparse: usage + one error line, status 2
        main([a.format(run=tmp_path / "x") for a in argv])
    assert info.value.code == 2
    assert message in one_error(capsys.readouterr().err)
    assert not (tmp_path / "x").exists()


def test_run_benchmark_holds_a_python_caller_to_the_flags_rule():
    """Z157, Z166 through the API: ``run_benchmark(BenchOptions(repeats=10**9))`` is refused before any work."""
    from leviathan.bench import BenchOptions, run_benchmark
    from leviathan.errors import UserError

    with pytest.raises(UserError, match=r"^run_benchmark: opts.repeats: must be at most 1,000 "):
        run_benchmark(BenchOptions(sections=("generator",), quick=True, repeats=10**9), log=lambda m: None)
    with pytest.raises(UserError, match=r"^run_benchmark: opts.warmup: must be at most 1,000 "):
        run_benchmark(BenchOptions(sections=("generator",), quick=True, warmup=10**9), log=lambda m: None)


def test_an_inverted_point_with_infinite_parameters_is_refused(capsys):
    """Round 14 (B48): ``--invert 0.5:1e400`` placed "loss 0.5000 with inf params" on the fit, exit 0."""
    line = fails(capsys, "analyze", "fit", "--sizes", "100,200,400", "--losses", "3,2,1", "--invert", "0.5:1e400")
    assert "--invert '0.5:1e400': '1e400' is too large for a 64-bit float and reads as inf (overflow)" in line  # P30
    line = fails(capsys, "analyze", "fit", "--sizes", "100,200,400", "--losses", "3,2,1", "--invert", "0.5:inf")
    assert "--invert takes a finite LOSS > 0 and a finite PARAMS > 0 (a loss is positive, as in --losses), got " \
           "'0.5:inf'" in line


def test_an_inverted_point_with_a_negative_loss_is_refused_as_losses_refuses_it():
    """Round 16 (C162): ``analyze fit --invert 3:1e9,-1:5`` placed a loss of -1 on the fit ("N_eq inf, multiplier
    infx ... below_irreducible"), exit 0, where ``--losses`` refuses the same value; one rule for both, in the CLI and
    in ``dense_equivalent``."""
    from leviathan.errors import UserError
    from leviathan.experiments.method.scaling import dense_equivalent, fit_power_law
    from reliability_support import cli_error

    line = cli_error(["analyze", "fit", "--sizes", "1000,2000,4000,8000", "--losses", "5,4.5,4.2,4.1", "--invert",
                      "3:1e9,-1:5"])
    assert line == "error: --invert takes a finite LOSS > 0 and a finite PARAMS > 0 (a loss is positive, as in " \
                   "--losses), got '-1:5'", line
    fit = fit_power_law([1000, 2000, 4000, 8000], [5, 4.5, 4.2, 4.1], num_bootstrap=0)
    with pytest.raises(UserError, match=r"dense_equivalent needs positive losses \(a cross-entropy is > 0\), got -1"):
        dense_equivalent(fit, [3.0, -1.0], 5)


def test_a_fit_of_losses_rising_with_size_says_it_is_no_power_law():
    """F190: ``analyze fit --sizes 1e6,2e6,4e6 --losses 4,5,6`` printed 'alpha = 0.0001 [0.0001, 0.0001]', a fit at
    alpha's bound with zero-width intervals missing every point by 0.8 nats, and no word that losses rising with size
    are no falling power law. It now says so (a 'not identified' reason, also in --json and the report); falling and
    flat losses get no such line."""
    import json

    from reliability_support import cli

    proc = cli(["analyze", "fit", "--sizes", "1e6,2e6,4e6", "--losses", "4,5,6"])
    assert proc.returncode == 0 and "not identified: the losses rise with size (slope +1.44 nats" in proc.stdout
    proc = cli(["analyze", "fit", "--sizes", "1e6,2e6,4e6", "--losses", "4,5,6", "--json"])
    assert any("the losses rise with size" in r for r in json.loads(proc.stdout)["fit"]["unidentified"]), proc.stdout
    for losses in ("5,4.5,4.2", "5,5,5"):
        proc = cli(["analyze", "fit", "--sizes", "1e6,2e6,4e6", "--losses", losses])
        assert proc.returncode == 0 and "rise with size" not in proc.stdout, proc.stdout


@pytest.mark.parametrize("option, value, shown", [
    ("--temperature", "nan", "got nan"), ("--temperature", "inf", "got inf"), ("--temperature", "-1", "got -1.0"),
    ("--top-p", "inf", "got inf"), ("--top-p", "nan", "got nan"), ("--top-p", "0", "got 0.0"),
], ids=["temperature-nan", "temperature-inf", "temperature-negative", "top-p-inf", "top-p-nan", "top-p-zero"])
def test_nonsense_sampling_options(capsys, finished_run, option, value, shown):
    line = fails(capsys, "generate", finished_run, option, value)
    assert line.startswith(f"error: {option} must be") and line.endswith(shown), line
    other = "--top-p" if option == "--temperature" else "--temperature"
    assert other not in line, line  # round 14 (B198): one line blamed both flags, the default temperature too


def test_a_binary_file_as_results_is_reported_not_a_traceback(capsys, tmp_path):
    junk = tmp_path / "results.jsonl"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    code = main(["analyze", "compare", str(junk)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"warning: {junk}:1: line 1 is not UTF-8 text" in err
    assert f"error: no result rows in {str(junk)!r}" in err


def test_generation_beyond_the_model_positions_says_so(capsys, finished_run):
    code = main(["generate", str(finished_run), "--prompt", "def f(x):\n    return x\n" * 40, "--max-new-tokens",
                 "500", "--temperature", "0", "--device", "cpu"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "only its last 127 tokens are used" in out.err  # the tiny model has 128 positions
    assert "note: --max-new-tokens 500 does not fit: 127 prompt tokens + 1 new fill the model's 128 positions; " \
           "generating 1" in out.err
    code = main(["generate", str(finished_run), "--prompt", "def", "--max-new-tokens", "500", "--temperature", "0",
                 "--device", "cpu"])
    out = capsys.readouterr()
    assert code == 0 and "does not fit" in out.err and "only its last" not in out.err
    assert len(out.out) > len("def") + 20  # the generated tokens are printed, none cut off


@pytest.mark.parametrize("content, kind, fix", [
    (b"\x1f\x8b\x08\x00" + bytes(200), "gzip-compressed data", "decompress it first"),
    (b"\x00\x01\x02\x03 not text \x00\xff\n", "binary data (NUL bytes)", "pass UTF-8 text in its place"),
    (b"\x89PNG\r\n\x1a\n" + bytes(100), "a PNG image", "or leave the file out"),
], ids=["gzip", "nul-bytes", "png"])
def test_prepare_refuses_a_source_that_is_not_text(capsys, tmp_path, content, kind, fix):
    source = tmp_path / "corpus.txt"
    source.write_bytes(content)
    line = fails(capsys, "prepare", source, "--out", tmp_path / "data", "--tokenizer", "cl100k_base",
                 "--val-fraction", "0", "--no-progress")
    assert line.startswith(f"error: {source} is not text: it looks like {kind}; ") and fix in line
    assert not (tmp_path / "data").exists()


def test_a_prompt_that_is_not_utf8_is_one_line(finished_run):
    """Round 5: ``generate --prompt $'a\\xffb'`` (bytes a terminal of another encoding sends) reached the tokenizer as
    a lone surrogate and ended in a TypeError traceback."""
    from reliability_support import cli_error

    line = cli_error(["generate", finished_run, "--max-new-tokens", "2", "--prompt", "a\udcffb"])  # argv byte 0xff
    assert "argument --prompt: is not UTF-8 text (byte 0xff at character 1)" in line


def test_eval_text_that_is_a_folder_or_a_device_is_named_as_such(finished_run, tmp_path):
    """Round 6: ``eval --text /dev/null`` and ``eval --text FOLDER`` said the file does not exist."""
    from reliability_support import cli_error

    assert "text file '/dev/null' is not a regular file (a device" in cli_error(["eval", finished_run, "--text",
                                                                                 "/dev/null"])
    assert f"text file '{tmp_path}' is a folder; pass the path of a UTF-8 text file" in \
        cli_error(["eval", finished_run, "--text", tmp_path])


def test_a_device_that_is_none_is_refused_before_any_work(capsys, data, finished_run, tmp_path):
    """Round 7 (B32, B35, B36, B41): ``eval --device tpu`` and ``generate --device cuda:x`` ended in torch's
    RuntimeError traceback, ``device=cuda:x`` in a config passed its check (anything starting with "cuda") into the
    same traceback, and ``lm-eval --device tpu`` ran on the CPU without a word. One rule for every way in
    (``leviathan.devices``)."""
    from reliability_support import cli_error

    from leviathan.errors import UserError
    from leviathan.eval.harness import run_harness
    from leviathan.train.distributed import resolve_device

    assert "argument --device: must be auto, cpu, cuda or cuda:N" in cli_error(["eval", finished_run, "--device",
                                                                                 "tpu"])
    assert "got 'cuda:x'" in cli_error(["generate", finished_run, "--device", "cuda:x", "--max-new-tokens", "2"])
    assert "argument --device: must be cpu, cuda or cuda:N" in cli_error(["lm-eval", finished_run, "--device", "tpu",
                                                                           "--tasks", "piqa", "--limit", "2"])
    run = tmp_path / "run"
    line = fails(capsys, "train", *run_overrides(data), "device=cuda:x", "--run-dir", run, "--quiet")
    assert "device must be auto, cpu, cuda or cuda:N (N a GPU's index, e.g. cuda:0), got 'cuda:x'; set device=" in line
    assert not run.exists()
    with pytest.raises(UserError, match="got 'tpu'"):
        resolve_device("tpu")
    with pytest.raises(UserError, match="lm-eval's device must be cpu, cuda or cuda:N"):
        run_harness(tmp_path, tmp_path, ["piqa"], device="tpu")
    assert str(resolve_device("cpu")) == "cpu"


def test_eval_json_of_a_diverged_run_is_valid_json_and_text_excludes_data(capsys, data, finished_run, tmp_path,
                                                                          monkeypatch):
    """Round 14 (B346): ``eval --json`` of a run whose loss is past exp's range (a diverged run: loss 85,761) printed
    ``"ppl": Infinity``, which is not JSON (RFC 8259); and ``eval --text FILE --data DIR`` ignored --data (B242)."""
    import json

    from leviathan.commands import eval as eval_command
    from leviathan.eval.perplexity import summarize

    monkeypatch.setattr(eval_command, "_score", lambda model, stream, *a: summarize(85_761.0 * 64, 64, 200))
    capsys.readouterr()
    assert main(["eval", str(finished_run), "--json", "--max-tokens", "64"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    assert out["loss"] == pytest.approx(85_761.0) and out["ppl"] is None, out
    text = tmp_path / "a.txt"
    text.write_text("some text to score\n")
    line = fails(capsys, "eval", finished_run, "--text", text, "--data", data)
    assert "--text scores a text file, --data / --split a prepared split: give one of the two" in line


def test_more_frequency_buckets_than_the_counts_can_fill_are_named():
    """Round 14 (B292, B298): ``analyze embeddings RUN --buckets 1000`` over 137 seen ids printed 897 empty buckets,
    and ``analyze frequency --buckets 500`` 402, without a word."""
    import numpy as np

    from leviathan.eval.frequency import make_buckets

    # 60 buckets for the 60 seen ids: more are refused since round 29 (W670, test_more_buckets_than_ids.py)
    with pytest.warns(UserWarning, match="54 of the 60 frequency buckets hold no ids .* 6 distinct values"):
        make_buckets(np.array([0, 1, 2, 3, 5, 8, 13] * 10), 60)


def test_a_results_path_that_is_not_there_or_a_folder_is_named_as_such(capsys, tmp_path):
    """Round 14 (B180, B310): ``report DIR`` whose results.jsonl is a folder, and ``report ... --lr-sweep NONEXIST``,
    said "no result rows in ..." (the file, or the folder, is not there at all)."""
    (tmp_path / "rin" / "results.jsonl").mkdir(parents=True)
    line = fails(capsys, "report", tmp_path / "rin", "--out", tmp_path / "r")
    assert f"'{tmp_path / 'rin' / 'results.jsonl'}' is a folder, not the results file" in line, line
    line = fails(capsys, "report", tmp_path / "nonexist", "--out", tmp_path / "r")
    assert f"results '{tmp_path / 'nonexist'}' does not exist" in line, line


def test_a_file_that_is_recognisably_not_results_is_named_so_without_row_warnings(capsys, data, finished_run):
    """Round 16 (C239, C240): read_results of a data folder's meta.json or a run's metrics.jsonl returned [] after
    warnings that each line was a damaged row the sweep would train again; the CLI said 'no result rows' after the
    same warnings. Both raise one UserError naming the file as not a results file, and warn of no line."""
    from reliability_support import cli

    from leviathan.errors import UserError
    from leviathan.experiments.machinery.results import read_results

    for path, what in ((data / "meta.json", "it is a prepared data folder's meta.json (written by `leviathan prepare`)"),
                       (finished_run / "metrics.jsonl", "it is a run's metrics.jsonl (written by `leviathan train`")):
        with pytest.raises(UserError) as caught:
            read_results(path)
        said = str(caught.value)
        assert said.startswith(f"no result rows in {str(path)!r}, which is not a results file: {what}"), said
        assert said.endswith("pass a sweep output dir or its results.jsonl (written by `leviathan sweep`)"), said
        assert capsys.readouterr().err == ""
    proc = cli(["report", finished_run / "metrics.jsonl", "--out", finished_run.parent / "never"])
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr  # the error line alone
    assert "which is not a results file: it is a run's metrics.jsonl (written by `leviathan train`" in proc.stderr
    assert not (finished_run.parent / "never").exists()
