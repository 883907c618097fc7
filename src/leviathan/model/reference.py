"""The generator formula (paper steps 1-6, docs/DESIGN.md §2) written literally: the slow reference the fast path is tested against.

Every position is computed on its own (no deduplication), the dense (..., kappa) basis of every
seed coordinate is formed, phi is a full contraction over all kappa knots, and the product is a
plain ``prod``. Autograd keeps every intermediate. Use it for tests and benchmarks, never for
training.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .bspline import beta, dense_basis
from .digits import to_digits


def reference_embed(ids: torch.Tensor, codebooks: torch.Tensor, proj: torch.Tensor, ln_weight: torch.Tensor,
                    ln_bias: torch.Tensor, spline_coeff: torch.Tensor, out: torch.Tensor,
                    degree: int = 2, ln_eps: float = 1e-5, knot_log_scale: torch.Tensor | None = None,
                    out_bias: torch.Tensor | None = None) -> torch.Tensor:
    """ids (...) -> embeddings (..., D), straight from the formula. Parameter shapes as in the generator.

    With ``knot_log_scale`` (M, d_s) the KHRONOS form (``generator_form="khronos"``): u~ = 1/2 + (u - 1/2)
    exp(-knot_log_scale) clamped into [0, 1], and the basis B_g = beta(u~ (kappa - 1) - g) left unnormalised;
    ``out_bias`` (D,) is added to the output.

    Parameters: the literal formula's tensors and options (docs/DESIGN.md §2, steps 1-6), one each so that the test
    reads like the paper.
    """
    k, b, d_s = codebooks.shape
    M, _, kappa, r = spline_coeff.shape
    digits = to_digits(ids, b, k)  # (..., k)
    z = sum(codebooks[j][digits[..., j]] for j in range(k))  # step 2: (..., d_s)
    embedding = 0
    for m in range(M):
        h = z @ proj[m].T  # (..., d_s)
        h = F.layer_norm(h, (d_s,), ln_weight[m], ln_bias[m], ln_eps)
        u = torch.sigmoid(h / 2)  # step 3: (..., d_s) in (0, 1)
        if knot_log_scale is None:
            basis = dense_basis(u, kappa, degree)  # step 4: (..., d_s, kappa)
        else:  # KHRONOS: the dilated grid, no renormalisation
            u = (0.5 + (u - 0.5) * torch.exp(-knot_log_scale[m])).clamp(0, 1)
            basis = beta(u.unsqueeze(-1) * (kappa - 1) - torch.arange(kappa, dtype=u.dtype), degree)
        phi = torch.einsum("...dg,dgc->...dc", basis, spline_coeff[m])  # (..., d_s, r)
        P = torch.prod(phi, dim=-2)  # step 5: (..., r)
        embedding = embedding + P @ out[m]  # step 6: (..., D)
    return embedding if out_bias is None else embedding + out_bias


def reference_from_module(generator, ids: torch.Tensor) -> torch.Tensor:
    """Run the literal formula with a LeviathanGenerator's own parameters and options: its form, then
    e - center and g * e / sqrt(mean(e^2) + eps) where the generator has them."""
    g = generator
    e = reference_embed(ids, g.codebooks, g.proj, g.ln_weight, g.ln_bias, g.spline_coeff, g.out,
                        degree=g.degree, ln_eps=g.ln_eps, knot_log_scale=g.knot_log_scale, out_bias=g.out_bias)
    if g.center is not None:
        e = e - g.center
    if g.out_norm is not None:
        e = g.out_norm.weight * e / (e.pow(2).mean(-1, keepdim=True) + g.out_norm.eps).sqrt()
    return e
