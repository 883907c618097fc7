"""A stop that lands once a verb's output is in place says the work is complete (issue 30 round 22, Q106).

A SIGTERM 0.3 s into `leviathan prepare` (1 of 12 timings) came just after the data folder was renamed into place:
exit 143 and "stopped by SIGTERM before `leviathan prepare` finished: its temporary files are removed and nothing
half-written is taken as valid; run the same command again", beside a complete, valid folder. The stop is now held
over the rename, and a stop from then on says the work is done (``stop_signals.output_in_place``).
"""

from __future__ import annotations

import importlib
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
