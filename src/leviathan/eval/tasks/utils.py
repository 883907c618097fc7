"""Document processing for the leviathan lm-eval tasks (local files; see ``leviathan.eval.harness``).

Prompts follow lm-evaluation-harness's own task definitions (v0.4) for the same benchmarks, mapped
onto the field layouts of the local files the task specs name (``leviathan.eval.tasks.TASKS``: paths
under the data folder, ``--data-root`` / ``$LEVIATHAN_DATA``).
"""

import re


def _preprocess(text):
    # lm-eval's HellaSwag cleanup (WikiHow bracket artefacts); the local file already had most applied
    text = text.strip()
    text = text.replace(" [title]", ". ")
    text = re.sub("\\[.*?\\]", "", text)
    text = text.replace("  ", " ")
    return text


def hellaswag_process_docs(dataset):
    """Local HellaSwag rows {activity_label, ctx, label, endings}: ctx is ctx_a + " " + ctx_b already
    (its ctx_b part cannot be capitalised as lm-eval does: the split point is not in the file)."""

    def _process(doc):
        return {"query": _preprocess(doc["activity_label"] + ": " + doc["ctx"]),
                "choices": [_preprocess(e) for e in doc["endings"]],
                "gold": int(doc["label"])}

    return dataset.map(_process)


def arc_text(doc):
    return "Question: " + doc["question"]["stem"] + "\nAnswer:"


def arc_choices(doc):
    return [c["text"] for c in doc["question"]["choices"]]


def arc_target(doc):
    # answerKey is a label (A-E or 1-5); always map it through the label list
    return [c["label"] for c in doc["question"]["choices"]].index(doc["answerKey"])


def winogrande_text(doc):
    # "partial evaluation": the two contexts are the choices, the shared continuation the target
    return int(doc["gold"])


def winogrande_choices(doc):
    return list(doc["context_options"])


def winogrande_target(doc):
    return doc["continuation"].strip()
