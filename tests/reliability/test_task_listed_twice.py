"""A downstream task named twice in ``lm-eval --tasks`` is refused, as demo's ``--variants`` and the grid's lists
refuse a repeat (issue 30 round 26, P64).

``lm-eval r1 --tasks arc_easy,arc_easy`` was taken without a word (one arc_easy row, exit 0); so were
``piqa,lev_piqa`` (one task under two spellings) and ``paper,piqa`` (paper holds piqa). ``eval.tasks.resolve_tasks``,
which the command line and ``evaluate`` / ``evaluate_model`` share, now refuses each in one line, before any model is
exported or any task file read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

from leviathan.errors import UserError  # noqa: E402
from leviathan.eval.tasks import PAPER_TASKS, resolve_tasks  # noqa: E402


def test_lm_eval_refuses_a_task_listed_twice(tmp_path):
    (tmp_path / "r1").mkdir()
    (tmp_path / "data").mkdir()
    line = cli_error(["lm-eval", "r1", "--tasks", "arc_easy,arc_easy", "--limit", "2", "--data-root", "data"],
                     cwd=tmp_path)
    assert line == "error: task 'arc_easy' is listed twice in --tasks 'arc_easy,arc_easy'; list each task once", line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "r1"]


@pytest.mark.parametrize("tasks, words", [("piqa,lev_piqa", "task 'piqa' is listed twice"),
                                          ("paper,arc_easy", "task 'arc_easy' is listed twice in --tasks "
                                                             "'paper,arc_easy' (paper holds it)"),
                                          (["hellaswag", "hellaswag"], "task 'hellaswag' is listed twice")])
def test_every_spelling_of_a_repeat_is_refused(tasks, words):
    with pytest.raises(UserError, match=words.replace("(", r"\(").replace(")", r"\)")):
        resolve_tasks(tasks)


def test_each_task_once_is_taken():
    assert resolve_tasks("paper") == list(PAPER_TASKS)
    assert resolve_tasks("lev_winogrande,piqa") == ["winogrande", "piqa"]
