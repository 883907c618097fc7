"""A step that cannot end soon (issue 30 round 22, Q57): ``train batch_tokens=1e9`` on 14,278 training tokens was
accepted, one step was ~3.9M micro batches, and a SIGTERM (then a second one) waited for that step for 10+ minutes.

Two fixes, each tested here with real files and signals: a global batch of more than ``MAX_PASSES_PER_STEP`` passes over
the training split is refused before anything is written, and a stop sent again ``SAME_STOP_S`` after the first stops the step at once (a repeat within
that time is the same stop arriving twice, from the process group and from a parent passing it on).
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from reliability_support import cli_error, run_overrides

from leviathan import stop_signals
from leviathan.errors import Stopped
from leviathan.train.loop import MAX_PASSES_PER_STEP, SAME_STOP_S, _StopFlag


def test_a_batch_of_many_passes_over_the_training_split_is_refused_before_anything_is_written(data, tmp_path):
    train_tokens = json.loads((data / "meta.json").read_text())["splits"]["train"]["tokens"]
    run = tmp_path / "run"
    line = cli_error(["train", *run_overrides(data, batch_tokens=10**9, max_steps=2), "--run-dir", run])
    assert line.startswith(f"error: batch_tokens=1,000,000,000 is {10**9 / train_tokens:,.1f} times the "
                           f"{train_tokens:,} tokens of the training split in {str(data)!r}"), line
    assert f"(at most {MAX_PASSES_PER_STEP} are taken); lower batch_tokens (e.g. batch_tokens=" in line
    assert not run.exists()


def test_a_batch_of_a_few_passes_is_still_taken(data):
    """The rule's edge: a smoke test's few passes per step (the default batch on a small corpus) are allowed, and so
    is exactly MAX_PASSES_PER_STEP passes; one micro batch more is refused."""
    from leviathan.data.meta import read_meta
    from leviathan.errors import UserError
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import _check_batch_fits

    meta = read_meta(data)
    unit = 32 * 4  # tiny_overrides: seq_len 32, micro_batch_size 4
    edge = (MAX_PASSES_PER_STEP * meta.splits["train"].tokens // unit) * unit
    for fits in (65_536, edge):
        _check_batch_fits(load_run_config(None, run_overrides(data, batch_tokens=fits)), meta)
    with pytest.raises(UserError, match="times the"):
        _check_batch_fits(load_run_config(None, run_overrides(data, batch_tokens=edge + unit)), meta)


def test_a_batch_refusal_offers_a_batch_the_rule_takes(data, tmp_path, capsys):
    """Round 32, AB17: on 2 training tokens, "lower batch_tokens (e.g. batch_tokens=1024, one pass)" offered the value
    given. A split shorter than one window is the loader's line (it names seq_len), and a split shorter than one
    micro batch is told to lower micro_batch_size with batch_tokens."""
    from types import SimpleNamespace

    from leviathan.cli import main
    from leviathan.errors import UserError
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import _check_batch_fits

    (tmp_path / "one.txt").write_text("x")
    (tmp_path / "val.txt").write_text("some validation words " * 40)
    small = tmp_path / "small"
    assert main(["prepare", str(tmp_path / "one.txt"), "--out", str(small), "--tokenizer", str(data / "tokenizer.json"),
                 "--val-source", str(tmp_path / "val.txt")]) == 0
    capsys.readouterr()
    run = tmp_path / "run"
    assert main(["train", *map(str, run_overrides(small, batch_tokens=1024, micro_batch_size=8)), "--run-dir",
                 str(run)]) == 2
    err = capsys.readouterr().err
    assert "fewer than seq_len + 1" in err and "batch_tokens=1024, one pass" not in err, err
    assert not run.exists()
    cfg = load_run_config(None, run_overrides(data, batch_tokens=32 * 400, micro_batch_size=400))  # seq_len 32
    with pytest.raises(UserError, match=r"lower micro_batch_size with it: one micro batch \(micro_batch_size=400 x "
                                        r"data.seq_len=32\) is 12,800 tokens already \(e.g. micro_batch_size=315 "
                                        r"batch_tokens=10080\)"):
        _check_batch_fits(cfg, SimpleNamespace(splits={"train": SimpleNamespace(tokens=101)}))


@pytest.fixture
def flag():
    """train's stop flag with its handlers installed for SIGTERM (and the others), removed after."""
    with _StopFlag() as f:
        f.training = True
        yield f


def test_a_second_sigterm_soon_after_the_first_is_the_same_stop(flag):
    os.kill(os.getpid(), signal.SIGTERM)
    assert flag.signum == signal.SIGTERM
    os.kill(os.getpid(), signal.SIGTERM)  # the process group's and a parent's copy of one stop: no exception
    assert flag.signum == signal.SIGTERM


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_sent_again_later_stops_the_step_at_once(flag, second):
    os.kill(os.getpid(), signal.SIGTERM)
    flag._first_at -= SAME_STOP_S + 1  # the first stop came SAME_STOP_S + 1 seconds ago
    with pytest.raises(Stopped) as stopped:
        os.kill(os.getpid(), second)
        for _ in range(1000):  # the handler runs at one of these bytecodes
            pass
    assert stopped.value.signum == second


def test_a_worker_whose_caller_says_its_stops_takes_every_repeat_as_the_same_stop(flag, monkeypatch):
    """The sweep holds further stops while its workers save: a worker's second SIGTERM must not skip the save."""
    monkeypatch.setattr(stop_signals, "caller_says_stops", True)
    os.kill(os.getpid(), signal.SIGTERM)
    flag._first_at -= SAME_STOP_S + 1
    os.kill(os.getpid(), signal.SIGTERM)
    assert flag.signum == signal.SIGTERM


def test_the_cli_says_a_second_stop_and_exits_with_its_status():
    """``Stopped`` raised inside a verb (train's second stop) is the CLI's stop: one line naming it, 128 + signum."""
    from leviathan.cli import _stoppable

    def verb():
        raise Stopped(signal.SIGTERM)

    assert _stoppable("train", verb) == 128 + signal.SIGTERM
