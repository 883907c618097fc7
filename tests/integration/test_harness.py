"""lm-evaluation-harness bridge: the harness scores OUR weights, offline, on local task files.

A tiny leviathan model is exported and evaluated on one fixture file per task (written here); every
loglikelihood lm-eval reports must equal the one we compute with our own ``CausalLM`` on the same
token ids. Then our weights are perturbed, re-exported and re-evaluated: the harness numbers move
exactly as our recomputation says. A harness that silently loaded some other model (a hub model, a
stale export) would fail both checks.
"""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("lm_eval")
pytest.importorskip("accelerate", reason="lm-eval's hf model needs accelerate (pip install 'lm-eval[hf]')")

from leviathan.data.tokenizer import train_bpe  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.eval import harness, lm_export  # noqa: E402
from leviathan.eval import tasks as lm_tasks  # noqa: E402
from leviathan.model.config import ModelConfig  # noqa: E402
from leviathan.model.llama import CausalLM  # noqa: E402

# one intra-op thread: on the shared 2-core machine OpenMP stalls cost far more than they gain
pytestmark = pytest.mark.usefixtures("single_thread")

SENTENCES = [
    "The cat sat on the mat and looked at the door.",
    "A man is sitting on a roof. He starts pulling up roofing.",
    "Which gas do plants take in from the air? Carbon dioxide.",
    "Sarah was a much better surgeon than Maria so Maria always got the harder cases.",
    "To open a jar, twist the lid counterclockwise with a firm grip.",
    "The sun rises in the east and sets in the west every day.",
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    d = tmp_path_factory.mktemp("tasks")
    files = {
        "lambada_openai": [write_jsonl(d / "lambada.jsonl", [{"text": s.rstrip(".")} for s in SENTENCES[:4]])],
        "arc_easy": [write_jsonl(d / "arc.jsonl", [
            {"id": "q1", "question": {"stem": "Which gas do plants take in?", "choices": [
                {"text": "carbon dioxide", "label": "A"}, {"text": "helium", "label": "B"},
                {"text": "neon", "label": "C"}]}, "answerKey": "A"},
            {"id": "q2", "question": {"stem": "Where does the sun rise?", "choices": [
                {"text": "west", "label": "1"}, {"text": "east", "label": "2"}]}, "answerKey": "2"}])],
        "winogrande": [write_jsonl(d / "wino.jsonl", [
            {"context_options": ["Sarah was a better surgeon than Maria so Sarah",
                                 "Sarah was a better surgeon than Maria so Maria"],
             "continuation": "always got the harder cases.", "gold": 1}])],
        "hellaswag": [write_jsonl(d / "hs.jsonl", [
            {"idx": 0, "activity_label": "Roof shingle removal", "ctx": "A man is sitting on a roof. he",
             "label": 1, "endings": ["is eating soup.", "starts pulling up roofing."]}])],
        "piqa": [write_jsonl(d / "piqa.jsonl", [{"id": "p1", "goal": "Open a jar.", "sol1": "Twist the lid.",
                                                 "sol2": "Paint the lid."}]),
                 str((d / "piqa-labels.lst").write_text("0\n") and d / "piqa-labels.lst")],
    }
    tok = train_bpe(SENTENCES * 4, vocab_size=320)
    cfg = ModelConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      max_position_embeddings=128, embedding="leviathan", generator_seed_dim=8, generator_modes=2,
                      generator_knots=8, generator_rank=4)
    torch.manual_seed(0)
    model = CausalLM(cfg).eval()
    return files, tok, model


