"""Adopting a *trained* model without throwing its input table away: the generator is fitted to the table first.

    model = adopt(trained, fit=Fit(frequency=train_counts, text=ids), seed_dim=64)
    print(model.leviathan_fit.format())       # per-bucket cosine and MSE; the text's loss before / untrained / fit
    model.leviathan_fit.recovered             # share of the loss gap the fit closed: 1 = as before adoption

``adopt`` alone replaces a trained table with a fresh generator (the small trained Llama of
tests/integration/test_adopt_fit.py: held-out loss 2.23 -> 5.79 nats); a fitted generator starts near the model the
table gave (docs/USING.md §6).

The fit (``fit_to_table``): Adam on the generator's parameters, minimising the weighted mean squared error between
its output e(i) and the table row t_i, divided by the weighted mean square of the rows (scale-free: 0 is a perfect
fit, 1 is what e = 0 scores), with a cosine learning-rate decay to a tenth. Rows are weighted by ``frequency``
(training counts per id) or uniformly; with V above ``batch_ids``, every step samples that many ids in proportion to
the weights (an unbiased estimate of the same objective), otherwise it sees every id with its weight.

Use the frequency when you have it: the generator cannot reproduce every row, and a uniform fit spends its capacity
on rare ids' rows the model hardly uses. Measured on the test's Llama (V 512, D 32; generator d_s 16, M 4, kappa 8,
r 8; 200 steps): frequency-weighted, the fit closes 90% of the loss gap (2.58 nats against 2.23 before adoption and
5.79 untrained); uniform, 50% (4.01); the test's margin is 0.5 nats above the loss before adoption and 80% of the
gap. At lr 1e-2 the weighted fit closed 62% (300 steps), hence the default 3e-3.

Report (``FitReport``): per frequency bucket (``eval.frequency.make_buckets``; ids never seen on a row of their own)
the ids, their share of the weight, the mean squared error and the mean cosine between e(i) and t_i; the objective
at the end; with ``text``, the model's mean loss on it before adoption, with the untrained generator and after.

Footguns: the fit costs ``steps`` generator forwards and backwards of min(V, ``batch_ids``) ids (seconds for a
small generator, minutes at the paper's sizes on a CPU); it runs on the model's device. The table rows of ids that
never occur are noise: weight them 0 (a frequency does). The fitted generator is a start, not the table: train the
adopted model afterwards as usual.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from ..errors import UserError
from ..integers import as_int, is_integer
from ..seeds import seed_problem
from ..model.generator import LeviathanGenerator


MAX_LR = 1.0  # Adam's step is about lr per parameter: above 1, a fit moves the generator farther than any row lies
# A fit's length: 2,000 times the default 500 steps, where the measured fits had converged by 200-300. Each step is a
# generator forward and backward (about a second at the paper's sizes on a CPU: 10**6 steps are days); Fit(steps=10**12)
# was accepted and would never end (issue 30 round 9, M158).
MAX_STEPS = 1_000_000
FIELD_EXAMPLES = {"steps": 500, "batch_ids": 4096, "buckets": 5}  # Fit(NAME=...) in a refusal
MAX_COUNT = 2**62  # a frequency's counts in all: within int64, far beyond any corpus (checkpoint.state's bound)


@dataclass
class Fit:
    """What ``adopt(..., fit=Fit(...))`` fits and measures (``fit=True`` is ``Fit()``: uniform weights, no text)."""

    frequency: Any = None  # (V,) non-negative counts or weights per id (tensor, array, list); None: uniform
    text: Any = None  # token ids (T,) or (B, T): the loss is reported on it; None: no losses
    steps: int = 500
    lr: float = 3e-3  # Adam's peak; cosine decay to lr / 10 (1e-2 measured worse: see the module docstring)
    batch_ids: int = 4096  # ids per step when the vocabulary is larger (sampled by weight)
    buckets: int = 5
    seed: int = 0  # the id sampling's generator

    def __post_init__(self) -> None:
        for name in ("steps", "batch_ids", "buckets"):
            value = as_int(getattr(self, name))  # numpy integers are integers (round 9)
            setattr(self, name, value)
            if not is_integer(value) or value < 1:  # the example is the field's own (round 14, B286)
                raise UserError(f"Fit.{name} must be a positive integer, got {value!r}; e.g. "
                                f"Fit({name}={FIELD_EXAMPLES[name]})")
        if self.steps > MAX_STEPS:
            raise UserError(f"Fit.steps must be at most {MAX_STEPS:,} (a fit converges in hundreds; each step is a "
                            f"generator forward and backward), got {self.steps:,}; e.g. Fit(steps=500)")
        from ..eval.frequency import MAX_BUCKETS

        if self.buckets > MAX_BUCKETS:
            raise UserError(f"Fit.buckets must be at most {MAX_BUCKETS}, got {self.buckets:,}; e.g. Fit(buckets=5)")
        if isinstance(self.lr, numbers.Real) and not isinstance(self.lr, (bool, np.bool_)):
            self.lr = float(self.lr)  # a numpy float is a number (np.float32(1e-2) was refused: round 14, B71)
        if not (isinstance(self.lr, float) and math.isfinite(self.lr)
                and 0 < self.lr <= MAX_LR):  # True is an int to Python: Fit(lr=True) fitted at 1.0 (issue 30 round 5)
            # Adam moves every parameter by about lr per step: Fit(lr=1e30) returned a model whose input embeddings
            # were all NaN, with "objective nan" as the only sign (issue 30 round 7)
            raise UserError(f"Fit.lr must be a number in (0, {MAX_LR:g}] (Adam's peak rate; default 3e-3), got "
                            f"{self.lr!r}; e.g. Fit(lr=1e-2)")
        self.seed = as_int(self.seed)
        problem = seed_problem(self.seed)  # Fit(seed=-1) was taken as it is (issue 30 round 5)
        if problem is not None:
            raise UserError(f"Fit.seed: a seed {problem}; e.g. Fit(seed=0)")


@dataclass
class BucketFit:
    """The fit on one group of ids."""

    label: str  # e.g. "count 12-40", "never seen", "all ids"
    num_ids: int
    weight: float  # the group's share of the fit's weight
    mse: float  # mean over its ids of the mean squared error over D
    cosine: float  # mean over its ids of cos(e(i), t_i)


@dataclass
class FitReport:
    """What ``adopt(..., fit=...)`` measured (``model.leviathan_fit``)."""

    steps: int
    objective: float  # the final weighted relative MSE (0 perfect, 1 = predicting zeros)
    buckets: list[BucketFit] = field(default_factory=list)
    loss_before: float | None = None  # the text's mean loss (nats) before adoption, with the trained table
    loss_untrained: float | None = None  # ... with the freshly initialised generator
    loss_fit: float | None = None  # ... after the fit

    @property
    def recovered(self) -> float | None:
        """Share of the loss gap (untrained - before) the fit closed; None without a text or without a gap."""
        if None in (self.loss_before, self.loss_untrained, self.loss_fit):
            return None
        gap = self.loss_untrained - self.loss_before
        return None if gap <= 0 else (self.loss_untrained - self.loss_fit) / gap

    def format(self) -> str:
        from ..tables import text_table

        rows = [[b.label, f"{b.num_ids:,}", f"{b.weight:.1%}", f"{b.mse:.3g}", f"{b.cosine:.3f}"] for b in self.buckets]
        out = [f"generator fitted to the input table: {self.steps} steps, objective {self.objective:.3f} "
               "(weighted MSE / mean square of the rows)",
               text_table(["ids", "count", "weight", "mse", "cosine"], rows)]
        if self.loss_before is not None:
            rec = self.recovered
            out.append(f"loss on the text: before adoption {self.loss_before:.4f}, untrained generator "
                       f"{self.loss_untrained:.4f}, fitted {self.loss_fit:.4f}"
                       + (f" ({rec:.0%} of the gap recovered)" if rec is not None else ""))
        return "\n".join(out)


# ---- the pieces adopt calls ----------------------------------------------------------------------------------
def as_fit(fit: Any) -> Fit | None:
    """``adopt``'s ``fit`` argument as a ``Fit`` (None / False: no fit; True: ``Fit()``). The switch is
    ``switch_problem``'s: numpy's bool too (``fit=np.True_`` was refused as "got bool", round 29 W773), never 1."""
    from ..value_rules import switch_problem

    if fit is None or (switch_problem(fit) is None and not fit):
        return None
    if switch_problem(fit) is None:
        return Fit()
    if isinstance(fit, Fit):
        # a Fit is a mutable dataclass: a field set after construction (f.lr = nan, f.steps = -5) skipped its checks
        # and reached Adam's raw "Invalid learning rate: nan" (issue 30 round 18, G61, G60): checked again here
        fit.__post_init__()
        return fit
    raise UserError(f"fit must be a leviathan.hf.Fit (or True), got {type(fit).__name__}; e.g. "
                    "adopt(model, fit=Fit(frequency=train_counts, text=ids))")


def row_weights(frequency: Any, num_rows: int, buckets: int = 2) -> np.ndarray | None:
    """The frequency as float64 counts (num_rows,), checked; None for uniform weights. A tensor on the meta device
    (no values) was torch's NotImplementedError (issue 30 round 20, M323); ``buckets`` (``Fit.buckets``) more than
    the table's ids gave fewer buckets than asked, no word (400 of 300 ids: 91, M324b)."""
    if frequency is None:
        return None
    if isinstance(frequency, torch.Tensor) and frequency.is_meta:
        raise UserError("Fit.frequency is a tensor on the meta device (it holds no values); pass the training counts "
                        "per id on the CPU or a GPU, e.g. torch.from_numpy(np.load('DATA/train_freq.npy'))")
    frequency = dense(frequency)
    given = frequency.detach().cpu().numpy() if isinstance(frequency, torch.Tensor) else np.asarray(frequency)
    # text, bools and complex numbers are no counts: a ValueError, bools read as 1, the imaginary part dropped
    # (issue 30 round 14, B78, B79, B284)
    if given.dtype.kind not in "iuf":
        raise UserError(f"Fit.frequency must be counts per id (integers or floats), got {given.dtype} values; pass "
                        f"the training counts per id, e.g. a prepared folder's train_freq.npy")
    w = given.astype(np.float64)
    if w.shape != (num_rows,):
        raise UserError(f"Fit.frequency has shape {w.shape}, expected ({num_rows},) (one count per row of the input "
                        "table); pass the training counts per id, e.g. a prepared folder's train_freq.npy")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise UserError("Fit.frequency must be finite, non-negative and not all zero; pass counts per id")
    with np.errstate(over="ignore", invalid="ignore"):  # round 10 (Q127): 1e308 each was "train_freq holds
        past = not as_counts(w).sum() < MAX_COUNT       # negative counts" (their cast to int64 wrapped around)
    if past:
        raise UserError(f"Fit.frequency's counts sum past {MAX_COUNT:,} (2^62, more tokens than any corpus; weights "
                        f"are read as counts in units of the smallest one); pass training counts, or scale the "
                        f"weights down")
    if buckets > num_rows:
        raise UserError(f"Fit.buckets={buckets:,} is more than the {num_rows:,} ids of the table (each bucket holds "
                        f"at least one id); ask for at most {num_rows:,}, e.g. Fit(buckets=5)")
    return w


