"""Training, evaluation, resume and export of a run with ``data.softmax=corpus`` (a restricted softmax)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from leviathan.data.loader import TokenDataset, corpus_ids
from leviathan.errors import UserError
from leviathan.eval.perplexity import evaluate
from leviathan.hf.export import to_hf, to_plain_llama
from leviathan import checkpoint as ckpt
from leviathan.run_config import load_run_config
from leviathan.train.loop import train

sys.path.insert(0, str(Path(__file__).parent))
from test_train import make_data, tiny_overrides  # noqa: E402

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_data(tmp_path_factory.mktemp("restricted-data"))


def test_corpus_ids_are_the_ids_of_every_split(data):
    ids = corpus_ids(data)
    seen = np.union1d(np.unique(TokenDataset(data, "train").tokens), np.unique(TokenDataset(data, "val").tokens))
    np.testing.assert_array_equal(ids, seen)
    assert 0 < len(ids) < TokenDataset(data, "train").vocab_size  # the byte-level ids never occur


def test_a_corpus_softmax_run_trains_evaluates_resumes_and_refuses_export(data, tmp_path, capsys):
    n = 3
    over = tiny_overrides(data, max_steps=2 * n, checkpoint_interval=n, eval_interval=n, keep_last="null",
                          **{"model.embedding": "leviathan", "data.softmax": "corpus"})
    cfg = load_run_config(None, over)
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    train(cfg, straight)
    assert "softmax over the" in capsys.readouterr().err
    model, loaded_cfg = ckpt.load_model(straight)
    assert loaded_cfg.data.softmax == "corpus" and model.restricted
    np.testing.assert_array_equal(model.output_ids.numpy(), corpus_ids(data))
    val = TokenDataset(data, "val").tokens[:400]
    restricted = evaluate(model, val, 32, 4).loss
    full = evaluate(model.restrict_output_(None), val, 32, 4).loss
    assert restricted < full  # the same weights: removing ids from the softmax can only raise their targets' share
    # resume: the same config continues exactly; a full-softmax config is refused
    train(cfg, resumed, resume=str(straight / "checkpoints" / ckpt.step_name(n)), quiet=True)
    a = ckpt.load_weights(straight / "checkpoints" / ckpt.step_name(2 * n) / "model.safetensors")
    b = ckpt.load_weights(resumed / "checkpoints" / ckpt.step_name(2 * n) / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    full_cfg = load_run_config(None, [o for o in over if not o.startswith("data.softmax")])
    with pytest.raises(UserError, match="data.softmax=corpus"):
        train(full_cfg, tmp_path / "mixed", resume=str(straight / "checkpoints" / ckpt.step_name(n)), quiet=True)
    # transformers cannot express the restriction: export says so instead of writing a wrong model
    model, _ = ckpt.load_model(straight)
    for export in (to_hf, to_plain_llama):
        with pytest.raises(UserError, match="data.softmax=full"):
            export(model, tmp_path / f"out-{export.__name__}")
        assert not (tmp_path / f"out-{export.__name__}").exists()


def test_a_corpus_softmax_run_is_scored_out_of_domain_on_the_targets_inside_its_set(data, tmp_path):
    """The sweep's evaluation of text whose ids are not all in the softmax set: the loss over the targets
    inside it, the count and share left out, no bits per byte; buckets count only the scored targets."""
    from leviathan.eval.stream import EvalStream
    from leviathan.eval.frequency import make_buckets
    from leviathan.eval.score import evaluate_checkpoint

    over = tiny_overrides(data, max_steps=2, **{"model.embedding": "leviathan", "data.softmax": "corpus"})
    train(load_run_config(None, over), tmp_path / "run", quiet=True)
    ids = corpus_ids(data)
    vocab = TokenDataset(data, "train").vocab_size
    outside_ids = np.setdiff1d(np.arange(vocab), ids)[:20]
    rng = np.random.default_rng(0)
    tokens = np.where(rng.random(300) < 0.25, rng.choice(outside_ids, 300), rng.choice(ids, 300))
    streams = {"val": EvalStream.from_split(data, "val", 300), "elsewhere": EvalStream(tokens, 1200.0, "test")}
    freq = np.bincount(TokenDataset(data, "train").tokens, minlength=vocab)
    evals, buckets = evaluate_checkpoint(tmp_path / "run", streams, seq_len=32, batch_size=4,
                                         buckets=make_buckets(freq, 3, "mass"), freq=freq)
    left_out = int(np.isin(tokens[1:], outside_ids).sum())
    assert not evals["val"].restricted and evals["val"].bpb > 0  # in-domain: every target inside
    ev = evals["elsewhere"]
    assert ev.targets_outside == left_out > 0 and ev.tokens == 299 - left_out
    assert ev.share_outside == pytest.approx(left_out / 299) and ev.bpb is None and np.isfinite(ev.loss)
    assert sum(buckets["elsewhere"].count) == ev.tokens