def encode_pair(tok, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """lm-eval's HFLM recipe: trailing context spaces move to the continuation, encode the whole,
    split; an empty context becomes end-of-text."""
    if context:
        n = len(context) - len(context.rstrip())
        if n:
            continuation, context = context[-n:] + continuation, context[:-n]
        whole = tok.encode(context + continuation)
        ctx = tok.encode(context)
        return ctx, whole[len(ctx):]
    return [tok.eot_id], tok.encode(continuation)


def our_loglikelihood(model, tok, context: str, continuation: str) -> float:
    """The request's log-likelihood with our own model, on the window of the model's positions that
    ends at the continuation's last token (the whole request when it fits)."""
    ctx, cont = encode_pair(tok, context, continuation)
    n = model.config.max_position_embeddings
    window = (ctx + cont)[-(n + 1):]
    scored = min(len(cont), n)
    with torch.no_grad():
        logits, _ = model(torch.tensor([window[:-1]]))
    logp = torch.log_softmax(logits[0].double(), -1)[-scored:]
    return float(logp.gather(1, torch.tensor(window[-scored:])[:, None]).sum())


def harness_lls(out) -> list[tuple[str, str, str, float]]:
    rows = []
    for task, samples in out["results"]["samples"].items():
        for s in samples:
            for args, resp in zip(s["arguments"], s["resps"]):
                rows.append((task, args[0], args[1], float(resp[0][0])))
    return rows


def evaluate_on(model, tok, keys, files):
    """``harness.evaluate_model`` with each task's data files pointed at the fixtures (absolute paths)."""
    with pytest.MonkeyPatch.context() as mp:
        for key, paths in files.items():
            mp.setitem(lm_tasks.TASKS, key, dataclasses.replace(lm_tasks.TASKS[key], files=tuple(map(str, paths))))
        return harness.evaluate_model(model, tok, keys, data=Path(str(paths[0])).parent, log_samples=True,
                                      batch_size=4)


def run(fixtures, model):
    files, tok, _ = fixtures
    return evaluate_on(model, tok, list(files), files)


def test_harness_scores_are_our_loglikelihoods_and_move_with_our_weights(fixtures):
    files, tok, model = fixtures
    out = run(fixtures, model)
    assert out["verify"]["max_abs_logit_diff"] < 1e-4
    rows = harness_lls(out)
    assert {r[0] for r in rows} == {f"lev_{k}" for k in files}
    assert len(rows) == 4 + 5 + 2 + 2 + 2  # lambada 4, arc 3+2 choices, wino 2, hellaswag 2, piqa 2
    before = []
    for task, ctx, cont, ll in rows:
        mine = our_loglikelihood(model, tok, ctx, cont)
        assert ll == pytest.approx(mine, abs=2e-4), (task, ctx, cont)
        before.append(mine)
    # the summary's LAMBADA perplexity is exp(-mean ll) of exactly these numbers
    lam = [ll for task, _, _, ll in rows if task == "lev_lambada_openai"]
    assert out["tasks"]["lambada_openai"]["perplexity"] == pytest.approx(math.exp(-np.mean(lam)), rel=1e-4)
    assert out["tasks"]["arc_easy"]["num_samples"] == 2

    # perturb OUR weights (the generator's output maps and the head), re-export, re-evaluate
    perturbed = CausalLM(model.config)
    perturbed.load_state_dict(model.state_dict())
    with torch.no_grad():
        g = torch.Generator().manual_seed(1)
        for name, p in perturbed.named_parameters():
            if name.startswith("model.embed_tokens.") or name == "lm_head.weight":
                p.add_(0.5 * p.std() * torch.randn(p.shape, generator=g))
    perturbed.eval()
    out2 = run(fixtures, perturbed)
    rows2 = harness_lls(out2)
    moved = 0
    for (task, ctx, cont, ll), old in zip(rows2, before):
        mine = our_loglikelihood(perturbed, tok, ctx, cont)
        assert ll == pytest.approx(mine, abs=2e-4), (task, ctx, cont)
        moved += abs(mine - old) > 1e-3
    assert moved == len(rows2)


def test_export_guard_refuses_a_model_that_is_not_ours(fixtures, tmp_path):
    files, tok, model = fixtures
    lm_export.export_for_harness(model, tok, tmp_path / "hf")
    torch.manual_seed(123)  # conftest seeds every test with 0, as the fixture did
    other = CausalLM(model.config).eval()  # different random weights
    with pytest.raises(UserError, match="logits differ"):
        lm_export.verify_export(other, tok, tmp_path / "hf")
    cfg = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert cfg["tokenizer_class"] == "PreTrainedTokenizerFast" and cfg["bos_token"] is None


def test_task_preparation_and_names(tmp_path, monkeypatch):
    assert lm_tasks.resolve_tasks("paper") == list(lm_tasks.PAPER_TASKS)
    assert lm_tasks.resolve_tasks("lev_piqa,arc_easy") == ["piqa", "arc_easy"]
    with pytest.raises(UserError, match="task 'piqa' is listed twice"):  # was taken once without a word (round 26, P64)
        lm_tasks.resolve_tasks("lev_piqa,arc_easy,piqa")
    with pytest.raises(UserError, match="an empty item in --tasks 'piqa,'"):  # round 12 (T132)
        lm_tasks.resolve_tasks("piqa,")
    with pytest.raises(UserError, match="unknown task"):
        lm_tasks.resolve_tasks("mmlu")
    with pytest.raises(UserError, match="missing data file"):
        lm_tasks.prepare_tasks(tmp_path, tmp_path / "out", ["lambada_openai"])
    (tmp_path / "piqa").mkdir()
    (tmp_path / "piqa" / "valid.jsonl").write_text(json.dumps({"goal": "g", "sol1": "a", "sol2": "b"}) + "\n")
    (tmp_path / "piqa" / "valid-labels.lst").write_text("1\n")
    names = lm_tasks.prepare_tasks(tmp_path, tmp_path / "out", ["piqa"])
    assert names == {"piqa": "lev_piqa"}
    text = (tmp_path / "out" / "piqa.yaml").read_text()
    assert "__DATA_FILES__" not in text and str(tmp_path / "out" / "piqa_valid_labeled.jsonl") in text
    merged = json.loads((tmp_path / "out" / "piqa_valid_labeled.jsonl").read_text())
    assert merged["label"] == 1
    monkeypatch.delenv("LEVIATHAN_DATA", raising=False)
    with pytest.raises(UserError, match="LEVIATHAN_DATA"):
        lm_tasks.task_data_root(None)
    monkeypatch.setenv("LEVIATHAN_DATA", str(tmp_path))
    assert lm_tasks.task_data_root(None) == tmp_path.resolve()


LONG = ("the cat sat on the mat and looked at the door, then the sun rose in the east and a man on a "
        "roof started pulling up roofing with a firm grip")


def test_requests_longer_than_the_context_are_truncated_and_counted_not_fatal(fixtures, tmp_path, monkeypatch):
    """A 16-position model: lm-eval's own HFLM aborts (``assert len(continuation_enc) <= self.max_length``)
    on a continuation longer than the window; ours cuts contexts from the left, scores an over-long
    continuation on its last 16 positions, and reports per task how many requests were cut."""
    files_all, tok, _ = fixtures
    cfg = ModelConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      max_position_embeddings=16, embedding="dense_tied")
    model = CausalLM(cfg).eval()
    files = {
        "arc_easy": [write_jsonl(tmp_path / "arc.jsonl", [
            {"id": "q1", "question": {"stem": "Which gas do plants take in?", "choices": [
                {"text": "carbon dioxide", "label": "A"}, {"text": LONG, "label": "B"}]}, "answerKey": "A"},
            {"id": "q2", "question": {"stem": "Where does the sun rise? " + LONG, "choices": [
                {"text": "west", "label": "A"}, {"text": "east", "label": "B"}]}, "answerKey": "B"}])],
        "lambada_openai": [write_jsonl(tmp_path / "lambada.jsonl", [{"text": "The cat sat on the mat"},
                                                                    {"text": LONG + " and the door"}])],
        "winogrande": files_all["winogrande"],
    }
    keys = list(files)

    # before: lm-eval's own hf model stops the whole run on the long ARC choice
    from lm_eval.models.huggingface import HFLM

    hf_dir = lm_export.export_for_harness(model, tok, tmp_path / "hf")
    names = lm_tasks.prepare_tasks(tmp_path, tmp_path / "tasks", keys, files)
    monkeypatch.setattr(harness, "fitting_hflm", lambda: HFLM)
    with pytest.raises(AssertionError) as crash:
        harness.run_harness(hf_dir, tmp_path / "tasks", [names[k] for k in keys], batch_size=4)
    assert "len(continuation_enc) <= self.max_length" in str(crash.traceback[-1].statement)
    monkeypatch.undo()

    # after: every request is scored, on exactly the window our own model sees
    out = evaluate_on(model, tok, keys, files)
    rows = harness_lls(out)
    assert len(rows) == 4 + 2 + 2
    expected = {f"lev_{k}": {"requests": 0, "context_truncated": 0, "continuation_truncated": 0} for k in keys}
    for task, ctx, cont, ll in rows:
        assert ll == pytest.approx(our_loglikelihood(model, tok, ctx, cont), abs=2e-4), (task, ctx, cont)
        c, k = encode_pair(tok, ctx, cont)
        e = expected[task]
        e["requests"] += 1
        if len(k) > 16:
            e["continuation_truncated"] += 1
        elif len(c) + len(k) > 17:
            e["context_truncated"] += 1
    assert out["results"]["truncation"] == {"max_length": 16, "tasks": expected}
    # the fixtures really exercise both cuts: ARC's long choice and its long question, LAMBADA's long text
    arc = expected["lev_arc_easy"]
    assert arc["requests"] == 4 and arc["continuation_truncated"] == 1 and arc["context_truncated"] >= 2
    assert expected["lev_lambada_openai"] == {"requests": 2, "context_truncated": 1, "continuation_truncated": 0}
    for key in keys:
        summary = out["tasks"][key]
        assert {k: summary[k] for k in expected[f"lev_{key}"]} == expected[f"lev_{key}"]
    text = harness.format_summary(out["tasks"])
    assert "cont cut" in text
    assert f"\n{'arc_easy':<16} {4:>9} {arc['context_truncated']:>9} {1:>9}" in text