def dense(value: Any) -> Any:
    """``value``, a sparse tensor (COO, CSR, ...) as the dense tensor of the same values: a sparse count per id is a
    natural way to hold counts, and ``Fit(frequency=counts.to_sparse())`` was torch's "can't convert Sparse layout
    tensor to numpy" traceback, a sparse ``Fit.text`` its "Could not run 'aten::min'" (issue 30 round 21, P581)."""
    if isinstance(value, torch.Tensor) and value.layout != torch.strided:
        return value.to_dense()
    return value


def as_counts(weights: np.ndarray) -> np.ndarray:
    """The weights as whole counts: as they are when whole, else in units of the smallest positive one."""
    return weights if np.all(weights == np.round(weights)) else np.round(weights / weights[weights > 0].min())


def text_ids(text: Any, vocab_size: int, device: torch.device, positions: int | None = None) -> torch.Tensor:
    """The text's ids as a (B, T) long tensor on ``device``, checked against the vocabulary. Footgun: a cast to long
    truncates, so ids given as fractions (1.5, an embedding or probabilities passed by mistake) are refused first:
    they were read as other ids without a word (issue 30 round 6)."""
    try:
        given = torch.as_tensor(text)
    except (TypeError, ValueError, RuntimeError):  # a str: "new(): invalid data type 'str'" (round 14, B82)
        if (isinstance(text, (list, tuple)) and len(text) > 1 and all(isinstance(r, (list, tuple)) for r in text)
                and len({len(r) for r in text}) > 1):  # rows of 3 and 2 ids were "must be token ids" (round 35, AI575)
            lengths = ", ".join(str(len(r)) for r in text[:4]) + (", ..." if len(text) > 4 else "")
            raise UserError(f"Fit.text holds rows of unequal length ({lengths} ids), which make no (rows, length) "
                            f"tensor; cut the rows to one length, or join them into one row") from None
        raise UserError(f"Fit.text must be token ids, got {type(text).__name__} {text!r:.40}; pass a tokenized "
                        "text, e.g. tokenizer(text).input_ids") from None
    from ..meta_device import refuse_meta

    refuse_meta(given, "Fit.text", "pass the ids themselves, e.g. tokenizer(text).input_ids")  # round 15, B63
    given = dense(given)
    if given.dtype == torch.bool or given.is_complex():  # a bool mask read as ids 0 and 1 (round 14, B83)
        raise UserError(f"Fit.text must be token ids, got {given.dtype} values; pass a tokenized text, e.g. "
                        "tokenizer(text).input_ids")
    if given.is_floating_point() and not bool((given == given.round()).all()):
        raise UserError(f"Fit.text must be whole token ids, got {given.dtype} values with fractions; pass a tokenized "
                        "text, e.g. tokenizer(text).input_ids")
    ids = given.to(torch.long)
    ids = ids.unsqueeze(0) if ids.dim() == 1 else ids
    if ids.dim() != 2 or ids.shape[1] < 2 or ids.numel() == 0:
        raise UserError(f"Fit.text must be token ids of shape (T,) or (B, T) with T >= 2, got {tuple(ids.shape)}; "
                        "pass a tokenized text (rows of equal length), e.g. tokenizer(text).input_ids")
    if int(ids.min()) < 0 or int(ids.max()) >= vocab_size:
        raise UserError(f"Fit.text has ids outside [0, {vocab_size}); tokenize it with the model's tokenizer")
    if positions is not None and ids.shape[1] > positions:  # GPT-2's learned positions: an IndexError (round 14, B279)
        raise UserError(f"Fit.text rows are {ids.shape[1]:,} tokens, more than the model's {positions:,} positions; "
                        f"pass rows of at most {positions:,} tokens, e.g. ids[:, :{positions}]")
    return ids.to(device)


