"""A size setting past what the model can use is refused in one line, by one rule on every path (issue 30 round 27:
S28, S29, S135, S396, S549, S550, all silent).

- S28, S135, S396: ``adopt(config, base=10**7)``, ``LeviathanConfig(generator_base=10**7)`` and a run config's
  ``model.generator_base=10000000`` for 300 ids were taken: 3 x 10^7 codebook rows of which 302 are read. The paper
  writes an id in k = ceil(log_b V) digits, so a base past the largest whose k digits V ids all use (b^(k-1) < V: 17
  for 300 ids and k = 3) is refused (``generator_size.digits_problem``, for ModelConfig and LeviathanGenerator).
- S29: ``adopt(config, knots=10**6)`` built 64 million spline parameters for 300 ids; knots are at most
  ``MAX_KNOTS`` (1,024, 32x the paper's 32).
- S549, S550: ``ModelConfig(intermediate_size=10**9)`` and ``num_hidden_layers=10**7`` were taken (96 and 164 billion
  body parameters for a width of 32); ModelConfig now holds adopt's bound (``size_bounds.MAX_SIZE``, 2^24) and 1,024
  layers (``MAX_LAYERS``), as config files, overrides and the Python API meet it.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan import LeviathanGenerator, ModelConfig  # noqa: E402
from leviathan.config import ConfigError  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import LeviathanConfig, adopt  # noqa: E402
from leviathan.presets import PRESETS, preset  # noqa: E402
from leviathan.run_config import load_run_config  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

GEN = dict(seed_dim=8, modes=2, knots=8, rank=4)
SMALL = dict(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, max_position_embeddings=64,
             generator_seed_dim=8, generator_modes=2, generator_knots=8, generator_rank=4)
BASE_PAST = r"generator_base=10,000,000 is larger than 300 ids can use with model\.generator_k=3 .*at most 17"


def _llama():
    return transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)


def _one_line(error: pytest.ExceptionInfo) -> None:
    assert "\n" not in str(error.value) and "; " in str(error.value)


@pytest.mark.parametrize("settings, named", [
    (dict(base=10**7), r"base=10,000,000 is larger than 300 ids can use with k=3 .*set base to at most 17, or leave "
                       r"it out for the smallest base, 7"),
    (dict(base=18), r"base=18 is larger than 300 ids"),
    (dict(knots=10**6), r"knots=1,000,000 is more than 1,024, .*set knots to at most 1,024"),
], ids=["S28", "base-18", "S29"])
def test_adopt_refuses_a_base_or_knots_past_what_the_vocabulary_uses(settings, named):
    with pytest.raises(UserError, match=named) as e:
        adopt(_llama(), **{**GEN, **settings})
    _one_line(e)


def test_the_largest_useful_base_and_the_smallest_still_build():
    assert LeviathanGenerator(300, 16, base=17, **GEN).base == 17
    assert adopt(_llama(), **GEN).get_input_embeddings().base == 7
    with pytest.raises(ValueError, match=r"base=18 is larger than 300 ids"):
        LeviathanGenerator(300, 16, base=18, **GEN)


def test_leviathan_config_and_a_run_config_refuse_the_same_base():
    """S135, S396: the same rule through ModelConfig (as the Python API, config files and overrides build it)."""
    with pytest.raises(ConfigError, match=BASE_PAST) as e:
        LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                        embedding="leviathan", generator_base=10**7)
    _one_line(e)
    with pytest.raises(ConfigError, match=BASE_PAST):
        load_run_config("tiny", ["data.path=no-data-here", "model.vocab_size=300", "model.generator_base=10000000"])
    with pytest.raises(ConfigError, match=r"generator_base=100,000 is larger"):  # compositional reads the digits too
        ModelConfig(**SMALL, embedding="compositional", generator_base=10**5)


@pytest.mark.parametrize("setting, named", [
    (dict(intermediate_size=10**9), r"model\.intermediate_size=1,000,000,000 is outside the range any model uses: "
                                    r"set it in \[1, 16,777,216\]"),
    (dict(num_hidden_layers=10**7), r"model\.num_hidden_layers=10,000,000 is outside .* \[1, 1,024\]"),
    (dict(max_position_embeddings=2**25), r"model\.max_position_embeddings=33,554,432 is outside"),
    (dict(generator_knots=2000), r"model\.generator_knots=2,000 is more than 1,024"),
], ids=["S549", "S550", "positions", "knots"])
def test_model_config_bounds_its_sizes_as_adopt_does(setting, named):
    with pytest.raises(ConfigError, match=named) as e:
        ModelConfig(**{**SMALL, **setting})
    _one_line(e)


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_still_validates(name):
    cfg = preset(name, vocab_size=300) if "vocab_size" not in PRESETS[name] else preset(name)
    assert cfg.resolved().base <= 447  # 200,019 ids in 3 digits: 59 to 447
