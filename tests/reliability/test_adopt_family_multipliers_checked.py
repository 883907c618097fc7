"""``adopt(config)`` holds FalconH1's multipliers, PhiMoE's input jitter and the other families' scales and loss
weights to their kind's rule (issue 30 round 29, W51, W53, W54; round 28's ``hf/family_settings`` table).

W51: FalconH1's ``lm_head_multiplier=0`` (every logit 0: a uniform model, loss ln 300) and W53: its
``key_multiplier=-inf`` were taken without a word: only ``embedding_multiplier`` of its nine multipliers had a row.
W54: PhiMoE's ``input_jitter_noise=-1`` (a training forward's uniform(1-j, 1+j) factor) was taken where Mixtral's
``router_jitter_noise=-1`` is refused. Rows now for each, FalconH1's two lists of per-part scales held item by item
and by length (``SCALE_LISTS``), and for the same kinds in the other families adopt builds.
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import adopt  # noqa: E402
from leviathan.hf.family_settings import check_family_settings  # noqa: E402
from test_adopt_config_settings_checked import GEN, LLAMA  # noqa: E402

pytestmark = [pytest.mark.reliability, pytest.mark.usefixtures("single_thread")]


def _made(name, **after):
    config = getattr(transformers, name)(**LLAMA)
    for key, value in after.items():
        setattr(config, key, value)
    return config


@pytest.mark.parametrize("name, after, named", [
    ("FalconH1Config", dict(lm_head_multiplier=0.0), r"FalconH1Config\.lm_head_multiplier must be a finite number "
                                                     r"> 0, got 0\.0; set it in the config \(e\.g\. "
                                                     r"lm_head_multiplier=1\.0\)"),  # W51
    ("FalconH1Config", dict(key_multiplier=float("-inf")), r"FalconH1Config\.key_multiplier .*got -inf"),  # W53
    ("FalconH1Config", dict(attention_out_multiplier=float("nan")),
     r"FalconH1Config\.attention_out_multiplier .*got nan"),
    ("FalconH1Config", dict(mlp_multipliers=[1.0, 0.0]),
     r"FalconH1Config\.mlp_multipliers\[1\] must be a finite number > 0"),
    ("FalconH1Config", dict(ssm_multipliers=[1.0] * 4),
     r"FalconH1Config\.ssm_multipliers must be a list of 5 numbers .*got 4 items"),
    ("PhimoeConfig", dict(input_jitter_noise=-1.0), r"PhimoeConfig\.input_jitter_noise must be a finite number >= 0, "
                                                    r"got -1\.0"),  # W54
])
def test_adopt_refuses_a_multiplier_or_jitter_out_of_its_range(name, after, named):
    with pytest.raises(UserError, match=rf"^adopt: {named}") as e:
        adopt(_made(name, **after), **GEN)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name, key, value", [
    ("MiniCPM3Config", "scale_emb", 0), ("MiniCPM3Config", "scale_depth", float("inf")),
    ("JetMoeConfig", "aux_loss_coef", -0.1), ("BambaConfig", "z_loss_coefficient", float("nan")),
    ("GptOssConfig", "swiglu_alpha", 0.0),
])
def test_the_same_kinds_in_other_families_are_checked(name, key, value):
    config = getattr(transformers, name)()
    check_family_settings(config, name)  # the family's defaults pass
    setattr(config, key, value)
    with pytest.raises(UserError, match=rf"^adopt: {name}\.{key} must be a finite number >=? ?0?"):
        check_family_settings(config, name)


@pytest.mark.parametrize("name", ["FalconH1Config", "PhimoeConfig"])
def test_their_valid_settings_still_adopt_and_run(name):
    model = adopt(_made(name), **GEN).train()
    logits = model(torch.tensor([[1, 2, 3, 4, 5]])).logits
    assert logits.shape == (1, 5, 300) and bool(torch.isfinite(logits).all())
