"""The Leviathan generator: a token's input embedding as a continuous function of its id (docs/DESIGN.md §2,
paper steps 1-6).

For token i with base-b digits (i_1..i_k), for U distinct ids at a time:

    z      = C_1[i_1] + ... + C_k[i_k]                        step 2, codebook sum      (U, d_s)
    u_m    = sigmoid(LN_m(W_m z) / 2)                          step 3, per mode          (U, M, d_s) in (0,1)
    phi    = sum_g B_g(u_{m,d}) S_m[d, g, c]                   step 4, B-spline          (U, M, d_s, r)
    P_m[c] = prod_d phi_{m,d,c}                                step 5, separable product (U, M, r)
    e(i)   = sum_m P_m W^out_m                                 step 6, output            (U, D)

``LeviathanGenerator`` below runs these steps in this order. Steps 4-5 are one operator,
``spline_op.spline_product``: the fused CPU kernel, its eager fallback, torch.compile registration, memory
and numerics are described there. ``forward`` computes each distinct id of a batch once and gathers
(the generator is a pure function of the id, so this is exact).

Parameters (names match the reference test vectors, ``tests/unit/test_generator.py``): ``codebooks``
(k, b, d_s), ``proj`` (M, d_s, d_s) applied as ``z @ proj[m].T``, ``ln_weight``/``ln_bias`` (M, d_s),
``spline_coeff`` (M, d_s, kappa, r), ``out`` (M, r, D).

Footguns: ids outside [0, b^k) raise (they would alias another token's digits); the spline operator is
once-differentiable (no double backward); the first CPU call on a machine builds the fused kernel
(seconds; ``LEVIATHAN_SPLINE_KERNEL=eager`` forces the eager path).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from .digits import check_ids, codebook_sum
from .spline_op import spline_product


class LeviathanGenerator(nn.Module):
    """Input embedding e(i) computed from the id (docs/DESIGN.md §2); a drop-in for ``nn.Embedding``.

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

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Reference initialisation (docs/DESIGN.md §2)."""
        nn.init.normal_(self.codebooks, std=0.02)
        nn.init.normal_(self.proj, std=0.02)
        nn.init.ones_(self.ln_weight)
        nn.init.zeros_(self.ln_bias)
        nn.init.normal_(self.spline_coeff, mean=1.0, std=0.1)  # every phi starts near 1
        nn.init.normal_(self.out, std=0.02 / math.sqrt(self.modes))

    def seed(self, ids: torch.Tensor) -> torch.Tensor:
        """Steps 1-2, z(i) = C_1[i_1] + ... + C_k[i_k]: ids (U,) -> z (U, d_s), one codebook row per base-b digit."""
        return codebook_sum(ids, self.codebooks)  # (U, d_s)

    def modes_u(self, z: torch.Tensor) -> torch.Tensor:
        """Step 3, u_m = sigmoid(LN_m(W_m z) / 2): z (U, d_s) -> u (U, M, d_s) in (0, 1)."""
        U = z.shape[0]
        h = F.linear(z, self.proj.view(self.modes * self.seed_dim, self.seed_dim))  # (U, M d_s)
        return _ModeActivation.apply(h.view(U, self.modes, self.seed_dim), self.ln_weight, self.ln_bias,
                                     self.ln_eps)  # (U, M, d_s)

    def embed_unique(self, ids: torch.Tensor) -> torch.Tensor:
        """Steps 1-6 for every given id (no deduplication): ids (U,) -> embeddings (U, D)."""
        z = self.seed(ids)  # (U, d_s)                                           steps 1-2
        u = self.modes_u(z)  # (U, M, d_s)                                       step 3
        P = spline_product(u, self.spline_coeff, self.degree)  # (U, M, r)       steps 4-5: P_m[c] = prod_d phi_{m,d,c}
        # step 6, e(i) = sum_m P_m W^out_m: the M modes flattened into one (M r -> D) matmul
        return P.reshape(P.shape[0], self.modes * self.rank) @ self.out.view(self.modes * self.rank, -1)  # (U, D)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """input_ids (...) -> (..., D). Computes each distinct id once; duplicates share it exactly."""
        uniq, inverse = _distinct_ids(input_ids, self.base, self.k)  # (U,), (N,)
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

    def extra_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, hidden_size={self.hidden_size}, k={self.k}, base={self.base}, "
                f"seed_dim={self.seed_dim}, modes={self.modes}, knots={self.knots}, rank={self.rank}, "
                f"degree={self.degree}")



# ---- helpers of forward ---------------------------------------------------------------------------
@torch.compiler.disable
def _distinct_ids(input_ids: torch.Tensor, base: int, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Range check, then input_ids (...) -> distinct ids (U,) and each position's index into them (N,).

    Kept out of torch.compile graphs on purpose: the check reads values (a graph break anyway) and U depends on
    the values, so compiled code starts after it, with U as a dynamic size.
    """
    check_ids(input_ids, base, k)
    return torch.unique(input_ids.reshape(-1), return_inverse=True)


class _ModeActivation(torch.autograd.Function):
    """h (U, M, d_s), weight/bias (M, d_s) -> u = sigmoid((LN(h) * weight + bias) / 2), LN over d_s per mode.

    One function so that autograd keeps only h, the LayerNorm statistics and u (x_hat is recomputed
    from h in backward). The same math as ``F.group_norm`` (one group per mode) + ``sigmoid``, which cost
    ~3x more here: CPU group_norm's backward is slow at these shapes.
    """

    @staticmethod
    def forward(ctx, h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
        x_hat, mean, rstd = torch.native_layer_norm(h, (h.shape[-1],), None, None, eps)  # (U, M, d_s), (U, M, 1) x2
        u = x_hat.mul_(weight).add_(bias).mul_(0.5).sigmoid_()  # in place of x_hat
        ctx.save_for_backward(h, mean, rstd, weight, u)
        return u

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_u: torch.Tensor):
        h, mean, rstd, weight, u = ctx.saved_tensors
        grad_y = grad_u * u * (1.0 - u) * 0.5  # d sigmoid(y / 2) / dy = u (1 - u) / 2
        x_hat = (h - mean).mul_(rstd)
        grad_weight = (grad_y * x_hat).sum(0) if ctx.needs_input_grad[1] else None
        grad_bias = grad_y.sum(0) if ctx.needs_input_grad[2] else None
        grad_h = None
        if ctx.needs_input_grad[0]:
            grad_h = torch.ops.aten.native_layer_norm_backward(grad_y.mul_(weight), h, (h.shape[-1],), mean, rstd,
                                                               None, None, [True, False, False])[0]
        return grad_h, grad_weight, grad_bias, None
