"""Scaling analysis (docs/DESIGN.md §7): fit L(N) = E + A N^(-alpha) to dense runs, invert it for other runs.

The paper's isoparametric claim ("leviathan behaves like a dense model with 1.47x-2.11x its parameters") comes from
exactly this: fit the dense models' validation loss against their parameter count, then ask which dense size N_eq
the fit says would reach a leviathan run's loss. The multiplier is N_eq / N_leviathan.

Fitting. Least squares in loss space with x = log N as the regressor: ``L = E + exp(c - alpha * (x - x0))`` with x0
the mean log size, so the parameters are O(1) whatever the units of N (A = exp(c + alpha * x0)). For a fixed alpha
the model is linear in (E, e^c), so the fit is a one-dimensional search over alpha (variable projection: a log grid
over [1e-4, 5], then a bounded scalar refinement) with the linear part solved in closed form under the bounds
0 <= E < min(L) and A >= 0: no starting guess, no bad local minimum of (E, A, alpha) jointly. The point estimate is
then polished by scipy's ``curve_fit`` (same parametrisation), kept only if it lowers the squared error.

Confidence intervals: a bootstrap over runs (resample the (N, L) points with replacement and refit), stratified by
size when every size has at least two runs; otherwise draws with fewer than three distinct sizes are redrawn (the
number of redraws is reported). Percentile intervals (``ci`` = 0.95 -> 2.5th and 97.5th percentiles).

Inverting. N_eq = (A / (L - E))^(1/alpha). A loss at or below E is reached by no dense size according to the fit:
N_eq is infinite and flagged ``below_irreducible``; N_eq outside the fitted range of sizes is flagged
``extrapolated``.

Identification. A ladder whose losses barely bend (or span too few sizes) fits equally well with E near 0 and a
tiny alpha as with E near the smallest loss and a large alpha; every dense-equivalent size read off the point
estimate is then one of many. ``PowerLawFit.unidentified`` says so from the bootstrap: alpha's interval spanning
more than ``ALPHA_RATIO_IDENTIFIED`` (a factor of 4 in alpha is one in the exponent of every multiplier), or E's
interval covering more than half of [0, min L). Losses that rise with size (a positive least-squares slope against
ln N) are no falling power law at all: the fit sits at alpha's bound with intervals of zero width, which read as
certainty (issue 30 round 18, F190); that is a reason too. The report prints the reasons.

Footguns: a fit on fewer than 4 sizes has no residual degrees of freedom worth the name; the bootstrap interval
then mostly says "we don't know" and the report says so. Quantiles of draws that include infinity use the
inverted-CDF rule (no interpolation between a finite draw and infinity).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from ...value_rules import bootstrap_problem, few_draws, level_percent
from ...errors import UserError
from .records import Record, inline
from ..machinery.results import DEFAULT_LADDER, ResultRow, check_typed_rows

ALPHA_BOUNDS = (1e-4, 5.0)
ALPHA_RATIO_IDENTIFIED = 4.0  # alpha's bootstrap interval hi / lo above this: the exponent is not identified
RISING_SLOPE = 1e-9  # nats per e-fold of N: above it the losses rise with size (below: flat, up to rounding)
E_SHARE_IDENTIFIED = 0.5  # E's bootstrap interval wider than this share of min L: E is not identified


def power_law(N, E: float, A: float, alpha: float):
    """L(N) = E + A N^(-alpha) (vectorised). A size that is not a finite number > 0 is refused: N=-1 returned NaN
    without a word, while ``fit_power_law`` and ``dense_equivalent`` refuse such sizes (issue 30 round 21, P455)."""
    sizes = np.asarray(N, dtype=float)
    if not np.all(np.isfinite(sizes) & (sizes > 0)):
        bad = float(sizes[~(np.isfinite(sizes) & (sizes > 0))].ravel()[0])
        raise UserError(f"power_law: N: a parameter count must be a finite number > 0, got {bad!r}; pass the "
                        f"models' sizes (N^-alpha of a size <= 0 is no loss)")
    for name, value, positive, what in (("E", E, False, "the irreducible loss"), ("A", A, True, "the scale"),
                                        ("alpha", alpha, True, "the exponent: a loss falling with size")):
        problem = law_value_problem(value, positive)
        if problem is not None:
            raise UserError(f"power_law: {name}: {problem} ({what}, as every fit holds it); pass the fit's values "
                            f"(fit.E, fit.A, fit.alpha)")
    return E + A * np.power(sizes, -alpha)


def law_value_problem(value, positive: bool) -> str | None:
    """Why ``value`` (a number, or an array of bootstrap draws) is not a finite number > 0 (``positive``) or >= 0;
    a bool or a text is no number. ``power_law`` took E nan (nan), A inf (inf), alpha -0.5 (a loss of 1001 growing with
    size) and E -5 (a negative loss), no word; the fits hold E in [0, min L), A > 0, alpha > 0 (issue 30 round 22,
    S617-S620). ``dense_equivalent`` took the loss True as 1.0 (S623)."""
    from ...value_rules import check_switches

    check_switches("law_value_problem", positive=positive)  # 'no' was true (round 30, Y621's kind)
    problem = not_numbers(value)
    if problem is not None:
        return problem
    values = np.asarray(value)
    bad = ~np.isfinite(values) | ((values <= 0) if positive else (values < 0))
    if bad.any():
        return f"must be a finite number {'> 0' if positive else '>= 0'}, got {float(values[bad].ravel()[0])!r}"
    return None


@dataclass
class PowerLawFit(Record):
    """A fitted L(N) = E + A N^(-alpha) with optional bootstrap draws (``as_dict``: the fit and its intervals).

    ``draws`` is an array (num_draws, 3) of (E, A, alpha) from the bootstrap, or None.
    """

    E: float
    A: float
    alpha: float
    num_runs: int
    N_min: float
    N_max: float
    rmse: float
    ci: float = 0.95
    L_min: float | None = None
    draws: np.ndarray | None = field(default=None, repr=False)
    num_redrawn: int = 0
    stratified: bool = False
    slope: float | None = None  # least-squares slope of the losses against ln N (nats per e-fold): > 0, rising

    def predict(self, N):
        return power_law(N, self.E, self.A, self.alpha)

    def interval(self, name: str) -> tuple[float, float] | None:
        """Percentile interval of E, A or alpha over the bootstrap draws (None without draws)."""
        if self.draws is None or len(self.draws) == 0:
            return None
        col = {"E": 0, "A": 1, "alpha": 2}[name]
        return _percentile_interval(self.draws[:, col], self.ci)

    def unidentified(self) -> list[str]:
        """Why the bootstrap says the fit is not identified (empty: identified, or no draws to tell)."""
        reasons = []
        drawn = 0 if self.draws is None else len(self.draws)
        few = few_draws(drawn, self.ci) is not None
        span = f"interval ({drawn} draws)" if few else f"{level_percent(self.ci)}% interval"
        if self.slope is not None and self.slope > RISING_SLOPE:  # F190: alpha = 1e-4 [1e-4, 1e-4], no word
            reasons.append(f"the losses rise with size (slope {self.slope:+.3g} nats per e-fold of N): a loss that "
                           f"falls as a power law does not describe them, and alpha sits at its bound; check the "
                           f"sizes and losses are paired as meant, and that the larger runs trained to the end")
        elif self.alpha <= ALPHA_BOUNDS[0] * (1 + 1e-6):  # round 35 (AH156): flat losses, alpha 1e-4, A ~0, no word
            slope = "" if self.slope is None else f" (slope {self.slope:+.3g} nats per e-fold of N)"
            reasons.append(f"alpha sits at its lower bound {ALPHA_BOUNDS[0]:g}: the losses do not fall with size"
                           f"{slope}, so A and alpha describe nothing; check the sizes and losses are paired as "
                           f"meant, and that the larger runs trained to the end")
        elif self.alpha >= ALPHA_BOUNDS[1] * (1 - 1e-6):  # the same kind at the other bound
            reasons.append(f"alpha sits at its upper bound {ALPHA_BOUNDS[1]:g}: the losses fall faster with size than "
                           f"any power law the fit allows; check the sizes and losses are paired as meant")
        a = self.interval("alpha")
        if a is not None and a[0] > 0 and a[1] / a[0] > ALPHA_RATIO_IDENTIFIED:
            reasons.append(f"alpha's {span} [{a[0]:.3g}, {a[1]:.3g}] spans a factor of "
                           f"{a[1] / a[0]:.1f} (> {ALPHA_RATIO_IDENTIFIED:g})")
        e = self.interval("E")
        if e is not None and self.L_min and (e[1] - e[0]) > E_SHARE_IDENTIFIED * self.L_min:
            reasons.append(f"E's {span} [{e[0]:.3g}, {e[1]:.3g}] covers "
                           f"{100 * (e[1] - e[0]) / self.L_min:.0f}% of [0, min loss {self.L_min:.3g})")
        return reasons

    def as_dict(self) -> dict:
        out = {"E": self.E, "A": self.A, "alpha": self.alpha, "num_runs": self.num_runs,
               "N_min": self.N_min, "N_max": self.N_max, "rmse": self.rmse, "ci": self.ci, "L_min": self.L_min,
               "unidentified": self.unidentified(),
               "num_bootstrap": 0 if self.draws is None else int(len(self.draws)),
               "num_redrawn": self.num_redrawn, "stratified": self.stratified, "slope": self.slope}
        for name in ("E", "A", "alpha"):
            iv = self.interval(name)
            out[f"{name}_ci"] = None if iv is None else [_finite_or_none(v) for v in iv]
        return out


def _finite_or_none(v: float) -> float | None:
    return float(v) if v is not None and math.isfinite(v) else None


def _percentile_interval(values: np.ndarray, ci: float) -> tuple[float, float]:
    lo_q, hi_q = (1 - ci) / 2, 1 - (1 - ci) / 2
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return (math.nan, math.nan)
    # inverted_cdf never interpolates between a finite draw and +inf
    return (float(np.quantile(v, lo_q, method="inverted_cdf")), float(np.quantile(v, hi_q, method="inverted_cdf")))


def _check_inputs(N, L) -> tuple[np.ndarray, np.ndarray]:
    N = np.asarray(N, dtype=float).ravel()
    L = np.asarray(L, dtype=float).ravel()
    if N.shape != L.shape:
        raise UserError(f"sizes and losses differ in length ({len(N)} vs {len(L)})")
    if not (np.all(np.isfinite(N)) and np.all(np.isfinite(L))):
        raise UserError("sizes and losses must be finite numbers (a diverged run has loss nan/inf; drop it)")
    for what, values in (("size", N), ("loss", L)):
        if np.any(values <= 0):  # round 35, AI192: which value, and the fix
            k = int(np.argmax(values <= 0))
            raise UserError(f"sizes and losses must be positive, got {what} {values[k]:g} at position {k + 1}; "
                            f"pass parameter counts and losses above 0, or drop that run")
    if len(np.unique(N)) < 3:
        raise UserError(f"a power-law fit E + A N^-alpha needs runs at 3 or more distinct sizes, got "
                        f"{len(np.unique(N))}; add sizes to the dense ladder")
    return N, L


def _linear_given_alpha(z: np.ndarray, L: np.ndarray, L_min: float, fix_E: float | None):
    """Least squares of L = E + C z for each row of z (G, n), with 0 <= E < min L and C >= 0: closed form for fixed
    alpha, then the box constraints (the optimum of a convex problem violating a bound lies on that bound)."""
    E_hi = L_min * (1 - 1e-9)
    zz = np.sum(z * z, axis=1)
    if fix_E is None:
        zm = z.mean(axis=1, keepdims=True)
        var = np.sum((z - zm) ** 2, axis=1)
        C = np.sum((z - zm) * (L - L.mean())[None, :], axis=1) / np.maximum(var, 1e-300)
        E = L.mean() - C * zm[:, 0]
        clip = (E < 0) | (E > E_hi)
        E = np.clip(E, 0.0, E_hi)
        C = np.where(clip, np.sum(z * (L[None, :] - E[:, None]), axis=1) / np.maximum(zz, 1e-300), C)
    else:
        E = np.full(z.shape[0], float(fix_E))
        C = np.sum(z * (L[None, :] - E[:, None]), axis=1) / np.maximum(zz, 1e-300)
    C = np.maximum(C, 1e-300)
    sse = np.sum((E[:, None] + C[:, None] * z - L[None, :]) ** 2, axis=1)
    return E, C, sse


def _check_fix_E(fix_E, L_min: float) -> None:
    """UserError unless ``fix_E`` is None or a finite number in [0, ``L_min``): the fit's bounds on E. NaN gave a
    fit of E=nan, rmse nan without a word (issue 30 round 21, P448)."""
    from ...value_rules import number_problem

    problem = number_problem(fix_E, shown="a finite number >= 0") if fix_E is not None else None
    if problem is None and fix_E is not None and not 0 <= fix_E < L_min:
        problem = f"must lie in [0, {L_min}) (at least 0 and below the smallest loss), got {fix_E}"
    if problem is not None:
        raise UserError(f"fit_power_law: fix_E: {problem}; pass the irreducible loss to hold E at (0: a pure power "
                        f"law), or None to fit it")


def _fit_once(x: np.ndarray, L: np.ndarray, x0: float, fix_E: float | None = None,
              polish: bool = False) -> tuple[float, float, float]:
    """(E, c, alpha) for L = E + exp(c - alpha (x - x0)); x = log N, by variable projection (module docstring);
    ``polish`` additionally runs scipy's ``curve_fit`` from that solution and keeps it only if it lowers the squared
    error (a cross-check; it never should by much).
    """
    from scipy.optimize import curve_fit, minimize_scalar

    xc = x - x0
    L_min = float(L.min())
    _check_fix_E(fix_E, L_min)
    a_lo, a_hi = ALPHA_BOUNDS
    grid = np.geomspace(a_lo, a_hi, 241)
    _, _, sse = _linear_given_alpha(np.exp(-grid[:, None] * xc[None, :]), L, L_min, fix_E)
    g = int(np.argmin(sse))

    def objective(alpha: float) -> float:
        return float(_linear_given_alpha(np.exp(-alpha * xc)[None, :], L, L_min, fix_E)[2][0])

    lo, hi = grid[max(g - 1, 0)], grid[min(g + 1, len(grid) - 1)]
    alpha = float(grid[g])
    if hi > lo:
        res = minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        if res.fun <= sse[g]:
            alpha = float(res.x)
    E_arr, C_arr, sse_arr = _linear_given_alpha(np.exp(-alpha * xc)[None, :], L, L_min, fix_E)
    E, c, best = float(E_arr[0]), math.log(float(C_arr[0])), float(sse_arr[0])

    if polish and fix_E is None:
        def model(xx, E_, c_, alpha_):
            return E_ + np.exp(c_ - alpha_ * xx)

        E_hi = L_min * (1 - 1e-9)
        p0 = [min(max(E, 0.0), E_hi * (1 - 1e-6)), float(np.clip(c, -699, 699)), float(np.clip(alpha, a_lo, a_hi))]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                popt, _ = curve_fit(model, xc, L, p0=p0, bounds=([0.0, -700.0, a_lo], [E_hi, 700.0, a_hi]),
                                    method="trf", maxfev=5000)
            if np.sum((model(xc, *popt) - L) ** 2) < best:
                E, c, alpha = (float(v) for v in popt)
        except (RuntimeError, ValueError):
            pass
    return E, c, alpha


def fit_power_law(N: Sequence[float], L: Sequence[float], *, num_bootstrap: int = 1000, ci: float = 0.95,
                  seed: int = 0, fix_E: float | None = None) -> PowerLawFit:
    """Fit L(N) = E + A N^(-alpha) to runs (N_i, L_i), with a bootstrap over runs. ``N``: the runs' parameter counts
    (repeated sizes = several seeds); ``L``: their validation losses (nats); ``num_bootstrap``: draws (0: no intervals);
    ``ci``: the percentile intervals' coverage; ``seed``: the bootstrap's RNG seed; ``fix_E``: hold the irreducible loss
    at this value (0: a pure power law).
    """
    _check_fit_arguments(N, L, ci, seed)
    N, L = _check_inputs(N, L)
    x = np.log(N)
    x0 = float(x.mean())
    E, c, alpha = _fit_once(x, L, x0, fix_E, polish=True)
    A = math.exp(c + alpha * x0)
    rmse = float(np.sqrt(np.mean((power_law(N, E, A, alpha) - L) ** 2)))
    fit = PowerLawFit(E=E, A=A, alpha=alpha, num_runs=len(N), N_min=float(N.min()), N_max=float(N.max()),
                      rmse=rmse, ci=ci, L_min=float(L.min()), slope=float(np.polyfit(x, L, 1)[0]))
    problem = bootstrap_problem(num_bootstrap)  # the --bootstrap flag's rule
    if problem is not None:
        raise UserError(f"num_bootstrap: {problem} (draws; 0: no intervals)")
    if num_bootstrap > 0:
        fit.draws, fit.num_redrawn, fit.stratified = _bootstrap(N, L, x0, num_bootstrap, seed, fix_E)
    return fit


def _check_ladder_arguments(variant, eval_set) -> None:
    """UserError naming ``scaling_from_results``' ``variant`` (None or a variant's name) or ``eval_set`` of the
    wrong kind: variant 5 was "no 5 runs with a 'val' loss", '' read as unset, and eval_set None "no ... runs with a
    None loss" (issue 30 round 22). A name no row has keeps the line that names --variant and --ladder."""
    from ...model.embedding_kinds import EMBEDDING_KINDS
    from ...value_rules import api_check, eval_set_problem

    if variant is not None and (not isinstance(variant, str) or not variant.strip()):
        raise UserError(f"scaling_from_results: variant: expected a variant's name ({', '.join(EMBEDDING_KINDS)}) "
                        f"or None (the grid's ladder), got {variant!r:.40}; pass the variant of the scaling ladder")
    api_check("scaling_from_results", "eval_set", eval_set_problem(eval_set), "pass the name of an eval set the rows "
                                                                              "hold, such as val")


