"""Values the Python API took without a word (issue 30 round 18, the silent ids of tester G's log).

Each was accepted and gave a result that looked like an answer: a NaN loss, full logits for ``return_logits='no'``,
hundreds of tokenizer threads, ``[]`` for a file that is not a metrics file, bpb None for an infinite byte count, a
``rope_theta`` keyword dropped. Each is now refused (or named) where it is taken, naming the argument and the fix.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_labels_all_ignored_and_a_text_given_return_logits_are_refused(finished_run):
    """G262: ``m(x, labels=torch.full_like(x, -100))`` returned loss tensor(nan), torch's mean over no target; G267:
    ``m(x, labels=x, return_logits='no')`` read 'no' as true and returned the full logits."""
    from leviathan.checkpoint.read import load_model

    model = load_model(finished_run)[0]
    x = torch.tensor([[1, 2, 3, 4]])
    for return_logits in (True, False):
        with pytest.raises(ValueError, match="every label is -100 .ignored., so the loss would be a mean over no "
                                             "target"):
            model(x, labels=torch.full_like(x, -100), return_logits=return_logits)
    for value in ("no", 0, None):
        with pytest.raises(TypeError, match=f"CausalLM.forward: return_logits must be True or False, got {value!r}"):
            model(x, labels=x, return_logits=value)
    partly = torch.tensor([[-100, 2, 3, -100]])
    assert torch.isfinite(model(x, labels=partly)[1]) and model(x, labels=x, return_logits=np.bool_(False))[0] is None


def test_tokenizer_threads_and_prepares_workers_are_held_to_the_threads_rule(data, tmp_path):
    """G271: ``encode_batch(texts, num_threads=10**6)`` started 158 threads on 2 cores (slower than 2), where every
    --threads of the CLI is capped at 4 x the usable cores; ``prepare(num_workers=10**6)`` passed it on."""
    from leviathan.value_rules import usable_cores
    from leviathan.data.prepare import prepare
    from leviathan.data.tokenizer import load_tokenizer

    tok = load_tokenizer(data)
    cap = 4 * usable_cores()
    with pytest.raises(ValueError, match=f"num_threads must be at most {cap} .4 x the"):
        tok.encode_batch(["a b c"], num_threads=10**6)
    assert tok.encode_batch(["a b c"], num_threads=cap) == tok.encode_batch(["a b c"], num_threads=0)
    for workers in (10**6, 0, 1.5):
        with pytest.raises(UserError, match="prepare: num_workers: "):
            prepare(str(data.parent / "corpus"), tmp_path / "d", "bpe:300", num_workers=workers, progress=False,
                    log=lambda s: None)
    assert not (tmp_path / "d").exists()


def test_read_metrics_of_a_file_that_is_not_one_names_it(data, finished_run, tmp_path):
    """G303: ``read_metrics('data1/train.bin')`` (a token file) returned [] without a word, where read_results and
    ``analyze efficiency --model`` name what a file is."""
    from leviathan.io import read_metrics

    notes = tmp_path / "notes.txt"
    notes.write_text("hello\nworld\n")
    for path, what in ((data / "train.bin", "binary data"), (notes, "line 1 is not a whole JSON value")):
        with pytest.raises(UserError, match=f"is not a run's metrics.jsonl \\({what}"):
            read_metrics(path)
    assert read_metrics(finished_run) and read_metrics(finished_run / "metrics.jsonl") == read_metrics(finished_run)


def test_evaluate_refuses_a_byte_count_that_is_not_finite(finished_run, data):
    """G328: ``evaluate(m, toks, 32, 4, num_bytes=inf)`` gave bpb None without a word, as if no count were given
    (True and -5 were refused since round 17); NaN likewise. Unknown is None."""
    from leviathan.checkpoint.read import load_model
    from leviathan.data.loader import TokenDataset
    from leviathan.eval.perplexity import evaluate

    model = load_model(finished_run)[0]
    tokens = np.asarray(TokenDataset(data, "val").tokens[:200])
    for num_bytes in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"num_bytes must be the UTF-8 size in bytes .* \(a finite number >= 0\)"):
            evaluate(model, tokens, 32, 4, num_bytes=num_bytes)
    assert evaluate(model, tokens, 32, 4, num_bytes=None).bpb is None  # 0 is refused since round 25 (Y431)
    assert evaluate(model, tokens, 32, 4, num_bytes=600).bpb > 0


def test_plain_llama_config_refuses_a_keyword_of_the_backbone(finished_run):
    """G457: ``plain_llama_config(cfg, rope_theta=-1)`` was taken and dropped (rope_parameters kept 10000.0); G458:
    ``vocab_size=5`` was LlamaConfig's raw "got multiple values" TypeError."""
    from leviathan.checkpoint.read import load_model
    from leviathan.hf.export import plain_llama_config

    cfg = load_model(finished_run)[1].model
    for key, value in (("rope_theta", -1), ("vocab_size", 5), ("rms_norm_eps", float("nan"))):
        with pytest.raises(TypeError, match=f"plain_llama_config: {key} is the model's own .*change the ModelConfig"):
            plain_llama_config(cfg, **{key: value})
    assert plain_llama_config(cfg, use_cache=False).rope_parameters["rope_theta"] == float(cfg.rope_theta)
