"""A stop that lands once a verb's output is in place says the work is complete (issue 30 round 22, Q106).

A SIGTERM 0.3 s into `leviathan prepare` (1 of 12 timings) came just after the data folder was renamed into place:
exit 143 and "stopped by SIGTERM before `leviathan prepare` finished: its temporary files are removed and nothing
half-written is taken as valid; run the same command again", beside a complete, valid folder. The stop is now held
over the rename, and a stop from then on says the work is done (``stop_signals.output_in_place``).

Round 23: the same for `export` (T11: 4 of 10 stops as its folder appeared said to run it again, and the rerun was
refused as "not empty"), `analyze embeddings --out` (T13), a sweep whose every run has its row (T33) and `lm-eval
--out`: the verb names its output (``stop_signals.final_output``) and the writer that puts it in place says so
(``placed``), so that the writers' other callers (lm-eval's own export, the demo's data folder) are not taken as done.
And a sweep's run stopped before its first step no longer says "checkpoint saved" (T31).
"""

from __future__ import annotations

import importlib
import json
import os
import signal

from reliability_support import write_corpus

from leviathan.cli import main
prepare_module = importlib.import_module("leviathan.data.prepare")  # the package's `prepare` is the function


def test_a_sigterm_just_after_prepare_put_its_folder_in_place_says_the_folder_is_complete(tmp_path, monkeypatch,
                                                                                            capsys):
    real_install = prepare_module._install

    def install_then_stop(tmp, out):
        os.kill(os.getpid(), signal.SIGTERM)  # during the rename: held, delivered once the folder is in place
        real_install(tmp, out)

    monkeypatch.setattr(prepare_module, "_install", install_then_stop)
    out = tmp_path / "data"
    status = main(["prepare", str(write_corpus(tmp_path / "corpus")), "--out", str(out), "--tokenizer", "bpe:300",
                   "--no-progress"])
    err = capsys.readouterr().err
    assert status == 128 + signal.SIGTERM, err
    assert "after it had finished: its work is complete" in err and "run the same command again" not in err, err
    assert (out / "meta.json").is_file() and (out / "train.bin").is_file()
    monkeypatch.setattr(prepare_module, "_install", real_install)
    assert main(["prepare", str(tmp_path / "corpus"), "--out", str(out), "--tokenizer", "bpe:300",
                 "--no-progress"]) == 0
    assert "is up to date" in capsys.readouterr().err