def _check_fit_arguments(N, L, ci, seed) -> None:
    """UserError naming ``fit_power_law``'s argument of the wrong kind: a bool among the sizes or losses (True was the
    size 1), ``ci`` a text (Python's "'<' not supported"), ``seed`` -1 (numpy's "expected non-negative integer") or
    True (taken as 1): issue 30 round 22, the public functions' arguments."""
    from ...value_rules import api_check, fraction_problem, whole_problem

    for name, value in (("N", N), ("L", L)):
        api_check("fit_power_law", name, not_numbers(value), "pass the runs' sizes and losses as numbers")
    api_check("fit_power_law", "ci", fraction_problem(ci), "pass the intervals' coverage such as 0.95")
    api_check("fit_power_law", "seed", whole_problem(seed, 0, "a whole number >= 0"), "pass an integer seed such as 0")


def _bootstrap(N, L, x0, num_draws, seed, fix_E):
    rng = np.random.default_rng(seed)
    sizes, inverse = np.unique(N, return_inverse=True)
    groups = [np.flatnonzero(inverse == g) for g in range(len(sizes))]
    stratified = min(len(g) for g in groups) >= 2
    draws, redrawn, attempts = [], 0, 0
    while len(draws) < num_draws:
        attempts += 1
        if attempts > 20 * num_draws + 100:
            raise UserError("bootstrap could not draw resamples with 3 distinct sizes; add runs or sizes")
        if stratified:
            idx = np.concatenate([rng.choice(g, size=len(g), replace=True) for g in groups])
        else:
            idx = rng.integers(0, len(N), size=len(N))
            if len(np.unique(N[idx])) < 3:
                redrawn += 1
                continue
        x = np.log(N[idx])
        E, c, alpha = _fit_once(x, L[idx], x0, fix_E)
        draws.append((E, math.exp(c + alpha * x0), alpha))
    return np.asarray(draws, dtype=float), redrawn, stratified


