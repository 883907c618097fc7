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

Options (issue 29: the versions of the generator a reviewer names first; the reference stays the default):

- ``init="table_rms"``: after the reference init, W^out is scaled so that the RMS of e(i) over a fixed probe of
  ids (``probe_ids``) equals ``table_std`` (a 0.02-initialised table row's). Measured, not assumed: the
  reference start is ~0.24 per id (docs/DESIGN.md §2), because every phi starts near 1 and step 6 sums M r terms.
- ``center=True``: a fixed buffer ``center`` (D,), the mean of e(i) over the probe at init, is subtracted from
  every output, removing the component every id shares at the start (~61% of the energy). Still a fixed
  function of the id, so baking is unchanged. With ``table_rms`` too: centred first, then scaled.
- ``norm=True``: ``output_norm.OutputNorm`` on the output (gain initialised at ``table_std``), after the above.
- ``form="khronos"``: the authors' earlier KHRONOS form as issue 29 names it: a learnable knot scale per (mode,
  coordinate) (``knot_log_scale`` (M, d_s), 0 at init: the knot grid of step 4 dilated about 1/2 by
  exp(knot_log_scale), i.e. the spline reads 1/2 + (u - 1/2) exp(-knot_log_scale), clamped into [0, 1]); an
  unnormalised basis (no renormalisation where the knots outside [0, 1] are missing, so the basis sums to less
  than 1 within 1.5 spacings of either end); and a bias (D,) on W^out, 0 at init. The fused kernel runs it
  exactly: the grid gains one knot with a zero coefficient at each end (``_khronos_spline_input``), where the
  normalised basis of the longer grid equals the unnormalised basis of the paper's.