def test_a_sigterm_before_the_folder_is_in_place_still_says_nothing_was_made(tmp_path, monkeypatch, capsys):
    """The other side of the line: a stop as the marker is written (just before the rename) leaves no folder and
    says to run the command again."""
    real_marker = prepare_module.write_marker

    def stop_while_marking(*args, **kwargs):
        real_marker(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs at one of these bytecodes
            pass

    monkeypatch.setattr(prepare_module, "write_marker", stop_while_marking)
    out = tmp_path / "data"
    status = main(["prepare", str(write_corpus(tmp_path / "corpus")), "--out", str(out), "--tokenizer", "bpe:300",
                   "--no-progress"])
    err = capsys.readouterr().err
    assert status == 128 + signal.SIGTERM and "run the same command again" in err, err
    assert not out.exists() and not list(tmp_path.glob(".data.tmp-*"))


# ---- round 23: export, analyze embeddings --out, a sweep (T11, T13, T33); the stopped worker's line (T31) ----------
stop_signals = importlib.import_module("leviathan.stop_signals")


def _stop_once_placed(monkeypatch) -> list:
    """``stop_signals.placed`` that sends this process a SIGTERM once the verb's own output is in place (inside the
    writer's held stops, where they hold them); the paths it was called with are returned."""
    real_placed, seen = stop_signals.placed, []

    def placed_then_stop(path):
        seen.append(path)
        real_placed(path)
        if not stop_signals.output_in_place:  # an output on the way (lm-eval's export of the model): no stop here
            return
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs at one of these bytecodes (when the writer does not hold it)
            pass

    monkeypatch.setattr(stop_signals, "placed", placed_then_stop)
    return seen


def _says_complete(status: int, err: str, verb: str) -> None:
    assert status == 128 + signal.SIGTERM, err
    assert f"as `leviathan {verb}` was ending, after it had finished: its work is complete" in err, err
    assert "run the same command again" not in err and "Traceback" not in err, err


def test_a_sigterm_as_export_puts_its_folder_in_place_says_the_export_is_complete(finished_run, tmp_path, monkeypatch,
                                                                                 capsys):
    """T11: 4 of 10 stops said "run the same command again" beside a complete export, whose rerun was then refused
    as "not empty"; a stop once the folder is in place says it is complete. Replacing an earlier export
    (--overwrite) is held whole too: a stop between its two renames would leave neither in place."""
    from leviathan.ownership import check_output_files, read_marker

    out = tmp_path / "se"
    for extra in ([], ["--overwrite"]):
        seen = _stop_once_placed(monkeypatch)
        _says_complete(main(["export", str(finished_run), str(out), *extra]), capsys.readouterr().err, "export")
        assert seen and read_marker(out).verb == "export" and not list(tmp_path.glob(".se.*"))
        check_output_files(out, "the export is damaged")  # every file its marker lists, whole


def test_lm_evals_own_export_does_not_mark_its_verb_complete(finished_run, tmp_path):
    """The writers serve verbs that go on after them (lm-eval evaluates its export, the demo trains on the data it
    prepared): only the output the verb names (``final_output``) counts. The demo's stop during training said "its
    work is complete; nothing needs running again" once its prepare had run."""
    from leviathan.checkpoint import load_model
    from leviathan.hf.export import to_plain_llama

    stop_signals.output_in_place = False
    stop_signals.final_output(tmp_path / "lm")  # lm-eval's --out; its export goes to OUT/hf, then it evaluates
    to_plain_llama(load_model(finished_run)[0], tmp_path / "lm" / "hf", verb="lm-eval")
    assert stop_signals.output_in_place is False
    stop_signals.final_output(None)


def test_a_data_folder_prepared_for_another_verb_does_not_mark_it_complete(tmp_path):
    from leviathan.data.prepare import prepare

    stop_signals.output_in_place = False
    stop_signals.final_output(None)  # as the demo: its verb's output is not the data folder
    prepare(str(write_corpus(tmp_path / "corpus")), tmp_path / "data", tokenizer="bpe:300", progress=False,
            log=lambda msg: None)
    assert stop_signals.output_in_place is False


def test_a_sigterm_as_analyze_embeddings_writes_its_record_says_it_is_complete(finished_run, tmp_path, monkeypatch,
                                                                               capsys):
    """T13: a stop as emb.json was renamed into place said "run the same command again" beside a valid record."""
    from leviathan.experiments.machinery.embedding_files import read_record

    seen = _stop_once_placed(monkeypatch)
    status = main(["analyze", "embeddings", str(finished_run), "--out", str(tmp_path / "emb.json")])
    _says_complete(status, capsys.readouterr().err, "analyze")
    assert seen and read_record(tmp_path / "emb.json").run


def test_a_sigterm_once_every_run_of_a_sweep_has_its_row_says_it_is_complete(data, tmp_path, monkeypatch, capsys):
    """T33: with --jobs 2 both rows were in results.jsonl and the pool was shutting its workers down: the stop said
    "run the same command again", which then found 0 runs to go."""
    from reliability_support import one_run_grid

    seen = _stop_once_placed(monkeypatch)
    out = tmp_path / "sw"
    status = main(["sweep", "--grid", str(one_run_grid(data, tmp_path)), "--out", str(out), "--jobs", "2"])
    _says_complete(status, capsys.readouterr().err, "sweep")
    assert seen and len((out / "results.jsonl").read_text().splitlines()) == 1


def test_a_sweep_run_stopped_before_its_first_step_says_nothing_was_trained(data, tmp_path, monkeypatch, capsys):
    """T31: each run stopped as its worker set up said "training stopped by SIGTERM; checkpoint saved. Run the same
    command to resume." with no checkpoint written. (The stop here is one that came before training began, as a
    worker's ``remember_stop`` notes it.)"""
    from reliability_support import one_run_grid

    monkeypatch.setattr(stop_signals, "pending_stop", signal.SIGTERM)
    out = tmp_path / "sw"
    main(["sweep", "--grid", str(one_run_grid(data, tmp_path)), "--out", str(out)])
    said = capsys.readouterr()
    err = said.out + said.err
    assert ("a-dense_tied-s0: stopped by SIGTERM before its first step: nothing was trained and no checkpoint was "
            "written. Run the same command to train it.") in err, err
    assert "checkpoint saved" not in err and not (out / "runs" / "a-dense_tied-s0" / "checkpoints").exists()


def test_a_sigterm_as_lm_eval_puts_its_results_in_place_says_they_are_complete(finished_run, tmp_path, monkeypatch,
                                                                               capsys):
    """T11's kind in lm-eval --out: a stop once lm_eval.json was in place said to run the evaluation again."""
    from test_companions import _piqa_root

    seen = _stop_once_placed(monkeypatch)
    out = tmp_path / "lm"
    status = main(["lm-eval", str(finished_run), "--tasks", "piqa", "--limit", "2", "--threads", "1", "--data-root",
                   str(_piqa_root(tmp_path / "t")), "--out", str(out)])
    _says_complete(status, capsys.readouterr().err, "lm-eval")
    assert seen and "tasks" in json.loads((out / "lm_eval.json").read_text())