# --------------------------------------------------------------------------------------------
# inversion: dense-equivalent size and multiplier


def invert_power_law(L, E, A, alpha):
    """N with E + A N^-alpha = L; +inf where L <= E (vectorised)."""
    for name, value, positive in (("E", E, False), ("A", A, True), ("alpha", alpha, True)):  # as power_law's (S617)
        problem = law_value_problem(value, positive)
        if problem is not None:
            raise UserError(f"invert_power_law: {name}: {problem}; pass the fit's values (fit.E, fit.A, fit.alpha)")
    if (problem := not_numbers(L)) is not None:
        raise UserError(f"invert_power_law: L: {problem}; pass a loss in nats")
    L = np.asarray(L, dtype=float)
    E, A, alpha = (np.asarray(v, dtype=float) for v in (E, A, alpha))
    gap = L - E
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.where(gap > 0, np.power(A / np.where(gap > 0, gap, 1.0), 1.0 / alpha), np.inf)
    return out


@dataclass
class DenseEquivalent(Record):
    """Dense-equivalent size of a run with loss ``loss`` and ``params`` parameters."""

    loss: float
    params: float
    N_eq: float  # +inf when the loss is below the fitted irreducible loss
    multiplier: float  # N_eq / params (+inf likewise)
    flag: str  # "ok" | "below_irreducible" | "extrapolated"
    N_eq_ci: tuple[float, float] | None = None
    multiplier_ci: tuple[float, float] | None = None
    fraction_undefined: float | None = None  # share of bootstrap draws where loss <= E

    @property
    def defined(self) -> bool:
        return math.isfinite(self.N_eq)

    def as_dict(self) -> dict:
        return {"loss": self.loss, "params": self.params, "N_eq": _finite_or_none(self.N_eq),
                "multiplier": _finite_or_none(self.multiplier), "defined": self.defined, "flag": self.flag,
                "N_eq_ci": None if self.N_eq_ci is None else [_finite_or_none(v) for v in self.N_eq_ci],
                "multiplier_ci": None if self.multiplier_ci is None else [_finite_or_none(v) for v in self.multiplier_ci],
                "fraction_undefined": self.fraction_undefined}


