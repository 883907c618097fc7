"""A stream given to ``evaluate_checkpoint`` is named by an eval set (issue 30 round 28: U784, silent).

``evaluate_checkpoint(run, {'': stream})`` scored the stream and returned its result under the key '' without a word:
a results row's eval set named by nothing (``leviathan analyze`` and ``report`` refuse an empty ``--eval-set``). Each
key now meets ``value_rules.eval_set_problem`` (an empty or blank name, or no text), checked with the streams
before any scoring.
"""

from __future__ import annotations

import pytest

from leviathan.errors import UserError
from leviathan.eval.stream import EvalStream

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("name, shown", [("", "an empty name"), ("  ", "an empty name"), (3, "3")],
                         ids=["U784-empty", "blank", "a-number"])
def test_a_stream_named_by_nothing_is_refused(finished_run, data, name, shown):
    from leviathan.eval.score import evaluate_checkpoint

    stream = EvalStream.from_split(data, "val", 64)
    with pytest.raises(UserError, match=rf"evaluate_checkpoint: streams' key: expected the name of an eval set such "
                                        rf"as val or wikitext2, got {shown}; name each stream by its eval set") as e:
        evaluate_checkpoint(finished_run, {"val": stream, name: stream}, seq_len=32)
    assert "\n" not in str(e.value)
    assert list(evaluate_checkpoint(finished_run, {"val": stream}, seq_len=32)[0]) == ["val"]
