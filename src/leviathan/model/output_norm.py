"""RMS normalisation of an input side's output, with a learnable gain that starts at a table row's scale.

    e'(i) = g * e(i) / sqrt(mean_D e(i)^2 + eps)          g (D,) learnable, initialised at ``init_gain``

An option of every input side that is a table or the generator (``ModelConfig.embedding_norm``, issue 29): the
reference generator starts at an output RMS of about 0.24 per id, 12x a 0.02 table row (docs/DESIGN.md §2), and
a normalised output with g = initializer_range starts every id at exactly a table row's RMS. Later open models
built on this generator normalise its output the same way. It is a fixed function of the id's row, so baking
applies it once and the baked table is an ordinary ``nn.Embedding`` weight.

Footguns: not for a tied table (the head would then differ from the input side: ``ModelConfig`` refuses it);
the gain is an input-side parameter (``model.embed_tokens.out_norm.weight``), undecayed like the rest of it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class OutputNorm(nn.Module):
    """x (..., D) -> weight * x / rms(x), RMS over the last dim (``F.rms_norm``)."""

    def __init__(self, hidden_size: int, init_gain: float, eps: float = 1e-6):
        """``hidden_size`` a whole number >= 1, ``init_gain`` and ``eps`` finite numbers > 0: 0 rows, a negative gain
        and a NaN eps were taken without a word (issue 30 round 22, the kind of S225)."""
        from ..value_rules import api_check, check_whole, number_problem
        from .config import FLOAT_RANGES

        check_whole("OutputNorm", "hidden_size", hidden_size, 1, fix="pass the width D of what it normalises")
        for name, value in (("init_gain", init_gain), ("eps", eps)):
            api_check("OutputNorm", name, number_problem(value, 0.0, "a finite number > 0"),
                      "pass the gain it starts at (a table row's std, 0.02) and a small eps (1e-6)")
        low, high = FLOAT_RANGES["rms_norm_eps"]  # eps=1e30 made every output about 0 (issue 30 round 25, Y668's kind)
        if not low <= eps <= high:
            api_check("OutputNorm", "eps", f"must be in [{low:g}, {high:g}] (ModelConfig's rms_norm_eps range), got "
                      f"{eps!r}", "pass a small eps (1e-6): above the spread it guards it flattens every output")
        super().__init__()
        self.init_gain, self.eps = float(init_gain), float(eps)
        self.weight = nn.Parameter(torch.empty(hidden_size))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        nn.init.constant_(self.weight, self.init_gain)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)  # (..., D)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, init_gain={self.init_gain}, eps={self.eps}"