def dense_equivalent(fit: PowerLawFit, loss: float | Iterable[float], params: float, *,
                     seed: int = 0) -> DenseEquivalent:
    """Invert ``fit`` at ``loss``: the dense size the fit says reaches it, and N_eq / params. ``loss`` may be a list (seeds
    of one model): the point estimate uses the mean, and each bootstrap draw resamples these losses too."""
    _check_equivalent_arguments(fit, loss, params, seed)
    losses = np.atleast_1d(np.asarray(loss, dtype=float))
    if len(losses) == 0 or not np.all(np.isfinite(losses)):
        raise UserError("dense_equivalent needs finite losses")
    if np.any(losses <= 0):  # as the fit's own losses (_check_inputs): -1 was placed on it (round 16, C162)
        raise UserError(f"dense_equivalent needs positive losses (a cross-entropy is > 0), got {losses.min():g}")
    if params <= 0:
        raise UserError(f"params must be positive, got {params}")
    L = float(losses.mean())
    N_eq = float(invert_power_law(L, fit.E, fit.A, fit.alpha))
    if not math.isfinite(N_eq):
        flag = "below_irreducible"
    elif N_eq < fit.N_min or N_eq > fit.N_max:
        flag = "extrapolated"
    else:
        flag = "ok"
    out = DenseEquivalent(loss=L, params=float(params), N_eq=N_eq, multiplier=N_eq / params, flag=flag)
    if fit.draws is not None and len(fit.draws):
        rng = np.random.default_rng(seed)
        if len(losses) > 1:
            Ls = losses[rng.integers(0, len(losses), size=(len(fit.draws), len(losses)))].mean(axis=1)
        else:
            Ls = np.full(len(fit.draws), L)
        n_eq = invert_power_law(Ls, fit.draws[:, 0], fit.draws[:, 1], fit.draws[:, 2])
        out.N_eq_ci = _percentile_interval(n_eq, fit.ci)
        out.multiplier_ci = tuple(v / params for v in out.N_eq_ci)
        out.fraction_undefined = float(np.mean(~np.isfinite(n_eq)))
    return out


