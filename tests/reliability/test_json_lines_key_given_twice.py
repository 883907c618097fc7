"""A JSON-lines line whose object gives a key twice is not taken as the last value (issue 30 round 28, U455):
``io.read_jsonl`` read ``{"a": 1, "a": 2}`` as ``{'a': 2}`` without a word, while config.json and state.json refuse a
key given twice (``json_text.no_repeats``). ``jsonl.read_json_lines`` now reports such a line as a bad line naming
the key; ``read_jsonl`` and ``read_metrics`` refuse it in one line naming the file, the line and the key, and the
readers that skip and report bad lines (a results row, ``read_metric_rows``) skip it with that line.
"""

from __future__ import annotations

import pytest

from leviathan import io as lio
from leviathan.errors import UserError
from leviathan.jsonl import read_json_lines
from leviathan.train.metrics import read_metric_rows

pytestmark = [pytest.mark.reliability]


def test_read_jsonl_refuses_a_key_given_twice(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_text('{"b": 0}\n{"a": 1, "nested": {"a": 1}, "a": 2}\n')
    with pytest.raises(UserError, match=r"w\.jsonl' line 2 gives the key 'a' twice, of which JSON would keep only "
                                        r"the last; keep one of them"):
        lio.read_jsonl(path)
    path.write_text('{"b": {"c": 1, "c": 2}}\n')  # nested, and the only line
    with pytest.raises(UserError, match=r"line 1 gives the key 'c' twice"):
        lio.read_jsonl(path)
    path.write_text('{"a": 1, "b": {"a": 2}}\n')  # one key per object: read as before
    assert lio.read_jsonl(path) == [{"a": 1, "b": {"a": 2}}]


def test_metrics_readers_name_the_line(tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "step": 2, "tokens": 1, "train_loss": 3.0, "lr": 0.001}\n'
                                            '{"step": 3, "tokens": 3, "train_loss": 3.0, "lr": 0.001}\n')
    with pytest.raises(UserError, match=r"line 1 gives the key 'step' twice"):
        lio.read_metrics(tmp_path)
    said: list[str] = []
    assert [row.step for row in read_metric_rows(tmp_path, report=said.append)] == [3]
    assert len(said) == 1 and "metrics.jsonl:1: line 1 gives the key 'step' twice" in said[0]
    assert read_json_lines(tmp_path / "metrics.jsonl")[1][0][0] == 1
