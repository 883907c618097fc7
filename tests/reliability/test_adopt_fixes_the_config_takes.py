"""The fix a refusal of ``adopt`` offers is a value the family's config takes (issue 30 round 29, W72, unclear).

``adopt(GPTJConfig(rotary_dim=0))`` was refused with "set it in the config (e.g. rotary_dim=64, or None for the whole
head)", but transformers' GPTJConfig refuses None (a strict int field), and 64 is past the head width of a small
model (``check_rotary_dim`` then refused it). ``adoption_config._size_fix`` now names the head width for rotary_dim
and offers None only where the config's class takes it (``_takes_none``): GPT-Neo's window_size is refused the
same way; Mistral's sliding_window and GPT-2's n_inner take None and still offer it.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from leviathan.errors import ArgumentValueError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402

from test_adopt_config_settings_checked import GEN  # noqa: E402
from test_adopt_family_settings_checked import GPTJ  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]

NEO = dict(vocab_size=300, hidden_size=32, num_layers=2, num_heads=4, max_position_embeddings=64,
           attention_types=[[["global", "local"], 1]])


def test_gptjs_rotary_dim_fix_is_the_head_width_and_it_works():
    with pytest.raises(ArgumentValueError, match=r"GPTJConfig\.rotary_dim .*got 0; set it in the config "
                                                 r"\(e\.g\. rotary_dim=8: the whole head\)$") as caught:
        adopt(transformers.GPTJConfig(**GPTJ, rotary_dim=0), **GEN)
    assert "None" not in str(caught.value)
    adopt(transformers.GPTJConfig(**GPTJ, rotary_dim=8), **GEN)  # the value named is taken


def test_none_is_offered_only_where_the_config_takes_it():
    with pytest.raises(ArgumentValueError, match=r"GPTNeoConfig\.window_size .*got 0; set it in the config "
                                                 r"\(e\.g\. window_size=4096\)$"):
        adopt(transformers.GPTNeoConfig(**NEO, window_size=0), **GEN)
    with pytest.raises(ArgumentValueError, match=r"GPT2Config\.n_inner .*got 0; .*or None for 4 x the width\)$"):
        adopt(transformers.GPT2Config(vocab_size=300, n_embd=32, n_layer=1, n_head=4, n_positions=64, n_inner=0),
              **GEN)