def not_numbers(value) -> str | None:
    """Why ``value`` is not a number or an array of numbers (a bool, a text or an object among them), or None."""
    try:
        values = np.asarray(value)
        flags = any(isinstance(v, (bool, np.bool_)) for v in np.ravel(np.asarray(value, dtype=object)))
    except (ValueError, TypeError):  # a ragged list
        return f"expected a number, got {type(value).__name__} {value!r:.40}"
    if values.dtype.kind not in "iuf" or flags:
        return f"expected a number, got {type(value).__name__} {value!r:.40}"
    return None


def _check_equivalent_arguments(fit, loss, params, seed) -> None:
    """UserError naming ``dense_equivalent``'s first argument of the wrong kind: ``fit`` not a ``PowerLawFit``, a
    ``loss`` that holds a bool or a text (True was the loss 1.0, no word: issue 30 round 22, S623), ``params`` a bool
    or a text, ``seed`` not a whole number >= 0. Ranges (a loss <= 0, params <= 0) are the body's own lines."""
    from ...value_rules import api_check, number_problem, whole_problem

    if not isinstance(fit, PowerLawFit):
        raise UserError(f"dense_equivalent: fit: expected a PowerLawFit, got {type(fit).__name__}; pass the result "
                        f"of fit_power_law")
    if isinstance(loss, (str, bytes)) or np.size(loss) > 0:  # no loss at all: the body's "needs finite losses"
        api_check("dense_equivalent", "loss", not_numbers(loss), "pass the run's loss in nats (or a list of its "
                                                                 "seeds' losses)")
    api_check("dense_equivalent", "params", number_problem(params, shown="a finite number > 0"),
              "pass the run's parameter count")
    api_check("dense_equivalent", "seed", whole_problem(seed, 0, "a whole number >= 0"),
              "pass an integer seed such as 0")


