"""``leviathan demo``'s lines name the demo's own flags (issue 30 round 15, A126, A128, A129): a diverged model was
told to lower optim.lr or lengthen schedule.warmup_steps (train's settings) and to run the same command again; a
--seq-len past --batch-tokens was "--steps must be >= 1 and --batch-tokens at least --seq-len" (two rules, not which
failed); --batch-tokens 100 at --seq-len 32 was train's "use batch_tokens=96 ...", naming micro_batch_size."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error, run_overrides  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize("flags, words", [
    (["--lr", "1e9"], "error: --lr 1e+09 is outside the range a run can use: give --lr in [1e-08, 10]"),  # A126
    (["--seq-len", "100000", "--batch-tokens", "256", "--steps", "2"],
     "error: --batch-tokens 256 is less than --seq-len 100000: a step trains whole sequences"),  # A128
    (["--batch-tokens", "100", "--seq-len", "32"],
     "error: --batch-tokens 100 is not a multiple of 96 (3 sequences of --seq-len 32 per micro batch): give "
     "--batch-tokens 96 or 192"),  # A129
    # round 17 (E339): checked only once the corpus was prepared (a 32,768-id BPE trained first)
    (["--preset", "nope"], "error: --preset: unknown preset 'nope'"),
    # round 21 (N313): the committed verdict and "the cached demo corpus ... is out of date; rebuilding it" came first
    (["--vocab", "10"], "leviathan demo: error: argument --vocab: BPE vocabulary size 10 is too small"),
])
def test_demo_refuses_its_flags_in_its_own_words(tmp_path, flags, words):
    line = cli_error(["demo", "--run-dir", tmp_path / "dm", "--data-dir", tmp_path / "dd", *flags, "--quiet"])
    assert line == words or line.startswith(words), line
    assert not (tmp_path / "dm").exists() and not (tmp_path / "dd").exists()


def test_a_diverged_demo_model_is_told_to_lower_the_demos_lr(data, tmp_path):
    """A126: the divergence line inside the demo names --lr, not optim.lr / schedule.warmup_steps."""
    from leviathan.commands.demo import _lower_lr
    from leviathan.run_config import load_run_config
    from leviathan.train.loop import _divergence_message, lr_fix

    cfg = load_run_config(None, run_overrides(data, **{"optim.lr": 3.0}))
    with lr_fix(_lower_lr):
        line = _divergence_message(2, math.nan, 0.0, 3.0, cfg, tmp_path)
    assert "Try a lower learning rate, for example --lr 1 (now 3), in the `leviathan demo` command" in line, line
    assert "optim.lr" not in line and "warmup_steps" not in line


def test_a_vocab_too_small_is_refused_before_the_demo_says_anything(tmp_path, monkeypatch):
    """N313 (round 21): ``demo --vocab 10`` printed the committed verdict and "the cached demo corpus ... is out of
    date; rebuilding it" for a cache that did not exist, then refused 10; --vocab is checked when it is parsed."""
    from reliability_support import cli

    monkeypatch.setenv("LEVIATHAN_CACHE", str(tmp_path / "cache"))
    done = cli(["demo", "--run-dir", tmp_path / "dm", "--vocab", "10", "--quiet"])
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert "argument --vocab: BPE vocabulary size 10 is too small" in done.stderr and "cached" not in done.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / "dm").exists()
