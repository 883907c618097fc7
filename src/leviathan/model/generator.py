"""The Leviathan generator: a token's input embedding as a continuous function of its id (SPEC §1).

For token i with base-b digits (i_1..i_k):

    z      = C_1[i_1] + ... + C_k[i_k]                        step 2, codebook sum      (d_s,)
    u_m    = sigmoid(LN_m(W_m z) / 2)                          step 3, per mode          (d_s,) in (0,1)
    phi    = sum_g B_g(u_{m,d}) S_m[d, g, c]                   step 4, B-spline          (d_s, r)
    P_m[c] = prod_d phi_{m,d,c}                                step 5, separable product (r,)
    e(i)   = sum_m P_m W^out_m                                 step 6, output            (D,)

Parameters (names match ../shared/testvectors): ``codebooks`` (k, b, d_s), ``proj`` (M, d_s, d_s)
applied as ``z @ proj[m].T``, ``ln_weight``/``ln_bias`` (M, d_s), ``spline_coeff`` (M, d_s, kappa, r),
``out`` (M, r, D).

Where the time goes, and why this implementation is fast
-------------------------------------------------------
The generator is a pure function of the id, so a training step only needs e(i) for the *distinct*
ids of the batch (U of them; a 2,048-token batch of English has ~600-1,000). ``forward`` runs
``torch.unique``, computes U embeddings and gathers them back with ``F.embedding``, whose backward
sums the gradients of duplicates: exact, and 2-3x less work than per-position evaluation.

Per distinct id the arithmetic is (paper defaults M=8, d_s=128, kappa=32, r=64):
- steps 2-3 and 6: three small matmuls (d_s x M d_s, M r x D), done by BLAS;
- step 4: the literal formula multiplies a (kappa)-vector of basis values by a (kappa x r) matrix
  for each of M d_s coordinates: M d_s kappa r = 2.1M multiply-adds per id. A quadratic spline
  has at most 3 non-zero basis functions, so ``_SplineProduct`` gathers just those 3 rows of S
  (3/32 of the work) and forms phi as a weighted sum of three r-vectors;
- step 5: a product over d_s of (M, r) values.

Memory: the literal formula keeps (ids, M, d_s, kappa) basis values and (ids, M, d_s, r) phi
tensors alive for backward: 256 KiB+ per id at the defaults, which is what makes naive
implementations slow (allocation + memory traffic) and large. ``_SplineProduct`` is a custom
autograd function that keeps only its input u (M d_s) (and the parameter S); backward recomputes phi
chunk by chunk and forms d P / d phi_d as the exclusive product prod_{d' != d} phi_{d'} from prefix
and suffix cumulative products (exact even when some phi is 0, unlike P / phi_d). The per-mode
LayerNorm is one ``F.group_norm`` call (groups = modes), which saves only its input and two
statistics. Kept for backward per distinct id: z (d_s) + W z (M d_s) + LN stats (2M) +
u (M d_s) + P (M r), about 10.6 KiB at the defaults.

Numerics: the product over 128 factors near 1 amplifies fp32 rounding to ~1e-6 relative; the
test vectors (float64) are matched to ~1e-5 in fp32 and ~1e-12 in float64.

Footguns: ids outside [0, b^k) raise (they would alias another token's digits); the spline kernel
is once-differentiable (no double backward).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from . import bspline
from .digits import check_ids, to_digits

# Elements of the (ids, M, d_s, degree+1, r) gathered-coefficient tensor processed at once.
# 2^22 floats = 16 MiB keeps each chunk cache-friendly and bounds peak memory for any batch.
CHUNK_ELEMENTS = 1 << 22


def _exclusive_product(phi: torch.Tensor, dim: int) -> torch.Tensor:
    """prod over ``dim`` of every element except the one at that index, without division."""
    n = phi.shape[dim]
    ones = torch.ones_like(phi.narrow(dim, 0, 1))
    prefix = torch.cumprod(phi, dim=dim)  # prefix[d] = phi_0 ... phi_d
    suffix = torch.cumprod(phi.flip(dim), dim=dim).flip(dim)  # suffix[d] = phi_d ... phi_{n-1}
    before = torch.cat([ones, prefix.narrow(dim, 0, n - 1)], dim=dim)  # phi_0 ... phi_{d-1}
    after = torch.cat([suffix.narrow(dim, 1, n - 1), ones], dim=dim)  # phi_{d+1} ... phi_{n-1}
    return before * after


class _SplineProduct(torch.autograd.Function):
    """u (U, M, d_s), S (M, d_s, kappa, r) -> P (U, M, r) = prod_d sum_g B_g(u) S[d, g, :].

    Touches only the degree+1 non-zero knots per coordinate; saves only u (and the parameter S).
    """

    @staticmethod
    def _chunk(u: torch.Tensor, S: torch.Tensor, degree: int):
        """Shared by forward and backward: gathered rows, weights and phi for a chunk of ids."""
        M, d_s, kappa, r = S.shape
        idx, w, dw = bspline.window(u, kappa, degree)  # each (Uc, M, d_s, p+1)
        row_base = (torch.arange(M, device=u.device).view(M, 1) * d_s
                    + torch.arange(d_s, device=u.device).view(1, d_s)) * kappa  # (M, d_s)
        rows = row_base.view(1, M, d_s, 1) + idx  # (Uc, M, d_s, p+1) rows of S viewed (M d_s kappa, r)
        G = S.reshape(-1, r).index_select(0, rows.reshape(-1)).view(*rows.shape, r)  # (Uc, M, d_s, p+1, r)
        phi = torch.einsum("umdj,umdjr->umdr", w, G)  # (Uc, M, d_s, r)
        return rows, w, dw, G, phi

    @staticmethod
    def _chunk_size(S: torch.Tensor, degree: int) -> int:
        M, d_s, _, r = S.shape
        return max(1, CHUNK_ELEMENTS // (M * d_s * (degree + 1) * r))

    @staticmethod
    def forward(ctx, u: torch.Tensor, S: torch.Tensor, degree: int) -> torch.Tensor:
        U, M, d_s = u.shape
        r = S.shape[-1]
        P = u.new_empty(U, M, r)
        step = _SplineProduct._chunk_size(S, degree)
        for a in range(0, U, step):
            phi = _SplineProduct._chunk(u[a:a + step], S, degree)[-1]
            torch.prod(phi, dim=2, out=P[a:a + step])  # (Uc, M, r)
        ctx.save_for_backward(u, S)
        ctx.degree = degree
        return P

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_P: torch.Tensor):
        u, S = ctx.saved_tensors
        degree = ctx.degree
        M, d_s, kappa, r = S.shape
        grad_u = torch.empty_like(u) if ctx.needs_input_grad[0] else None
        grad_S = torch.zeros(M * d_s * kappa, r, dtype=S.dtype, device=S.device) if ctx.needs_input_grad[1] else None
        step = _SplineProduct._chunk_size(S, degree)
        for a in range(0, u.shape[0], step):
            rows, w, dw, G, phi = _SplineProduct._chunk(u[a:a + step], S, degree)
            grad_phi = grad_P[a:a + step].unsqueeze(2) * _exclusive_product(phi, dim=2)  # (Uc, M, d_s, r)
            if grad_S is not None:
                # d phi / d S[m, d, g, :] = w_g: scatter w_j * grad_phi into the p+1 rows each coordinate used
                contrib = w.unsqueeze(-1) * grad_phi.unsqueeze(3)  # (Uc, M, d_s, p+1, r)
                grad_S.index_add_(0, rows.reshape(-1), contrib.reshape(-1, r))
            if grad_u is not None:
                # d phi / d u = sum_j dw_j S[row_j, :]; contract with grad_phi over r
                g_dot = torch.einsum("umdjr,umdr->umdj", G, grad_phi)  # (Uc, M, d_s, p+1)
                grad_u[a:a + step] = (dw * g_dot).sum(-1)  # (Uc, M, d_s)
        if grad_S is not None:
            grad_S = grad_S.view(M, d_s, kappa, r)
        return grad_u, grad_S, None


def spline_product(u: torch.Tensor, S: torch.Tensor, degree: int = 2) -> torch.Tensor:
    """Steps 4-5 for a batch of seed coordinates: u (U, M, d_s), S (M, d_s, kappa, r) -> P (U, M, r)."""
    return _SplineProduct.apply(u, S, degree)


class LeviathanGenerator(nn.Module):
    """Input embedding e(i) computed from the id (SPEC §1); a drop-in for ``nn.Embedding``.

    Args:
        vocab_size: V, the vocabulary the model was built for (``bake`` returns V rows).
        hidden_size: D.
        k, seed_dim, modes, knots, rank, degree: k, d_s, M, kappa, r, spline degree.
        ln_eps: LayerNorm epsilon.
        base: digit base b; None means the smallest b with b^k >= V.
    """

    def __init__(self, vocab_size: int, hidden_size: int, k: int = 3, seed_dim: int = 128, modes: int = 8,
                 knots: int = 32, rank: int = 64, degree: int = 2, ln_eps: float = 1e-5, base: int | None = None):
        super().__init__()
        from .config import min_base

        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.k, self.seed_dim, self.modes, self.knots, self.rank = k, seed_dim, modes, knots, rank
        self.degree, self.ln_eps = degree, ln_eps
        self.base = base if base is not None else min_base(vocab_size, k)
        if self.base**k < vocab_size:
            raise ValueError(f"base {self.base} with k={k} cannot address vocab_size={vocab_size}")
        self.codebooks = nn.Parameter(torch.empty(k, self.base, seed_dim))
        self.proj = nn.Parameter(torch.empty(modes, seed_dim, seed_dim))
        self.ln_weight = nn.Parameter(torch.empty(modes, seed_dim))
        self.ln_bias = nn.Parameter(torch.empty(modes, seed_dim))
        self.spline_coeff = nn.Parameter(torch.empty(modes, seed_dim, knots, rank))
        self.out = nn.Parameter(torch.empty(modes, rank, hidden_size))
        self.reset_parameters()

    @property
    def capacity(self) -> int:
        """Ids [0, b^k) have embeddings; those >= vocab_size are room for new tokens."""
        return self.base**self.k

    @property
    def num_embeddings(self) -> int:
        return self.vocab_size

    @property
    def embedding_dim(self) -> int:
        return self.hidden_size

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Reference initialisation (SPEC §1)."""
        nn.init.normal_(self.codebooks, std=0.02)
        nn.init.normal_(self.proj, std=0.02)
        nn.init.ones_(self.ln_weight)
        nn.init.zeros_(self.ln_bias)
        nn.init.normal_(self.spline_coeff, mean=1.0, std=0.1)  # every phi starts near 1
        nn.init.normal_(self.out, std=0.02 / math.sqrt(self.modes))

    def extra_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, hidden_size={self.hidden_size}, k={self.k}, base={self.base}, "
                f"seed_dim={self.seed_dim}, modes={self.modes}, knots={self.knots}, rank={self.rank}, "
                f"degree={self.degree}")

    def seed(self, ids: torch.Tensor) -> torch.Tensor:
        """Steps 1-2: ids (U,) -> z (U, d_s), the sum of one codebook row per digit."""
        digits = to_digits(ids, self.base, self.k, check=False)  # (U, k)
        offsets = torch.arange(self.k, device=ids.device) * self.base  # row of digit j in the flat table
        flat = self.codebooks.view(self.k * self.base, self.seed_dim)  # (k b, d_s)
        return F.embedding_bag(digits + offsets, flat, mode="sum")  # (U, d_s)

    def modes_u(self, z: torch.Tensor) -> torch.Tensor:
        """Step 3: z (U, d_s) -> u (U, M, d_s) = sigmoid(LN_m(W_m z) / 2)."""
        U = z.shape[0]
        h = F.linear(z, self.proj.view(self.modes * self.seed_dim, self.seed_dim))  # (U, M d_s)
        # per-mode LayerNorm with per-mode affine == GroupNorm with one group per mode
        h = F.group_norm(h, self.modes, self.ln_weight.view(-1), self.ln_bias.view(-1), self.ln_eps)
        return torch.sigmoid(h * 0.5).view(U, self.modes, self.seed_dim)  # (U, M, d_s)

    def embed_unique(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (U,) -> embeddings (U, D), computed for every given id (no deduplication)."""
        z = self.seed(ids)  # (U, d_s)
        u = self.modes_u(z)  # (U, M, d_s)
        P = spline_product(u, self.spline_coeff, self.degree)  # (U, M, r)
        return P.reshape(P.shape[0], self.modes * self.rank) @ self.out.view(self.modes * self.rank, -1)  # (U, D)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """input_ids (...) -> (..., D). Computes each distinct id once; duplicates share it exactly."""
        check_ids(input_ids, self.base, self.k)
        uniq, inverse = torch.unique(input_ids.reshape(-1), return_inverse=True)  # (U,), (N,)
        table = self.embed_unique(uniq)  # (U, D)
        return F.embedding(inverse.view(input_ids.shape), table)  # (..., D); backward sums duplicates

    @torch.no_grad()
    def bake(self, num_rows: int | None = None, batch_size: int = 8192) -> torch.Tensor:
        """The full (num_rows, D) table, num_rows defaulting to vocab_size (at most b^k)."""
        n = self.vocab_size if num_rows is None else num_rows
        if n > self.capacity:
            raise ValueError(f"cannot bake {n} rows: the generator addresses only b^k = {self.capacity} ids")
        ids = torch.arange(n, device=self.codebooks.device)
        return torch.cat([self.embed_unique(ids[a:a + batch_size]) for a in range(0, n, batch_size)])