def format_fit(fit: PowerLawFit) -> str:
    if not isinstance(fit, PowerLawFit):  # a dict was "'dict' object has no attribute 'draws'" (round 22)
        raise UserError(f"format_fit: fit: expected a PowerLawFit, got {type(fit).__name__}; pass the result of "
                        f"fit_power_law")

    def iv(name):
        r = fit.interval(name)
        return "" if r is None else f" [{r[0]:.4g}, {r[1]:.4g}]"

    # --bootstrap 0 draws nothing: the line claimed "95% bootstrap intervals" and showed none (round 20, K210); and
    # one or two draws were "95% bootstrap intervals" too (round 28, T60)
    drawn = 0 if fit.draws is None else len(fit.draws)
    said = (few_draws(drawn, fit.ci) or f"{level_percent(fit.ci)}% bootstrap intervals" if drawn else
            "no intervals: no bootstrap draws (--bootstrap 0)")
    return (f"L(N) = E + A N^-alpha over {fit.num_runs} runs, N in [{fit.N_min:.3g}, {fit.N_max:.3g}]: "
            f"E = {fit.E:.4g}{iv('E')}, A = {fit.A:.4g}{iv('A')}, alpha = {fit.alpha:.4g}{iv('alpha')} "
            f"(rmse {fit.rmse:.3g}; {said})"
            + ("".join(f"\n  not identified: {r}" for r in fit.unidentified())))


