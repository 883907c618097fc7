"""Round 14 (B129-B133, B236, B239, B317): a downstream task's local data file that is not what its task expects
ended in a traceback inside lm-eval's libraries, or was scored without a word. Each file is now read and checked
before lm-eval sees it (``leviathan.eval.tasks.check``): one line naming the file, the line and the field."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from leviathan.errors import UserError
from leviathan.eval.tasks import prepare_tasks

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

ARC = {"id": "q1", "question": {"stem": "Which is a metal?", "choices": [{"text": "iron", "label": "A"},
                                                                          {"text": "wood", "label": "B"}]},
       "answerKey": "A"}
HELLASWAG = {"activity_label": "Cooking", "ctx": "A man cuts onions. He", "label": 1,
             "endings": ["flies away.", "puts them in a pan."]}
WINOGRANDE = {"context_options": ["Ann helped Bea because Ann", "Ann helped Bea because Bea"],
              "continuation": "was kind.", "gold": 0}
PIQA = {"goal": "To open a jar", "sol1": "twist the lid", "sol2": "paint the lid"}


def _root(tmp_path: Path, key: str, rows, labels: str | None = None) -> tuple[Path, dict]:
    """A data root holding one task file of ``rows`` (dicts, or raw lines as str), and the ``files`` override."""
    folder = tmp_path / "tasks"
    folder.mkdir(exist_ok=True)
    path = folder / f"{key}.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    files = [str(path)]
    if labels is not None:
        (folder / "labels.lst").write_text(labels)
        files.append(str(folder / "labels.lst"))
    return folder, {key: files}


@pytest.mark.parametrize("key, rows, labels, words", [
    ("arc_easy", [ARC, {**ARC, "answerKey": "Z"}], None, "line 2: answerKey 'Z' is not one of its choices' labels (A, B)"),
    ("arc_challenge", [{**ARC, "question": {"stem": "x"}}], None, "line 1: field 'question.choices' is not a list"),
    ("hellaswag", [{**HELLASWAG, "label": 7}], None, "line 1: field 'label' is 7, but there are 2 choices"),
    ("winogrande", [{**WINOGRANDE, "gold": "x"}], None, "field 'gold' is 'x', not the index of a choice"),
    ("lambada_openai", ["\x00\x9f{not json"], None, "line 1 is not a JSON object"),
    ("lambada_openai", [], None, "holds no examples"),
    ("piqa", [PIQA, PIQA], "0\nyes\n", "line 2 is 'yes', not a label 0 or 1"),
    ("piqa", [PIQA, PIQA], "0\n7\n", "line 2 is '7', not a label 0 or 1"),
    ("piqa", [PIQA, PIQA], "0\n", "has 1 labels but its valid.jsonl has 2 examples"),
    ("piqa", [ARC], "0\n", "line 1: field 'goal' is not text"),
], ids=["arc-answer-key", "arc-no-choices", "hellaswag-label", "winogrande-gold", "lambada-bytes", "empty",
        "piqa-yes", "piqa-7", "piqa-count", "arc-as-piqa"])
def test_a_task_file_that_is_not_the_tasks_is_one_error(tmp_path, key, rows, labels, words):
    root, files = _root(tmp_path, key, rows, labels)
    with pytest.raises(UserError) as err:
        prepare_tasks(root, tmp_path / "out", [key], files=files)
    assert f"task {key}: " in str(err.value) and words in str(err.value), str(err.value)
    assert "MANIFEST.md" in str(err.value) or "--data-root" in str(err.value)


def test_a_task_file_that_is_a_pipe_or_a_folder_is_named_as_such(tmp_path):
    root = tmp_path / "tasks"
    root.mkdir()
    os.mkfifo(root / "pipe.jsonl")
    (root / "dir.jsonl").mkdir()
    for name, words in (("pipe.jsonl", "is a named pipe (FIFO)"), ("dir.jsonl", "is a folder, not a data file")):
        with pytest.raises(UserError, match=r"task arc_easy: .* " + words.replace("(", r"\(").replace(")", r"\)")):
            prepare_tasks(root, tmp_path / "out", ["arc_easy"], files={"arc_easy": [str(root / name)]})


def test_lm_eval_given_a_bad_piqa_labels_file_ends_in_one_line(finished_run, tmp_path):
    """The CLI, a real process: B130 ended in ``int('yes')``'s traceback."""
    root = tmp_path / "tasks"
    (root / "piqa").mkdir(parents=True)
    (root / "piqa" / "valid.jsonl").write_text(json.dumps(PIQA) + "\n")
    (root / "piqa" / "valid-labels.lst").write_text("yes\n")
    line = cli_error(["lm-eval", finished_run, "--tasks", "piqa", "--data-root", root, "--threads", "1"])
    assert "valid-labels.lst' line 1 is 'yes', not a label 0 or 1" in line, line


def test_a_task_file_with_a_byte_order_mark_names_the_mark(tmp_path):
    """Round 15 (B296): a piqa/valid.jsonl saved with a UTF-8 byte order mark was "line 1 is not a JSON object
    ('\\ufeff{"id": ...')": the mark, the only problem, went unnamed."""
    root, files = _root(tmp_path, "piqa", ["\ufeff" + json.dumps(PIQA)], "0\n")
    with pytest.raises(UserError) as err:
        prepare_tasks(root, tmp_path / "out", ["piqa"], files=files)
    assert "starts with a UTF-8 byte order mark (BOM), which is not part of JSON lines; save the file without it" \
        in str(err.value), str(err.value)


def test_lm_eval_batch_size_names_auto_among_its_values(tmp_path):
    """Round 15 (B215): ``lm-eval RUN --batch-size AUTO`` said "expected a positive integer, got 'AUTO'", not naming
    the accepted word auto."""
    from reliability_support import cli

    proc = cli(["lm-eval", tmp_path, "--tasks", "piqa", "--batch-size", "AUTO"])
    assert proc.returncode == 2 and "expected a positive integer or auto (in lower case), got 'AUTO'" in proc.stderr, \
        proc.stderr