Precision: a generator whose parameters are bf16 or fp16 (``model.to(torch.bfloat16)``, ``from_pretrained(...,
dtype=torch.bfloat16)``) computes in fp32 inside, with fp32 copies of its parameters, and returns its parameters'
dtype (``_embed_in_float32``): the product of d_s = 128 factors in bf16 is not the function that was trained or
tested. For the same reason, under ``torch.autocast`` (the training loop's mixed precision, ``dtype: auto`` on CUDA)
the generator runs with autocast off, in its parameters' fp32, and returns fp32 (``embed_unique``): the table it
replaces returns fp32 rows under autocast too. Before, step 3's matmul ran in bf16 and ``_ModeActivation``'s
backward met a bf16 input with fp32 gradients ("expected scalar type BFloat16 but found Float" on an H200, every
leviathan training step under bf16 autocast; a CPU's kernels took the mixed dtypes, and the output came back bf16
and rounded: tests/unit/test_generator_precision.py).

Footguns: ids outside [0, b^k) raise (they would alias another token's digits); the spline operator is
once-differentiable (no double backward); the first CPU call on a machine builds the fused kernel
(seconds; ``LEVIATHAN_SPLINE_KERNEL=eager`` forces the eager path); ``reset_parameters`` with ``table_rms`` or
``center`` runs the generator on the probe (16,384 ids at most), so building one costs a forward of that many.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from ..errors import ArgumentValueError
from ..integers import as_int
from .digits import as_lookup_ids, check_ids, check_unique_ids, codebook_sum
from .generator_size import check_size, digits_problem, features_problem
from .output_norm import OutputNorm
from .spline_op import spline_product

GENERATOR_INITS = ("reference", "table_rms")
GENERATOR_FORMS = ("paper", "khronos")
PROBE_IDS = 16_384  # ids the init-time calibration (table_rms, center) measures the output on
LOW_PRECISION = (torch.bfloat16, torch.float16)  # parameter dtypes whose forward runs in fp32 (_embed_in_float32)


def probe_ids(num_ids: int, device=None) -> torch.Tensor:
    """The ids the calibration measures: all of [0, num_ids) up to PROBE_IDS, else PROBE_IDS evenly spaced ones.
    ``num_ids`` is a whole number >= 1 (-1 ended in torch.arange's error, True probed one id; round 22)."""
    from ..value_rules import check_whole

    check_whole("probe_ids", "num_ids", num_ids, 1, fix="pass the number of ids to probe (the vocabulary size)")
    if num_ids <= PROBE_IDS:
        return torch.arange(num_ids, device=device)
    return torch.linspace(0, num_ids - 1, PROBE_IDS, device=device, dtype=torch.float64).round().long().unique()


class LeviathanGenerator(nn.Module):
    """Input embedding e(i) computed from the id (docs/DESIGN.md §2); a drop-in for ``nn.Embedding``.

    Args:
        vocab_size: V, the vocabulary the model was built for (``bake`` returns V rows).
        hidden_size: D.
        k, seed_dim, modes, knots, rank, degree: k, d_s, M, kappa, r, spline degree.
        ln_eps: LayerNorm epsilon.
        base: digit base b; None means the smallest b with b^k >= V.
        init, center, norm, form: the options of the module docstring ("reference", False, False, "paper": the
            paper's generator).
        table_std: the table row std that ``table_rms`` and ``norm`` start at (``initializer_range``).
        norm_eps: epsilon of the output norm.
    """

    def __init__(self, vocab_size: int, hidden_size: int, k: int = 3, seed_dim: int = 128, modes: int = 8,
                 knots: int = 32, rank: int = 64, degree: int = 2, ln_eps: float = 1e-5, base: int | None = None,
                 init: str = "reference", center: bool = False, norm: bool = False, form: str = "paper",
                 table_std: float = 0.02, norm_eps: float = 1e-6):
        """Parameters: the paper's hyperparameters (docs/DESIGN.md §2) and the options of issue 29, one each as
        ``ModelConfig`` holds them."""
        super().__init__()
        _check_settings(vocab_size=vocab_size, hidden_size=hidden_size, k=k, seed_dim=seed_dim, modes=modes,
                        knots=knots, rank=rank, degree=degree, ln_eps=ln_eps, base=base, center=center, norm=norm,
                        table_std=table_std, norm_eps=norm_eps)
        if init not in GENERATOR_INITS:
            raise ArgumentValueError(f"init must be one of {GENERATOR_INITS}, got {init!r}; pass one of those")
        if form not in GENERATOR_FORMS:
            raise ArgumentValueError(f"form must be one of {GENERATOR_FORMS}, got {form!r}; pass one of those")
        self.init, self.form, self.table_std, self.norm_eps = init, form, float(table_std), float(norm_eps)
        from .config import min_base

        # kept as plain int and float: a numpy scalar (modes=np.int64(2), ln_eps=np.float32(1e-5)) reached adoption's
        # config.json, which json could not write, leaving it cut short (issue 30 round 18, G82, G83)
        vocab_size, hidden_size, k, seed_dim, modes, knots, rank, degree, base = map(
            as_int, (vocab_size, hidden_size, k, seed_dim, modes, knots, rank, degree, base))
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.k, self.seed_dim, self.modes, self.knots, self.rank = k, seed_dim, modes, knots, rank
        self.degree, self.ln_eps = degree, float(ln_eps)
        self.base = base if base is not None else min_base(vocab_size, k)
        if self.base**k < vocab_size:
            raise ArgumentValueError(f"base {self.base} with k={k} cannot address vocab_size={vocab_size}; pass a "
                                     f"larger base (or base=None: the smallest that does) or a larger k")
        self.codebooks = nn.Parameter(torch.empty(k, self.base, seed_dim))
        self.proj = nn.Parameter(torch.empty(modes, seed_dim, seed_dim))
        self.ln_weight = nn.Parameter(torch.empty(modes, seed_dim))
        self.ln_bias = nn.Parameter(torch.empty(modes, seed_dim))
        self.spline_coeff = nn.Parameter(torch.empty(modes, seed_dim, knots, rank))
        self.out = nn.Parameter(torch.empty(modes, rank, hidden_size))
        khronos = form == "khronos"
        self.knot_log_scale = nn.Parameter(torch.empty(modes, seed_dim)) if khronos else None
        self.out_bias = nn.Parameter(torch.empty(hidden_size)) if khronos else None
        # persistent: a fixed function of the init, saved with the weights (None when not centred)
        self.register_buffer("center", torch.zeros(hidden_size) if center else None)
        self.out_norm = OutputNorm(hidden_size, table_std, norm_eps) if norm else None
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self, calibrate: bool = True) -> None:
        """Reference initialisation (docs/DESIGN.md §2), then the options' calibration (``calibration``; skipped
        with ``calibrate=False``, for a loader that writes its result itself; 'no' read as true before round 22)."""
        if not isinstance(calibrate, bool):
            from ..value_rules import check_switches

            check_switches("LeviathanGenerator.reset_parameters", calibrate=calibrate)
        nn.init.normal_(self.codebooks, std=0.02)
        nn.init.normal_(self.proj, std=0.02)
        nn.init.ones_(self.ln_weight)
        nn.init.zeros_(self.ln_bias)
        nn.init.normal_(self.spline_coeff, mean=1.0, std=0.1)  # every phi starts near 1
        nn.init.normal_(self.out, std=0.02 / math.sqrt(self.modes))
        if self.knot_log_scale is not None:
            nn.init.zeros_(self.knot_log_scale)  # knot scale 1: the paper's grid
            nn.init.zeros_(self.out_bias)
        if self.out_norm is not None:
            self.out_norm.reset_parameters()
        if not calibrate:
            return
        out, center = self.calibration()
        self.out.copy_(out)
        if self.center is not None:
            self.center.copy_(center)

    @torch.no_grad()
    def calibration(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(W^out, center) that the ``table_rms`` and ``center`` options start from, given the other parameters.

        Measured on the probe ids (``probe_ids``) with the parameters as they are: center = mean of e(i) (before
        any centring), and for ``table_rms`` the factor s = table_std / RMS(e(i) - center) by which W^out (and the
        center with it) is scaled. Returns the current W^out and center when neither option is on. Pure: the
        caller writes the result (Hugging Face's loader must be able to skip tensors it loaded).
        """
        out = self.out.detach().clone()
        if self.init == "reference" and self.center is None:
            return out, None
        if self.out.device.type == "meta":  # nothing to measure yet (a loader fills the tensors)
            return out, (torch.zeros_like(self.center) if self.center is not None else None)
        ids = probe_ids(min(self.vocab_size, self.capacity), self.codebooks.device)
        e = torch.cat([self._step6(self._steps_1_5(ids[a:a + 4096])) for a in range(0, ids.numel(), 4096)])
        center = e.mean(0) if self.center is not None else None  # (D,)
        if center is not None:
            e = e - center
        if self.init == "table_rms":
            s = self.table_std / e.pow(2).mean().sqrt().clamp_min(torch.finfo(e.dtype).tiny)
            out.mul_(s)
            center = center * s if center is not None else None
        return out, center

    def seed(self, ids: torch.Tensor) -> torch.Tensor:
        """Steps 1-2, z(i) = C_1[i_1] + ... + C_k[i_k]: ids (U,) -> z (U, d_s), one codebook row per base-b digit.
        The ids are checked as ``embed_unique``'s (round 22: a 2-D tensor ended in torch's error, an id past b^k
        aliased another's digits); the forward path calls ``codebook_sum`` on ids it checked."""
        check_unique_ids(ids, self.base, self.k, "LeviathanGenerator.seed")
        return codebook_sum(ids, self.codebooks)  # (U, d_s)

    def modes_u(self, z: torch.Tensor) -> torch.Tensor:
        """Step 3, u_m = sigmoid(LN_m(W_m z) / 2): z (U, d_s) -> u (U, M, d_s) in (0, 1). Another shape of z is
        refused naming it (torch's "mat1 and mat2 shapes cannot be multiplied" before round 22): O(1)."""
        if not isinstance(z, torch.Tensor) or z.dim() != 2 or z.shape[1] != self.seed_dim:
            from ..errors import ArgumentValueError

            shown = tuple(z.shape) if isinstance(z, torch.Tensor) else type(z).__name__
            raise ArgumentValueError(f"LeviathanGenerator.modes_u: z must be a (U, {self.seed_dim}) tensor of seeds "
                                     f"(U, seed_dim), got {shown}; pass what seed(ids) returns")
        U = z.shape[0]
        h = F.linear(z, self.proj.view(self.modes * self.seed_dim, self.seed_dim))  # (U, M d_s)
        h = h.view(U, self.modes, self.seed_dim)  # (U, M, d_s)
        if h.device.type == "cpu" and not torch.compiler.is_compiling():
            return _ModeActivation.apply(h, self.ln_weight, self.ln_bias, self.ln_eps)  # (U, M, d_s)
        # Elsewhere the same math in plain ops: on CUDA, under torch.compile (aot_eager and inductor alike), the
        # autograd.Function's backward returned a zero gradient for h, so codebooks, proj and the LayerNorm never
        # trained (an H200, torch 2.11, 2026-12-04); GPU layer_norm is fast and a compiler fuses these anyway.
        x_hat = F.layer_norm(h, (self.seed_dim,), eps=self.ln_eps)  # (U, M, d_s)
        return torch.sigmoid((x_hat * self.ln_weight + self.ln_bias) * 0.5)  # (U, M, d_s)

    def spline_input(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """What step 4 evaluates: (u (U, M, d_s), S (M, d_s, kappa', r)); the paper's form passes both through."""
        if self.form == "paper":
            return u, self.spline_coeff
        return _khronos_spline_input(u, self.knot_log_scale, self.spline_coeff)

    def _steps_1_5(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (U,) -> P (U, M, r), steps 1-5."""
        z = codebook_sum(ids, self.codebooks)  # (U, d_s), ids checked         steps 1-2 (``seed``)
        u = self.modes_u(z)  # (U, M, d_s)                                       step 3
        u, S = self.spline_input(u)
        return spline_product(u, S, self.degree)  # (U, M, r)                    steps 4-5: P_m[c] = prod_d phi_{m,d,c}

    def _step6(self, P: torch.Tensor) -> torch.Tensor:
        """Step 6, e(i) = sum_m P_m W^out_m (+ the KHRONOS bias): P (U, M, r) -> (U, D), one (M r -> D) matmul."""
        e = P.reshape(P.shape[0], self.modes * self.rank) @ self.out.view(self.modes * self.rank, -1)  # (U, D)
        return e if self.out_bias is None else e + self.out_bias

    def embed_unique(self, ids: torch.Tensor) -> torch.Tensor:
        """Steps 1-6 for every given id (no deduplication), then the options' centring and norm: ids (U,) -> (U, D).
        Parameters in bf16 or fp16 are computed in fp32 (``_embed_in_float32``); the output has their dtype.

        ``ids`` must be a 1-D integer tensor of ids in [0, b^k): a (1, 2) tensor ended in torch's "input has to be 1D
        or 2D Tensor, but got Tensor of dimension 3", and an id past b^k aliased another id's digits without a word
        (issue 30 round 22, S477). Shape and dtype are checked always (O(1)); the range outside torch.compile only
        (it reads values). ``forward`` and ``bake`` pass ids they checked or made to ``_embed``."""
        ids = as_lookup_ids(ids)  # uint16 ids (round 25, Y79)
        check_unique_ids(ids, self.base, self.k, "LeviathanGenerator.embed_unique")
        return self._embed(ids)

    def _embed(self, ids: torch.Tensor) -> torch.Tensor:
        """``embed_unique`` of ids already checked: ids (U,) -> (U, D)."""
        if self.codebooks.dtype in LOW_PRECISION:
            return _embed_in_float32(self, ids)
        if torch.is_autocast_enabled(ids.device.type):  # steps 1-6 in fp32, not in autocast's dtype (docstring)
            with torch.autocast(ids.device.type, enabled=False):
                return self._steps_1_6(ids)  # (U, D) fp32
        return self._steps_1_6(ids)

    def _steps_1_6(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (U,) -> (U, D): steps 1-6, then the options' centring and norm, in the parameters' dtype."""
        e = self._step6(self._steps_1_5(ids))  # (U, D)
        if self.center is not None:
            e = e - self.center
        return e if self.out_norm is None else self.out_norm(e)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """input_ids (...) -> (..., D). Computes each distinct id once; duplicates share it exactly."""
        if getattr(input_ids, "is_meta", False):  # torch's ".item() cannot be called on meta tensors" (round 15, B135)
            from ..meta_device import refuse_meta

            refuse_meta(input_ids, "the ids given to LeviathanGenerator", "pass ids with values (on the CPU or a GPU)")
        input_ids = as_lookup_ids(input_ids)  # uint16, the token files' dtype (round 25, Y79)
        uniq, inverse = _distinct_ids(input_ids, self.base, self.k)  # (U,), (N,)
        table = self._embed(uniq)  # (U, D), checked by _distinct_ids
        return F.embedding(inverse.view(input_ids.shape), table)  # (..., D); backward sums duplicates

    @torch.no_grad()
    def bake(self, num_rows: int | None = None, batch_size: int = 8192) -> torch.Tensor:
        """The full (num_rows, D) table, num_rows defaulting to vocab_size (at most b^k), ``batch_size`` ids at a time.

        Both are whole numbers >= 1 (num_rows at most b^k), refused in one line otherwise: 0, -1 and 2.5 ended in
        torch's errors and ``True`` baked one row without a word (issue 30 round 22, S225, S235-S237, S480, S481).
        A generator on the meta device is refused: it has no values to bake, and ``adopt(meta model)
        .save_pretrained`` (which bakes the table it writes) was torch's raw "unknown device type for autocast"
        (issue 30 round 24, W650)."""
        from ..meta_device import refuse_meta
        from ..value_rules import check_whole

        api = "LeviathanGenerator.bake"
        refuse_meta(self.codebooks, "the LeviathanGenerator to bake (or save, which bakes its table)",
                    "build the model off the meta device (or load its weights: load_adopted, from_pretrained, "
                    "to_empty and init), then bake or save it")
        n = self.vocab_size if num_rows is None else check_whole(
            api, "num_rows", num_rows, 1, self.capacity,
            f"the generator addresses ids [0, b^k = {self.capacity:,}); None bakes vocab_size ({self.vocab_size:,})")
        batch_size = check_whole(api, "batch_size", batch_size, 1,
                                 fix="pass the ids per batch, e.g. 8192 (the default)")
        ids = torch.arange(n, device=self.codebooks.device)
        return torch.cat([self._embed(ids[a:a + batch_size]) for a in range(0, n, batch_size)])

    def settings(self) -> dict:
        """The keyword arguments that rebuild this generator, vocab_size and hidden_size aside (what adoption
        records in a model's config)."""
        return dict(k=self.k, seed_dim=self.seed_dim, modes=self.modes, knots=self.knots, rank=self.rank,
                    degree=self.degree, ln_eps=self.ln_eps, base=self.base, init=self.init,
                    center=self.center is not None, norm=self.out_norm is not None, form=self.form,
                    table_std=self.table_std, norm_eps=self.norm_eps)

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
                f"degree={self.degree}" + (f", init={self.init}" if self.init != "reference" else "")
                + (", center=True" if self.center is not None else "") + (f", form={self.form}" if self.form != "paper"
                                                                         else ""))



# ---- helpers of forward ---------------------------------------------------------------------------
class _EmbedUnique(nn.Module):
    """``generator.embed_unique`` as a module's forward, so ``functional_call`` can run it with other tensors."""

    def __init__(self, generator: LeviathanGenerator):
        super().__init__()
        self.generator = generator

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.generator._embed(ids)


def _embed_in_float32(generator: LeviathanGenerator, ids: torch.Tensor) -> torch.Tensor:
    """``embed_unique`` of a generator whose parameters are bf16/fp16, computed with fp32 copies of them (autocast
    off) and returned in the parameters' dtype: ids (U,) -> (U, D). Gradients reach the low-precision parameters
    through the casts. Why: step 5 multiplies d_s factors near 1, and bf16 keeps 8 bits of each, so the product
    in bf16 is not the function that was trained. Measured (docs/USING.md §2; paper defaults, V 200,019, D 256, 2,048
    ids, RMS of the change over RMS of the fp32 output): bf16 weights computed in bf16 0.060, in fp32 0.018 (the
    weights' own rounding); fp16 0.011 and 0.0023."""
    dtype = generator.codebooks.dtype
    wrapper = _EmbedUnique(generator)
    tensors = {name: t.float() for name, t in [*wrapper.named_parameters(), *wrapper.named_buffers()]}
    with torch.autocast(ids.device.type, enabled=False):
        out = torch.func.functional_call(wrapper, tensors, (ids,))  # (U, D) fp32
    return out.to(dtype)


def _khronos_spline_input(u: torch.Tensor, knot_log_scale: torch.Tensor,
                          S: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The KHRONOS form's step 4 as the paper's operator sees it: u (U, M, d_s) -> (u', S') for a longer grid.

    Knot scale: the grid of coordinate (m, d) dilated about 1/2 by lambda = exp(knot_log_scale[m, d]) reads
    u~ = 1/2 + (u - 1/2) / lambda, clamped into [0, 1] (beyond, the spline is held at its end value).
    Unnormalised basis: with kappa knots on [0, 1] (spacing h = 1/(kappa-1)), B_g(u~) = beta((u~ - t_g)/h) with no
    renormalisation, so near the ends the missing knots -1 and kappa simply contribute nothing. That equals the
    normalised basis of a grid with one more knot at each end whose coefficients are 0: kappa + 2 knots on
    [0, 1], u' = (u~ (kappa - 1) + 1) / (kappa + 1) (u~ = 0 lands on the extra knot 0's neighbour, knot 1), and
    within [1/(kappa+1), kappa/(kappa+1)] every basis function of degree <= 3 that is non-zero exists on the
    longer grid, so the operator's renormalisation divides by exactly 1. The zero rows are constants (F.pad),
    so they never train.
    """
    kappa = S.shape[2]
    u = (0.5 + (u - 0.5) * torch.exp(-knot_log_scale)).clamp(0.0, 1.0)  # (U, M, d_s)
    u = (u * (kappa - 1) + 1.0) / (kappa + 1)  # (U, M, d_s) on the (kappa + 2)-knot grid
    return u, F.pad(S, (0, 0, 1, 1))  # S (M, d_s, kappa + 2, r), zero coefficients at both ends


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
    ~3x more here: CPU group_norm's backward is slow at these shapes. Used in eager CPU code only
    (``modes_u``): on CUDA under torch.compile its backward gave h a zero gradient.
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


# table_std's range: the window of table root mean squares a fit can follow (``hf.adoption_table``'s MIN_RMS, MAX_RMS)
TABLE_STD_RANGE = (1e-15, 1e4)


def _refused(problem: str, fix: str) -> ArgumentValueError:
    """The ArgumentValueError ``PROBLEM; FIX`` of a generator setting (a plain ValueError with no fix before issue 30
    round 32, AC373); ``.problem`` holds the line without the fix, for a caller that gives its own (adoption's check of
    an edited config.json: ``adoption._check_saved_values``)."""
    error = ArgumentValueError(f"{problem}; {fix}")
    error.problem = problem
    return error


def _check_epsilons(ln_eps: float, norm_eps: float) -> None:
    """ValueError unless each epsilon lies in the range ``ModelConfig`` gives its own (``generator_ln_eps``,
    ``rms_norm_eps``, from which a native model's ``norm_eps`` comes: ``model.config.FLOAT_RANGES``). Adoption's and
    the Python API's generators checked only "> 0": ``ln_eps=1e30`` flattened every seed's LayerNorm, all 300 baked
    rows one row, and ``norm_eps=1e30`` made every output about 2e-18, without a word (issue 30 round 25, Y667,
    Y668). An epsilon guards a division by a spread; far above any spread, it replaces it."""
    from .config import FLOAT_RANGES

    for name, value, twin in (("ln_eps", ln_eps, "generator_ln_eps"), ("norm_eps", norm_eps, "rms_norm_eps")):
        low, high = FLOAT_RANGES[twin]
        if not low <= value <= high:
            raise _refused(f"{name} must be in [{low:g}, {high:g}] (an epsilon: 1e-5 or 1e-6 is the usual, as "
                           f"ModelConfig's {twin}), got {value!r}: above the spread it guards it flattens every "
                           f"output", "pass one in that range")


def _check_settings(**settings) -> None:
    """ArgumentValueError (a UserError that is still the ValueError it was; a plain ValueError with no fix before
    issue 30 round 32, AC373) naming the setting, its valid range and the fix unless every size is a positive integer
    (knots >= 2, degree 1-3, base None or >= 2), every epsilon and ``table_std`` a positive finite number and
    ``center`` / ``norm`` booleans: checked here, where every way in (ModelConfig, adoption, the Python API) meets, because a NaN or
    negative epsilon builds a model whose every output is NaN, and ``center="no"`` would read as true."""
    def whole(name: str, low: int, high: int | None = None) -> None:
        value = settings[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low or \
                (high is not None and value > high):
            bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
            raise _refused(f"{name} must be an integer {bounds}, got {value!r}", f"pass {name}=N with N {bounds}")

    for name in ("vocab_size", "hidden_size", "k", "seed_dim", "modes", "rank"):
        whole(name, 1)
    whole("knots", 2)
    whole("degree", 1, 3)
    if settings["base"] is not None:
        whole("base", 2)
    for name in ("ln_eps", "norm_eps", "table_std"):
        value = settings[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
            raise _refused(f"{name} must be a finite number > 0, got {value!r}", "pass a positive number")
    low, high = TABLE_STD_RANGE  # round 15 (B273): 1e300 passed as "finite > 0" and every embedding came out NaN
    if not low <= settings["table_std"] <= high:
        raise _refused(f"table_std must be in [{low:g}, {high:g}] (a table row's std; 0.02 is the usual), got "
                       f"{settings['table_std']!r}: beyond that float32 squares overflow or underflow",
                       "pass one in that range")
    _check_epsilons(settings["ln_eps"], settings["norm_eps"])
    from ..value_rules import switch_problem

    for name in ("center", "norm"):  # numpy's bool is one too, as its ints and floats are numbers above (round 15,
        if switch_problem(settings[name]) is not None:  # B270): value_rules' rule, ModelConfig's too (round 28, U19)
            raise _refused(f"{name} must be true or false, got {settings[name]!r}",
                           f"pass {name}=True or {name}=False")
    check_size(**{k: settings[k] for k in ("vocab_size", "hidden_size", "k", "seed_dim", "modes", "knots", "rank",
                                           "base")})
    problem = digits_problem(settings["vocab_size"], settings["k"], settings["base"], settings["knots"])
    if problem is not None:  # a base or knots past what V ids use (round 27, S28, S29)
        raise ArgumentValueError(problem)
    problem = features_problem(settings["vocab_size"], settings["modes"], settings["rank"])
    if problem is not None:  # modes or rank past what V ids use (round 28, U71, U182)
        raise ArgumentValueError(problem)

