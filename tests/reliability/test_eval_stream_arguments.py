"""The scoring API's arguments (issue 30 round 22): ``token_losses``' ``even`` and ``tokens``, ``EvalStream``'s
``max_tokens``, and ``evaluate_checkpoint``'s streams of another tokenizer's data folder.

- S76: ``token_losses(..., even='yes')`` took a text as the flag ('no' would read as True too).
- S77: 2-D tokens were named as ``input_ids`` of shape (1, 9, 20), an argument and a shape the caller never passed.
- S389, S390: ``EvalStream.from_split(D, 'val', max_tokens=0)`` returned the whole split, ``max_tokens=True`` 2 tokens.
- S397: ``evaluate_checkpoint(run, {'val': stream of another BPE's data folder})`` scored it without a word, which
  ``leviathan eval RUN --data D`` refuses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.eval.stream import EvalStream

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import make_data  # noqa: E402

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def model(finished_run):
    from leviathan.checkpoint.read import load_model

    return load_model(finished_run)[0]


def _tokens(data) -> np.ndarray:
    return np.fromfile(data / "val.bin", dtype=np.uint16)[:200]


@pytest.mark.parametrize("even", ["yes", "no", 1, None])
def test_token_losses_takes_only_a_bool_as_even(model, data, even):
    from leviathan.eval.perplexity import token_losses

    with pytest.raises(TypeError, match=f"token_losses: even must be True or False, got {even!r}"):
        token_losses(model, _tokens(data), 32, 2, even=even)
    assert len(token_losses(model, _tokens(data), 32, 2, even=True)) == 199


def test_token_losses_names_tokens_and_the_shape_it_takes(model, data):
    from leviathan.eval.perplexity import token_losses

    with pytest.raises(ValueError, match=r"tokens must be a 1-D stream of token ids .* got an array of shape "
                                         r"\(10, 20\); pass one stream \(tokens.ravel\(\)"):
        token_losses(model, _tokens(data).reshape(10, 20), 32, 2)


@pytest.mark.parametrize("cap", [0, -5, True, 2.5, "8"])
def test_a_cap_of_no_tokens_or_a_bool_is_refused(data, cap):
    with pytest.raises(UserError, match=r"EvalStream: max_tokens: .*got .*; pass the number of predictions"):
        EvalStream.from_split(data, "val", max_tokens=cap)
    with pytest.raises(UserError, match="max_tokens"):
        EvalStream.from_split(data, "val").capped(cap)


def test_no_cap_is_none_and_a_cap_keeps_its_predictions(data):
    whole = EvalStream.from_split(data, "val", max_tokens=None)
    assert len(whole.tokens) == len(np.fromfile(data / "val.bin", dtype=np.uint16))
    assert len(EvalStream.from_split(data, "val", max_tokens=np.int64(7)).tokens) == 8


def test_evaluate_checkpoint_refuses_a_stream_of_another_tokenizers_data(finished_run, data, tmp_path):
    from leviathan.eval.score import evaluate_checkpoint

    other = make_data(tmp_path / "other", vocab=280)  # another BPE: the same ids mean other strings
    with pytest.raises(UserError, match=r"cannot evaluate .* on eval set 'val': the checkpoint .* was trained with "
                                        r"tokenizer .* but .* was prepared with a different one"):
        evaluate_checkpoint(finished_run, {"val": EvalStream.from_split(other, "val", 64)}, seq_len=32)
    evals, _ = evaluate_checkpoint(finished_run, {"val": EvalStream.from_split(data, "val", 64)}, seq_len=32)
    assert evals["val"].tokens == 64
    hand_made = EvalStream(np.arange(65) % 280, None, "mine")  # no folder: the caller's choice
    assert evaluate_checkpoint(finished_run, {"x": hand_made}, seq_len=32)[0]["x"].tokens == 64
    with pytest.raises(UserError, match=r"streams\['val'\] must be an EvalStream"):
        evaluate_checkpoint(finished_run, {"val": np.arange(65)}, seq_len=32)


@pytest.mark.parametrize("seq_len", [0, True, 2.5, -1])
def test_a_window_of_no_length_is_refused_not_read_as_the_runs(finished_run, data, seq_len):
    """The public functions' walk (round 22): ``evaluate_checkpoint(..., seq_len=0)`` scored with the run's 32 (0
    read as unset), True as 1, 2.5 as 2; ``window_batches(10, 0, 2)`` was a ZeroDivisionError."""
    from leviathan.eval.perplexity import window_batches
    from leviathan.eval.score import evaluate_checkpoint

    with pytest.raises(UserError, match=f"seq_len: .*got {seq_len}; pass the window length in tokens"):
        evaluate_checkpoint(finished_run, {"val": EvalStream.from_split(data, "val", 64)}, seq_len=seq_len)
    with pytest.raises(ValueError, match=f"window_batches: seq_len .*got {seq_len}"):
        window_batches(10, seq_len, 2)


def test_evaluate_checkpoint_names_bucket_arguments_of_the_wrong_kind(finished_run, data):
    from leviathan.eval.score import evaluate_checkpoint

    streams = {"val": EvalStream.from_split(data, "val", 64)}
    with pytest.raises(UserError, match="buckets must be a Buckets"):  # was AttributeError 'bucket_of'
        evaluate_checkpoint(finished_run, streams, seq_len=32, buckets=5)
    with pytest.raises(UserError, match="bucket_sets must be a list of eval set names"):  # 'val' read as letters
        evaluate_checkpoint(finished_run, streams, seq_len=32, bucket_sets="val")
