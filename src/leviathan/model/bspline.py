"""Normalised uniform B-spline basis on [0, 1] (SPEC §1 step 4).

kappa knots t_g = g / (kappa - 1), g = 0..kappa-1. With s = u * (kappa - 1) the basis is the
cardinal B-spline centred on each knot, B_g(u) = beta(s - g), then normalised so that
sum_g B_g(u) = 1. For the paper's quadratic spline (degree 2)

    beta(x) = 0.75 - x^2               |x| < 0.5
            = 0.5 * (1.5 - |x|)^2      0.5 <= |x| < 1.5
            = 0                        beyond.

Interior points already sum to 1; the normalisation only matters within 1.5 knot spacings of the
ends, where the centred splines of the missing knots -1 and kappa would have contributed.

A degree-p basis has at most p + 1 non-zero functions at any u: the "window" starting at knot
``g0 = floor(s - (p + 1) / 2) + 1``. ``window`` returns those indices (clamped ones carry zero
weight) and their normalised weights plus d(weight)/du, which is all the generator's fast path
needs: it never forms the (..., kappa) dense basis. ``dense_basis`` forms it, for the literal
reference implementation and for the comparison with scipy.
"""

from __future__ import annotations

import torch


def beta(x: torch.Tensor, degree: int) -> torch.Tensor:
    """Centred cardinal B-spline of ``degree`` at offsets x (any shape)."""
    a = x.abs()
    if degree == 1:
        return torch.clamp(1.0 - a, min=0.0)
    if degree == 2:
        inner = 0.75 - a * a
        outer = 0.5 * (1.5 - a) ** 2
        return torch.where(a < 0.5, inner, torch.where(a < 1.5, outer, torch.zeros_like(a)))
    if degree == 3:
        inner = 2.0 / 3.0 - a * a + 0.5 * a**3
        outer = (2.0 - a) ** 3 / 6.0
        return torch.where(a < 1.0, inner, torch.where(a < 2.0, outer, torch.zeros_like(a)))
    raise ValueError(f"spline degree must be 1, 2 or 3, got {degree}")


def dbeta(x: torch.Tensor, degree: int) -> torch.Tensor:
    """d beta / dx at offsets x."""
    a = x.abs()
    sgn = torch.sign(x)
    if degree == 1:
        return torch.where(a < 1.0, -sgn, torch.zeros_like(a))
    if degree == 2:
        return torch.where(a < 0.5, -2.0 * x, torch.where(a < 1.5, -sgn * (1.5 - a), torch.zeros_like(a)))
    if degree == 3:
        inner = sgn * (-2.0 * a + 1.5 * a * a)
        outer = -sgn * 0.5 * (2.0 - a) ** 2
        return torch.where(a < 1.0, inner, torch.where(a < 2.0, outer, torch.zeros_like(a)))
    raise ValueError(f"spline degree must be 1, 2 or 3, got {degree}")


def dense_basis(u: torch.Tensor, num_knots: int, degree: int = 2) -> torch.Tensor:
    """u (...) in [0, 1] -> normalised basis (..., kappa). Literal formula, O(kappa) per point."""
    s = u.unsqueeze(-1) * (num_knots - 1)  # (..., 1)
    g = torch.arange(num_knots, dtype=u.dtype, device=u.device)  # (kappa,)
    raw = beta(s - g, degree)  # (..., kappa)
    return raw / raw.sum(-1, keepdim=True)


def window(u: torch.Tensor, num_knots: int, degree: int = 2):
    """The p + 1 possibly non-zero basis functions at each u.

    Args:
        u: (...) values in [0, 1].
    Returns:
        idx: (..., p+1) int64 knot indices, clamped into [0, kappa-1] (clamped slots have weight 0).
        w: (..., p+1) normalised weights; they sum to 1 over the last dim.
        dw: (..., p+1) d w / d u (includes the chain factor kappa - 1 and the normalisation).
    """
    p = degree
    scale = num_knots - 1
    s = u * scale  # (...)
    g0 = torch.floor(s - (p + 1) / 2.0) + 1.0  # (...) first knot of the window
    offs = torch.arange(p + 1, dtype=u.dtype, device=u.device)  # (p+1,)
    g = g0.unsqueeze(-1) + offs  # (..., p+1) knot indices as floats
    valid = (g >= 0) & (g <= scale)  # knots -1 or kappa do not exist
    x = s.unsqueeze(-1) - g  # (..., p+1) offsets from each knot
    b = torch.where(valid, beta(x, p), torch.zeros_like(x))
    db = torch.where(valid, dbeta(x, p), torch.zeros_like(x)) * scale  # d b / d u
    total = b.sum(-1, keepdim=True)  # (..., 1) > 0 for every u in [0, 1]
    dtotal = db.sum(-1, keepdim=True)
    w = b / total
    dw = (db * total - b * dtotal) / (total * total)  # quotient rule
    idx = g.clamp(0, scale).long()
    return idx, w, dw