# --------------------------------------------------------------------------------------------
# from sweep results


COUNTS = ("total", "body", "non_input")


def row_params(row: ResultRow, count: str = "total") -> float:
    """Parameter count of a results row: ``total``, ``body`` or ``non_input`` (body + head)."""
    if not isinstance(row, ResultRow):  # a dict was "'dict' object has no attribute 'params'" (round 22)
        raise UserError(f"row_params: row: expected a ResultRow, got {type(row).__name__}; pass a row of "
                        f"read_results(...) (ResultRow.from_dict of a dict)")
    if count not in COUNTS:
        raise UserError(f"unknown parameter count {count!r}; choose one of {', '.join(COUNTS)}")
    p = row.params
    parts = {"total": ("total",), "body": ("body",), "non_input": ("body", "head")}[count]
    values = [None if p is None else getattr(p, k) for k in parts]
    if any(v is None for v in values):
        raise UserError(f"row {row.name!r} has no {count} parameter count (params: {p and p.as_dict()})")
    return float(sum(values))


def ladder_variant(rows: Iterable[ResultRow]) -> str:
    """The dense variant of the scaling ladder: the variant of rows in the ``scaling`` regime."""
    rows = check_typed_rows(rows, "ladder_variant")  # a path was "'str' object has no attribute 'in_regime'"
    variants = {r.variant for r in rows if r.in_regime("scaling")}
    if len(variants) == 1:
        return variants.pop()
    return DEFAULT_LADDER