def test_lm_eval_verb_sets_the_thread_count(monkeypatch):
    import torch

    import leviathan.eval.harness as harness
    from leviathan.cli import main

    seen = {}

    def fake_evaluate(source, tasks, **kw):
        seen["threads"] = torch.get_num_threads()
        return {"source": source, "tasks": {}, "verify": None, "limit": None}

    before = torch.get_num_threads()
    monkeypatch.setattr(harness, "evaluate", fake_evaluate)
    monkeypatch.setattr(harness, "format_summary", lambda tasks: "")
    try:
        assert main(["lm-eval", "some-run", "--threads", "1", "--json"]) == 0
    finally:
        torch.set_num_threads(before)
    assert seen["threads"] == 1


def test_more_few_shot_examples_than_a_task_holds_is_one_error(fixtures):
    """Round 11 (S107): ``lm-eval --num-fewshot 5000`` on a task with a small pool ended in lm_eval's traceback
    "ValueError: Sample larger than population". Now one error naming the task's pool and the fix."""
    from leviathan.errors import UserError

    files, tok, model = fixtures
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(lm_tasks.TASKS, "arc_easy", dataclasses.replace(lm_tasks.TASKS["arc_easy"],
                                                                     files=tuple(map(str, files["arc_easy"]))))
        with pytest.raises(UserError, match=r"--num-fewshot 5000 asks for more few-shot examples than a task holds "
                                            r"\(.*arc_easy.*: 2 examples\); pass a smaller --num-fewshot"):
            harness.evaluate_model(model, tok, ["arc_easy"], data=Path(str(files["arc_easy"][0])).parent,
                                   batch_size=4, num_fewshot=5000, verify=False)


def test_lm_evals_git_lookup_outside_a_repository_prints_nothing(capfd, monkeypatch, tmp_path):
    """Round 11 (R14): run from a folder outside a repository, lm-eval's ``git describe`` put ``fatal: not a git
    repository`` on the terminal beside a correct result. The harness runs it with git's stderr kept."""
    import lm_eval.evaluator as evaluator

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with harness._quiet_git_hash():
        assert evaluator.get_git_commit_hash() is None
    assert "fatal" not in capfd.readouterr().err
