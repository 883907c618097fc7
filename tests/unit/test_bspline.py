"""Normalised uniform B-spline basis (docs/DESIGN.md §2, paper step 4) against scipy, by hand, and its fast window."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.interpolate import BSpline

from leviathan.model import bspline

pytestmark = pytest.mark.usefixtures("single_thread")

DEGREES = (1, 2, 3)


def scipy_basis(u: np.ndarray, num_knots: int, degree: int) -> np.ndarray:
    """(n,) -> (n, kappa): scipy's B-spline basis elements, each the cardinal B-spline of ``degree`` on
    the uniform knot grid centred on t_g = g / (kappa - 1) (its degree + 2 knots are
    t_g + h (j - (degree + 1) / 2), h = 1 / (kappa - 1)), normalised to a partition of unity on [0, 1]."""
    h = 1.0 / (num_knots - 1)
    cols = []
    for g in range(num_knots):
        knots = h * (g + np.arange(degree + 2) - (degree + 1) / 2)
        element = BSpline.basis_element(knots, extrapolate=False)
        cols.append(np.nan_to_num(element(u), nan=0.0))  # nan = outside the element's support
    raw = np.stack(cols, axis=-1)
    return raw / raw.sum(-1, keepdims=True)


def sample_u(n_random: int, num_knots: int) -> torch.Tensor:
    """Grid + random points + every knot and half-knot exactly + both ends, float64."""
    grid = torch.linspace(0, 1, 401, dtype=torch.float64)
    rand = torch.rand(n_random, dtype=torch.float64)
    knots = torch.arange(2 * num_knots - 1, dtype=torch.float64) / (2 * (num_knots - 1))
    return torch.cat([grid, rand, knots, torch.tensor([0.0, 1.0, 1e-12, 1 - 1e-12], dtype=torch.float64)])


@pytest.mark.parametrize("degree", DEGREES)
@pytest.mark.parametrize("num_knots", [2, 4, 5, 8, 32])
def test_dense_basis_equals_scipy(degree, num_knots):
    u = sample_u(300, num_knots)
    ours = bspline.dense_basis(u, num_knots, degree).numpy()
    ref = scipy_basis(u.numpy(), num_knots, degree)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


def test_quadratic_basis_by_hand():
    """The design's beta (docs/DESIGN.md §2): 0.75 - s^2 inside, 0.5 (1.5 - s)^2 up to 1.5; kappa=5 knots at 0, .25, .5, .75, 1."""
    u = torch.tensor([0.5, 0.0, 0.125, 1.0], dtype=torch.float64)
    B = bspline.dense_basis(u, 5, 2)
    expected = torch.tensor([
        [0.0, 0.125, 0.75, 0.125, 0.0],  # interior, already sums to 1
        [0.75 / 0.875, 0.125 / 0.875, 0.0, 0.0, 0.0],  # end: knot -1 is missing, renormalised
        [0.5, 0.5, 0.0, 0.0, 0.0],  # s = 0.5: beta(0.5) = beta(-0.5) = 0.5, knot -1 contributes 0
        [0.0, 0.0, 0.0, 0.125 / 0.875, 0.75 / 0.875],
    ], dtype=torch.float64)
    torch.testing.assert_close(B, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("degree", DEGREES)
def test_basis_is_mirror_symmetric(degree):
    """B_g(u) = B_{kappa-1-g}(1-u): the knots are symmetric about 1/2."""
    u = torch.rand(200, dtype=torch.float64)
    B = bspline.dense_basis(u, 7, degree)
    torch.testing.assert_close(bspline.dense_basis(1 - u, 7, degree).flip(-1), B, rtol=0, atol=1e-13)


@pytest.mark.parametrize("degree", DEGREES)
@pytest.mark.parametrize("num_knots", [2, 3, 8, 32])
def test_window_scattered_equals_dense_basis(degree, num_knots):
    u = sample_u(500, num_knots)
    idx, w, dw = bspline.window(u, num_knots, degree)
    assert idx.shape == w.shape == dw.shape == (u.shape[0], degree + 1)
    assert idx.dtype == torch.int64 and idx.min() >= 0 and idx.max() <= num_knots - 1
    dense = torch.zeros(u.shape[0], num_knots, dtype=torch.float64).scatter_add_(1, idx, w)
    torch.testing.assert_close(dense, bspline.dense_basis(u, num_knots, degree), rtol=0, atol=1e-14)
    torch.testing.assert_close(w.sum(-1), torch.ones_like(u), rtol=0, atol=1e-14)


@pytest.mark.parametrize("degree", DEGREES)
def test_window_works_in_float32_and_batched_shapes(degree):
    u = torch.rand(3, 4, 5)
    idx, w, dw = bspline.window(u, 8, degree)
    assert w.dtype == torch.float32 and w.shape == (3, 4, 5, degree + 1)
    dense = torch.zeros(3, 4, 5, 8).scatter_add_(-1, idx, w)
    torch.testing.assert_close(dense, bspline.dense_basis(u, 8, degree), rtol=0, atol=1e-6)


def _away_from_kinks(u: torch.Tensor, num_knots: int, degree: int, margin: float = 1e-4) -> torch.Tensor:
    """Drop u where the basis is not differentiable (degree 1 at knots) or finite differences straddle a
    breakpoint of the second derivative (knots and half-knots)."""
    s = u * (num_knots - 1)
    frac_knot = (s - s.round()).abs()
    frac_half = (s - 0.5 - (s - 0.5).round()).abs()
    keep = (frac_knot > margin) & (frac_half > margin)
    return u[keep]


@pytest.mark.parametrize("degree", DEGREES)
@pytest.mark.parametrize("num_knots", [3, 8, 32])
def test_window_derivative_matches_autograd_and_finite_differences(degree, num_knots):
    u = _away_from_kinks(torch.rand(400, dtype=torch.float64) * 0.9998 + 1e-4, num_knots, degree)
    idx, w, dw = bspline.window(u, num_knots, degree)
    dense_dw = torch.zeros(u.shape[0], num_knots, dtype=torch.float64).scatter_add_(1, idx, dw)

    # autograd of the literal dense basis: each column's derivative w.r.t. its own u
    x = u.clone().requires_grad_(True)
    B = bspline.dense_basis(x, num_knots, degree)
    auto = torch.stack([torch.autograd.grad(B[:, g].sum(), x, retain_graph=True)[0] for g in range(num_knots)], -1)
    torch.testing.assert_close(dense_dw, auto, rtol=1e-10, atol=1e-9)

    # central finite differences of the dense basis
    eps = 1e-7
    fd = (bspline.dense_basis(u + eps, num_knots, degree) - bspline.dense_basis(u - eps, num_knots, degree)) / (2 * eps)
    torch.testing.assert_close(dense_dw, fd, rtol=1e-5, atol=1e-5 * (num_knots - 1))
    # a partition of unity has derivatives summing to zero
    torch.testing.assert_close(dw.sum(-1), torch.zeros_like(u), rtol=0, atol=1e-9 * (num_knots - 1))


@pytest.mark.parametrize("degree", DEGREES)
@pytest.mark.parametrize("num_knots", [4, 16, 32])
def test_at_most_degree_plus_one_contiguous_non_zeros(degree, num_knots):
    u = sample_u(1000, num_knots)
    B = bspline.dense_basis(u, num_knots, degree)
    assert (B >= 0).all()
    nz = B > 0
    assert int(nz.sum(-1).max()) <= degree + 1
    assert int(nz.sum(-1).min()) >= 1
    # the non-zeros are contiguous: first..last non-zero index spans at most degree + 1 knots
    positions = torch.arange(num_knots).expand_as(nz)
    first = torch.where(nz, positions, num_knots).min(-1).values
    last = torch.where(nz, positions, -1).max(-1).values
    assert int((last - first).max()) <= degree
    assert int(nz.sum(-1).sub(last - first + 1).abs().max()) == 0
    # and the window covers every non-zero
    idx, w, _ = bspline.window(u, num_knots, degree)
    # (clamped slots repeat a valid index with weight 0, so accumulate rather than overwrite)
    covered = torch.zeros(nz.shape, dtype=torch.float64).scatter_add_(1, idx, (w > 0).double()) > 0
    assert torch.equal(covered, nz)


def test_interior_points_sum_to_one_before_normalisation():
    """Away from the ends the raw cardinal splines already form a partition of unity (docs/DESIGN.md §2, paper step 4)."""
    kappa = 16
    u = torch.linspace(2.0 / (kappa - 1), 1 - 2.0 / (kappa - 1), 101, dtype=torch.float64)
    for degree in DEGREES:
        s = u.unsqueeze(-1) * (kappa - 1)
        raw = bspline.beta(s - torch.arange(kappa, dtype=torch.float64), degree)
        torch.testing.assert_close(raw.sum(-1), torch.ones_like(u), rtol=0, atol=1e-14)


@pytest.mark.parametrize("fn", [bspline.beta, bspline.dbeta])
def test_unsupported_degree_raises(fn):
    with pytest.raises(ValueError, match="degree must be 1, 2 or 3"):
        fn(torch.zeros(3), 4)
