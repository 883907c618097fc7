"""Adoption's numeric options are held to a stated range, and a fit that ends worse than it started says so (issue
30 round 25, kind 7): ``adopt(..., fit=Fit(lr=1.0, steps=50))`` diverged to an objective of about 5000 (the rows' own
mean square is 1) and was returned as fitted (Y663); ``ln_eps=1e30`` flattened every seed, all 300 baked rows one
row (Y667), and ``norm=True, norm_eps=1e30`` made every output about 2e-18 (Y668), each without a word, where
``table_std`` already had its range [1e-15, 10000].
"""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from leviathan import LeviathanGenerator  # noqa: E402
from leviathan.errors import UserError  # noqa: E402
from leviathan.hf import Fit, adopt  # noqa: E402

SMALL = dict(seed_dim=8, modes=2, knots=8, rank=4)


def _llama():
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, bos_token_id=1, eos_token_id=2))


def test_a_fit_that_ends_above_its_start_is_refused_with_a_lower_rate():
    """Y663: the largest rate Fit takes overshoots on this table; the refusal names both objectives and the fix."""
    with pytest.raises(UserError, match=r"fit diverged at Fit.lr=1: it ended farther from the input table than it "
                                        r"started \(objective .* after 50 steps, .* before\).*Fit\(lr=0.1\)"):
        adopt(_llama(), fit=Fit(lr=1.0, steps=50), **SMALL)


def test_a_fit_at_a_working_rate_is_taken():
    model = adopt(_llama(), fit=Fit(lr=3e-3, steps=20), **SMALL)
    assert model.leviathan_fit.objective < 2


@pytest.mark.parametrize("settings, name", [(dict(ln_eps=1e30), "ln_eps"),  # Y667
                                            (dict(norm=True, norm_eps=1e30), "norm_eps"),  # Y668
                                            (dict(ln_eps=1.0), "ln_eps"), (dict(norm_eps=1e-40), "norm_eps")])
def test_an_epsilon_outside_its_range_is_refused(settings, name):
    with pytest.raises(ValueError, match=rf"^{name} must be in \[1e-30, 0.1\] \(an epsilon"):
        LeviathanGenerator(300, 16, **SMALL, **settings)
    config = transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=4)
    with pytest.raises(UserError, match=rf"invalid generator setting: {name} must be in \[1e-30, 0.1\]"):
        adopt(config, **SMALL, **settings)


def test_the_usual_epsilons_are_taken():
    rows = LeviathanGenerator(300, 16, **SMALL, ln_eps=1e-12, norm=True, norm_eps=1e-6).bake()
    assert len(torch.unique(rows.round(decimals=6), dim=0)) == 300


def test_the_output_norm_holds_its_epsilon_to_the_same_range():
    """Y668's sibling: ``OutputNorm`` itself (the norm of every input side) took eps=1e30 as "> 0"."""
    from leviathan.model.output_norm import OutputNorm

    with pytest.raises(UserError, match=r"^OutputNorm: eps: must be in \[1e-30, 0.1\] .*got 1e\+30; pass a small eps"):
        OutputNorm(16, 0.02, 1e30)
    assert OutputNorm(16, 0.02, 1e-6).eps == 1e-6
