"""A measurement given nothing to measure is refused, not returned empty (issue 30 round 29, W540, W407).

- W540: ``gain_over_training`` of two curves validated at different token counts returned an empty ``GainCurve``, and
  the report's gain-over-training figure would show nothing, without a word: it names both curves' spans now, and
  ``efficiency_from_results`` keeps that line as the entry's ``error`` beside its sample efficiency.
- W407: ``evaluate_checkpoint(run, {})`` scored nothing and returned ``({}, {})``: an empty stream mapping is one
  UserError before the model is loaded.
"""

from __future__ import annotations

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.eval.score import evaluate_checkpoint
from leviathan.experiments.method.efficiency import Curve, gain_over_training

pytestmark = [pytest.mark.reliability]


def test_curves_with_no_token_count_in_common_are_refused():
    model = Curve(np.array([100.0, 200.0, 300.0]), np.array([5.0, 4.0, 3.0]))
    reference = Curve(np.array([150.0, 250.0]), np.array([5.0, 4.5]))
    with pytest.raises(UserError, match=r"gain_over_training: the model's curve \(tokens 100 to 300, 3 points\) and the "
                                        r"reference's \(tokens 150 to 250, 2 points\) share no token count"):
        gain_over_training(model, reference)


def test_curves_sharing_some_token_counts_compare_at_those():
    model = Curve(np.array([100.0, 200.0, 300.0]), np.array([5.0, 4.0, 3.0]))
    reference = Curve(np.array([200.0, 250.0]), np.array([4.0, 3.9]))
    gain = gain_over_training(model, reference)
    assert gain.tokens == [200.0] and gain.reduction == [0.0]


def test_an_empty_stream_mapping_is_refused(finished_run):
    with pytest.raises(UserError, match=r"evaluate_checkpoint: streams is empty, so there is nothing to score; pass at "
                                        r"least one eval set"):
        evaluate_checkpoint(finished_run, {})