@torch.no_grad()
def text_loss(model: nn.Module, ids: torch.Tensor, rows_per_batch: int = 8) -> float:
    """The model's mean next-token loss (nats) on ``ids`` (B, T), in eval mode (its mode is restored)."""
    was_training = model.training
    model.eval()
    try:
        total = 0.0
        for a in range(0, ids.shape[0], rows_per_batch):
            x = ids[a:a + rows_per_batch]
            total += float(model(input_ids=x, labels=x).loss) * x.shape[0]  # rows of equal length: equal weights
        return total / ids.shape[0]
    finally:
        model.train(was_training)


def fit_to_table(generator: LeviathanGenerator, table: torch.Tensor, weights: np.ndarray | None, fit: Fit) -> float:
    """Fit ``generator`` (in place) to ``table`` (V, D) under ``weights`` (see the module docstring); returns the
    final objective (weighted relative MSE)."""
    V = table.shape[0]
    device = table.device
    target = table.detach().float()
    w = torch.full((V,), 1.0 / V, dtype=torch.float64) if weights is None else torch.from_numpy(weights / weights.sum())
    w = w.float().to(device)
    scale = (target.pow(2).mean(1) * w).sum().clamp_min(torch.finfo(torch.float32).tiny)  # weighted mean square
    params = [p for p in generator.parameters() if p.requires_grad]
    start = _objective(generator, target, w, scale)  # where the fit starts: a fit ending above it diverged (Y663)
    optimizer = torch.optim.Adam(params, lr=fit.lr)
    sampler = torch.Generator(device="cpu").manual_seed(fit.seed)
    everything = V <= fit.batch_ids
    all_ids = torch.arange(V, device=device)
    objective = float("nan")
    with torch.enable_grad():
        for step in range(fit.steps):
            for group in optimizer.param_groups:  # cosine from lr to lr / 10
                group["lr"] = fit.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / max(1, fit.steps - 1))))
            if everything:
                e = _unscaled(generator, all_ids)  # (V, D)
                loss = ((e - target).pow(2).mean(1) * w).sum() / scale
            else:
                ids = torch.multinomial(w.cpu(), fit.batch_ids, replacement=True, generator=sampler).to(device)
                e = _unscaled(generator, ids)  # (n, D)
                loss = (e - target[ids]).pow(2).mean(1).mean() / scale
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            objective = float(loss.detach())
    for p in params:  # the fit's gradients are not the caller's
        p.grad = None
    if not (math.isfinite(objective) and all(bool(torch.isfinite(p).all()) for p in params)):
        raise UserError(f"the generator's fit diverged at Fit.lr={fit.lr:g} (objective {objective:.3g}, the "
                        f"generator's parameters are no longer finite), so the adopted model would compute NaN; "
                        f"load the model again and adopt it with a lower rate, e.g. Fit(lr={fit.lr / 10:g})")
    _refuse_grown(fit, start, _objective(generator, target, w, scale))
    return objective


