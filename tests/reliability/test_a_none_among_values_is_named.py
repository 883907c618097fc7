"""A None among the values a check looks through is named like any other bad value (issue 30 round 33, AE189's kind).

``next((k for k in device_map if not isinstance(k, str)), None)`` found the key None and read it as "none found", so
``device_map={..., None: 'cpu'}`` reached accelerate's raw "'NoneType' object has no attribute 'count'" (AE189; in
tests/reliability/test_hf_forward_inputs_and_attention_held.py). The same pattern let a None through three more
checks: a ``prefix_allowed_tokens_fn`` returning [None], ``SweepOptions(only=[None])``, and ``least_squares_slope``
of xs holding None.
"""

from __future__ import annotations

import pytest

from leviathan.errors import UserError

pytestmark = [pytest.mark.reliability]


def test_a_prefix_function_returning_none_is_named():
    from leviathan.hf.generate_ids import checked_prefix_function

    allowed = checked_prefix_function(lambda batch, ids: [3, None], 300, "generate")
    with pytest.raises(UserError, match=r"^generate: prefix_allowed_tokens_fn returned None, which is not a token id"):
        allowed(0, None)
    assert checked_prefix_function(lambda batch, ids: [3], 300, "generate")(0, None) == [3]


def test_sweep_options_naming_none_is_refused():
    from leviathan.experiments.machinery.sweep import SweepOptions
    from leviathan.experiments.machinery.sweep_options import check_sweep_options

    with pytest.raises(UserError, match=r"SweepOptions: only: expected names, got \['a', None\]"):
        check_sweep_options(SweepOptions(only=["a", None]))


def test_least_squares_slope_of_a_none_is_named():
    from leviathan.experiments.method.paired import least_squares_slope

    with pytest.raises(UserError, match=r"^least_squares_slope: xs, ys: expected numbers, got NoneType None"):
        least_squares_slope([1.0, None, 3.0], [1.0, 2.0, 3.0])