@dataclass
class Equivalent(Record):
    """One configuration off the ladder (its seeds merged) placed on the fit."""

    name: str  # the run name without its seed
    variant: str | None
    size: str | None
    regimes: list[str]
    seeds: list[int | None]
    value: DenseEquivalent = inline()


@dataclass
class LadderFit(Record):
    """The dense ladder's power-law fit and every other configuration's dense-equivalent size."""

    variant: str  # the ladder's variant
    eval_set: str
    count: str  # the parameters counted as N (``COUNTS``)
    fit: PowerLawFit
    points: list[tuple[str, float, float]]  # (run name, N, loss) of the ladder
    equivalents: list[Equivalent]


def scaling_from_results(rows: Iterable[ResultRow], variant: str | None = None, eval_set: str = "val",
                         count: str = "total", num_bootstrap: int = 1000, ci: float = 0.95, seed: int = 0) -> LadderFit:
    """Fit the dense ladder of a sweep and place every other run on it; the runs of one configuration with several
    seeds are one ``Equivalent`` (their losses resampled)."""
    rows = check_typed_rows(rows, "scaling_from_results", compared=True)  # as read_results holds them (round 17, E322)
    _check_ladder_arguments(variant, eval_set)
    variant = variant if variant is not None else ladder_variant(rows)
    points = [(r.name, row_params(r, count), r.loss(eval_set)) for r in rows if r.variant == variant]
    points = [p for p in points if p[2] is not None]
    if not points:
        raise UserError(f"no {variant} runs with a {eval_set!r} loss in the results; the ladder variant is set "
                        f"with --variant in `leviathan analyze scaling`, --ladder in `leviathan report` (the grid's "
                        f"scaling experiment when not set)")  # report's flag is --ladder (round 20, K206)
    fit = fit_power_law([p[1] for p in points], [p[2] for p in points], num_bootstrap=num_bootstrap, ci=ci, seed=seed)
    groups: dict[str, list[ResultRow]] = {}
    for r in rows:
        if r.variant == variant or r.loss(eval_set) is None:
            continue
        key = r.name.rsplit("-s", 1)[0] if r.seed is not None else r.name
        groups.setdefault(key, []).append(r)
    equivalents = []
    for key, rs in groups.items():
        eq = dense_equivalent(fit, [r.loss(eval_set) for r in rs], row_params(rs[0], count), seed=seed)
        regimes = sorted({g for r in rs for g in r.all_regimes})
        equivalents.append(Equivalent(key, rs[0].variant, rs[0].size, regimes, [r.seed for r in rs], eq))
    return LadderFit(variant, eval_set, count, fit, points, equivalents)