def _refuse_grown(fit: Fit, start: float, end: float) -> None:
    """UserError when the fit left the generator farther from the table than it started (the weighted objective over
    every id, before and after): ``Fit(lr=1.0, steps=50)`` ended at an objective of 4941 (thousands of times the
    rows' own mean square) and adopt returned the model as fitted, without a word (issue 30 round 25, Y663). Adam at
    too high a rate overshoots; at a rate that fits, the objective falls from its start. The model was changed in
    place, as for a fit that ended in NaN, hence the fix to load it again."""
    if end > start:
        raise UserError(f"the generator's fit diverged at Fit.lr={fit.lr:g}: it ended farther from the input table "
                        f"than it started (objective {end:.4g} after {fit.steps} steps, {start:.4g} before), so the "
                        f"adopted model would be worse than not fitting; load the model again and adopt it with a "
                        f"lower rate, e.g. Fit(lr={fit.lr / 10:g})")


@torch.no_grad()
def _objective(generator: LeviathanGenerator, target: torch.Tensor, w: torch.Tensor, scale: torch.Tensor) -> float:
    """``fit_to_table``'s objective over every id (weighted MSE / the rows' weighted mean square), in blocks of ids as
    ``bucket_fits`` reads them, so a large vocabulary is never one (V, D) graph."""
    total = 0.0
    for a in range(0, target.shape[0], 8192):
        ids = torch.arange(a, min(target.shape[0], a + 8192), device=target.device)
        total += float(((_unscaled(generator, ids) - target[ids]).pow(2).mean(1) * w[ids]).sum())
    return total / float(scale)


