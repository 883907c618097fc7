"""The generator's modes and rank are refused past what the vocabulary can use, by one rule on every path (issue 30
round 28: U27, U28, U71, U182, all silent).

``ModelConfig(generator_modes=10**6)`` and ``generator_rank=10**7``, ``LeviathanGenerator(300, 16, modes=10**6)``
and ``adopt(..., modes=10**6)`` built hundreds of millions of parameters for a 300 x 32 table without a word: round 27
bounded base and knots (``generator_size.digits_problem``), not modes and rank. ``generator_size.features_problem``,
called beside it by ModelConfig (LeviathanConfig, run configs and overrides) and LeviathanGenerator (adopt): modes
and rank at most 32x the paper's 8 and 64 (the knot cap's multiple), and modes x rank, the features step 6 maps to an
embedding, at most max(V, the paper's 512): V ids' features span at most V dimensions.
"""

from __future__ import annotations

import re

import pytest

transformers = pytest.importorskip("transformers")

from leviathan import LeviathanGenerator, ModelConfig  # noqa: E402
from leviathan.config import ConfigError  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, adopt  # noqa: E402
from leviathan.run_config import load_run_config  # noqa: E402

from reliability_support import cli_error  # noqa: E402
from test_size_settings_bounded import GEN, SMALL, _llama, _one_line  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

MODES_PAST = r"modes=1,000,000 is more than 256, 32x the paper's 8.*set (model\.generator_)?modes to at most 256"
RANK_PAST = r"rank=10,000,000 is more than 2,048, 32x the paper's 64.*set (model\.generator_)?rank to at most 2,048"
FEATURES_PAST = (r"modes x (model\.generator_)?rank = 16 x 64 = 1,024 features is more than 300 ids can use .*"
                 r"so that their product is at most 512")


@pytest.mark.parametrize("setting, named", [
    (dict(generator_modes=10**6), MODES_PAST), (dict(generator_rank=10**7), RANK_PAST),
    (dict(generator_modes=16, generator_rank=64), FEATURES_PAST),
], ids=["U27", "U28", "features"])
def test_model_config_and_leviathan_config_refuse_modes_or_rank_past_the_vocabulary(setting, named):
    with pytest.raises(ConfigError, match=named) as e:
        ModelConfig(**{**SMALL, **setting})
    _one_line(e)
    with pytest.raises(ConfigError, match=named):
        LeviathanConfig(**{**SMALL, **setting})


@pytest.mark.parametrize("settings, named", [
    (dict(modes=10**6), MODES_PAST), (dict(rank=10**7), RANK_PAST), (dict(modes=16, rank=64), FEATURES_PAST),
], ids=["U71-modes", "rank", "features"])
def test_the_generator_and_adopt_refuse_the_same(settings, named):
    """U71 (LeviathanGenerator, 400 million parameters for a 300 x 16 table) and U182 (adopt, 464 million)."""
    with pytest.raises(ValueError, match=named) as e:
        LeviathanGenerator(300, 16, **{**GEN, **settings})
    _one_line(e)
    with pytest.raises(UserError, match=named) as e:
        adopt(_llama(), **{**GEN, **settings})
    assert "\n" not in str(e.value)


def test_a_run_config_override_and_the_command_line_refuse_huge_modes():
    with pytest.raises(ConfigError, match=r"model\.generator_modes=1,000,000 is more than 256"):
        load_run_config("tiny", ["data.path=no-data-here", "model.vocab_size=300", "model.generator_seed_dim=8",
                                 "model.generator_modes=1000000", "model.generator_rank=4", "model.generator_knots=8"])
    line = cli_error(["params", "--preset", "cpu-tiny", "model.vocab_size=300", "model.generator_seed_dim=8",
                      "model.generator_knots=8", "model.generator_rank=4", "model.generator_modes=1000000"])
    assert "model.generator_modes=1,000,000 is more than 256" in line, line


def test_the_papers_sizes_and_the_bound_itself_still_build():
    """The paper's 8 x 64 = 512 features stay valid for a small vocabulary; up to V features for a larger one."""
    assert ModelConfig(**{**SMALL, "generator_modes": 8, "generator_rank": 64}).generator_rank == 64
    assert LeviathanGenerator(300, 16, seed_dim=4, modes=2, knots=4, rank=256).rank == 256
    assert LeviathanGenerator(1000, 8, seed_dim=4, modes=4, knots=4, rank=250).modes == 4  # 1,000 features for 1,000
    with pytest.raises(ValueError, match=r"= 4 x 251 = 1,004 features is more than 1,000 ids"):
        LeviathanGenerator(1000, 8, seed_dim=4, modes=4, knots=4, rank=251)


@pytest.mark.parametrize("setting, said", [({"knots": 1}, "knots must be an integer >= 2, got 1; pass knots=N"),
                                           ({"center": "no"}, "center must be true or false, got 'no'; pass "
                                                              "center=True or center=False"),
                                           ({"init": "bogus"}, "init must be one of"),
                                           ({"ln_eps": 1.0}, "; pass one in that range")])
def test_a_generator_setting_out_of_range_is_a_user_error_with_the_fix(setting, said):
    """Round 32, AC373: ``LeviathanGenerator(..., knots=1)`` was a plain ValueError with no fix, where adopt's same
    setting is a UserError with one; every refusal of the generator's settings is an ArgumentValueError now (still a
    ValueError)."""
    with pytest.raises(UserError, match=re.escape(said)) as caught:
        LeviathanGenerator(300, 32, **{**dict(seed_dim=8, modes=2, knots=8, rank=4), **setting})
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)
