"""A value out of range is refused naming that setting and its own range, not a bound it takes part in with the fix
of other settings (issue 30 round 25, X59: `params model.hidden_size=1e9` blamed the generator, "lower
model.generator_rank, _knots, _modes, _seed_dim or _base", and never named hidden_size's range)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402


def test_params_names_hidden_size_and_its_range():
    for embedding in ("leviathan", "dense_tied"):  # dense_tied: a model of 10^20 parameters was counted, exit 0
        line = cli_error(["params", "model.hidden_size=1e9", f"model.embedding={embedding}"])
        assert "model.hidden_size=1,000,000,000 is outside the range any model uses: set it in [1, 65,536]" in line


def test_a_generator_too_large_names_the_sizes_of_its_largest_part():
    line = cli_error(["params", "model.hidden_size=65536", "model.generator_rank=10000"])
    assert "most of them in its output maps (modes x rank x hidden_size); lower model.hidden_size, " \
           "model.generator_rank or model.generator_modes" in line, line