def _unscaled(generator: LeviathanGenerator, ids: torch.Tensor) -> torch.Tensor:
    """e(i) in fp32 as the table stores it: a ``ScaledLeviathanGenerator``'s output before its constant (Gemma's
    table holds unscaled rows and multiplies them at run time, and so does the adopted generator)."""
    return LeviathanGenerator.forward(generator, ids).float()


@torch.no_grad()
def bucket_fits(generator: LeviathanGenerator, table: torch.Tensor, weights: np.ndarray | None,
                num_buckets: int) -> list[BucketFit]:
    """Per frequency bucket (rarest first; ids never seen apart), or one row for uniform weights."""
    from ..eval.frequency import make_buckets

    V = table.shape[0]
    e = torch.cat([_unscaled(generator, torch.arange(a, min(V, a + 8192), device=table.device))
                   for a in range(0, V, 8192)])  # (V, D)
    t = table.detach().float()
    mse = (e - t).pow(2).mean(1).cpu().numpy()  # (V,)
    cos = torch.nn.functional.cosine_similarity(e, t, dim=1).cpu().numpy()  # (V,)
    if weights is None:
        return [BucketFit("all ids", V, 1.0, float(mse.mean()), float(cos.mean()))]
    counts = as_counts(weights)
    buckets = make_buckets(counts.astype(np.int64), max(2, num_buckets), "mass")
    share = weights / weights.sum()
    groups = [("never seen", counts == 0)] if np.any(counts == 0) else []
    for j in range(buckets.num_buckets):
        chosen = (buckets.bucket_of == j) & (counts > 0)
        if chosen.any():
            lo, hi = int(counts[chosen].min()), int(counts[chosen].max())
            groups.append((f"count {lo:,}" + (f"-{hi:,}" if hi > lo else ""), chosen))
    return [BucketFit(label, int(sel.sum()), float(share[sel].sum()), float(mse[sel].mean()), float(cos[sel].mean()))
            for label, sel in groups]
