"""Linear head + cross-entropy over chunks of positions, never forming the (positions x V) logits.

With a large vocabulary the output head dominates a small model's step: 6 N D V FLOPs for N positions
and a (N, V) logits tensor that the plain path writes, exponentiates, normalises and reads back several
times (o200k, 2,048 positions: 1.6 GB of fp32 logits plus as much again for their gradient). Here the
positions are processed ``chunk`` at a time, so at most a (chunk, V) block exists at once:

    forward, per chunk c:  z_c = h_c W^T                         (chunk, V), in fp32
                           nll_c = logsumexp(z_c) - z_c[y_c]     (chunk,)
    and, when a gradient is wanted, right away (Liger's fused linear cross-entropy does the same):
                           g_c = (softmax(z_c) - onehot(y_c)) / n_valid      (chunk, V), in place of z_c
                           dh_c = g_c W,   dW += g_c^T h_c

``backward`` only scales the stored dh and dW by the incoming gradient of the loss (a scalar). That is
three GEMMs per chunk, as the plain path does, instead of the four of a recompute-in-backward design
(cut-cross-entropy recomputes the logits in backward to keep nothing but the loss; its kernels and
Liger's are Triton, GPU-only, hence this CPU-capable version). Memory: O(chunk x V) scratch plus dh
(N, D) and dW (V, D), which the plain path also materialises as gradients.

Exactness: the same loss and gradients as ``F.cross_entropy(F.linear(h, W).float(), y)`` up to fp32
summation order (tests/unit/test_loss.py), ``ignore_index`` positions excluded from the mean and
given zero gradient, a tied head (W shared with the input table) receives the sum of both gradients
through autograd as usual. With no valid position ``chunked_cross_entropy`` gives NaN, as ``F.cross_entropy``
does; ``linear_cross_entropy`` refuses such labels, as ``CausalLM.forward`` does (issue 30 round 24, W115).

Under ``torch.compile`` the function runs eagerly (``torch.compiler.disable``): the chunk loop and the valid-
count are data-dependent, and its GEMMs gain nothing from compilation.

Footguns: the gradients are computed during forward, so a forward under ``enable_grad`` whose loss is
never backpropagated wastes that work (evaluation runs under ``no_grad`` and takes the cheap path);
it is once-differentiable (no double backward). Under ``torch.autocast`` the chunk GEMMs run in the
autocast dtype and the softmax in fp32, like the plain path.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

from ..errors import ArgumentTypeError, ArgumentValueError
from .labels import IGNORE_INDEX, check_label_type, check_label_values, check_some_target

# Elements of one (chunk, V) fp32 block: 8M = 32 MiB, e.g. 40 positions of o200k or 1,024 of a BPE-8192.
DEFAULT_CHUNK_ELEMENTS = 8 * 2**20


def chunk_positions(vocab_size: int, chunk_elements: int = DEFAULT_CHUNK_ELEMENTS) -> int:
    """Positions per chunk so that one (chunk, V) fp32 block holds about ``chunk_elements`` values. Both are whole
    numbers >= 1 (0, -5 and True were read as one id, 2.5 gave a float chunk; issue 30 round 22). O(1)."""
    from ..value_rules import check_whole

    check_whole("chunk_positions", "vocab_size", vocab_size, 1, fix="pass the head's rows, V")
    check_whole("chunk_positions", "chunk_elements", chunk_elements, 1,
                fix=f"pass the values one (chunk, V) block may hold ({DEFAULT_CHUNK_ELEMENTS:,} by default)")
    return max(16, chunk_elements // max(1, vocab_size))


def _chunk_logits(h: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """h (C, D), W (V, D) -> fp32 logits (C, V) (autocast decides the GEMM's dtype)."""
    return F.linear(h, weight).float()


class _LinearCrossEntropy(torch.autograd.Function):
    """h (N, D), W (V, D), y (N,) -> mean NLL over positions with y != ignore_index; grads made in forward."""

    @staticmethod
    def forward(ctx, h: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, ignore_index: int,
                chunk: int) -> torch.Tensor:
        N, V = h.shape[0], weight.shape[0]
        valid = labels != ignore_index  # (N,)
        n_valid = int(valid.sum())
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        grad_h = torch.empty_like(h) if need_h else None  # (N, D)
        grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if need_w else None  # (V, D)
        total = torch.zeros((), dtype=torch.float32, device=h.device)
        scale = 1.0 / n_valid if n_valid else 0.0
        block = None  # one (chunk, V) fp32 buffer for every chunk: fresh pages cost more than the arithmetic
        for a in range(0, N, chunk):
            h_c, y_c, v_c = h[a:a + chunk], labels[a:a + chunk], valid[a:a + chunk]
            C = h_c.shape[0]
            if h_c.dtype == weight.dtype == torch.float32 and not torch.is_autocast_enabled(h.device.type):
                if block is None:
                    block = h.new_empty(min(chunk, N), V)
                z = torch.mm(h_c, weight.t(), out=block[:C])  # (C, V)
            else:
                z = _chunk_logits(h_c, weight)  # (C, V) fp32, the GEMM in autocast's dtype
            safe_y = torch.where(v_c, y_c, torch.zeros_like(y_c)).unsqueeze(1)  # (C, 1) ignored rows -> id 0
            target = z.gather(1, safe_y).squeeze(1)  # (C,)
            # one exp per logit: softmax = exp(z - max) / sum, lse = max + log(sum)
            zmax = z.amax(dim=1, keepdim=True)  # (C, 1)
            e = z.sub_(zmax).exp_()  # (C, V) in place of the logits
            sumexp = e.sum(dim=1, keepdim=True)  # (C, 1)
            lse = zmax.squeeze(1) + sumexp.squeeze(1).log()  # (C,)
            total += ((lse - target) * v_c).sum()
            if need_h or need_w:
                w_row = (v_c.to(e.dtype) * scale).unsqueeze(1)  # (C, 1): 1/n_valid, 0 for ignored rows
                g = e.mul_(w_row / sumexp)  # softmax / n_valid
                g.scatter_add_(1, safe_y, -w_row)  # - onehot(y) / n_valid
                g_lp = g.to(h.dtype) if h.dtype != torch.float32 else g
                if need_h:
                    grad_h[a:a + C] = torch.mm(g_lp, weight.to(g_lp.dtype))  # (C, V) @ (V, D)
                if need_w:
                    grad_w.addmm_(g.t(), h_c.float())  # (V, C) @ (C, D)
        ctx.save_for_backward(grad_h, grad_w)
        ctx.weight_dtype = weight.dtype
        return total / n_valid if n_valid else torch.full((), float("nan"), device=h.device)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_loss: torch.Tensor):
        grad_h, grad_w = ctx.saved_tensors
        gh = grad_h * grad_loss.to(grad_h.dtype) if grad_h is not None else None
        gw = (grad_w * grad_loss).to(ctx.weight_dtype) if grad_w is not None else None
        return gh, gw, None, None, None


@torch.compiler.disable  # data-dependent chunk loop: compiled models call it eagerly (a clean graph break)
def linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor,
                         ignore_index: int = IGNORE_INDEX, chunk: int | None = None) -> torch.Tensor:
    """Mean cross-entropy of ``hidden @ weight.T`` against ``labels``, in chunks of positions.

    Args:
        hidden: (..., D) final hidden states.
        weight: (V, D) head matrix (for a tied model, the input table itself).
        labels: (...) target ids in [0, V); ``ignore_index`` positions are left out of the mean.
        chunk: positions per chunk (a whole number >= 1); None: ``chunk_positions(V)`` (about 32 MiB of fp32 logits).
    Returns:
        scalar fp32 loss, equal to ``F.cross_entropy(F.linear(hidden, weight).float(), labels)``.

    The arguments are checked first (``check_head_arguments``, and one scan of the labels, as ``CausalLM`` does):
    a label past V, a (D, V) head, float labels, mismatched dtypes ended in torch's errors and ``chunk=0`` was read as
    unset (issue 30 round 22, S517-S524). ``CausalLM`` checks its labels itself and calls ``chunked_cross_entropy``.
    """
    h, y, chunk = check_head_arguments("linear_cross_entropy", hidden, weight, labels, ignore_index, chunk)
    check_label_values(y, weight.shape[0], ignore_index, "the head's rows, V")
    if y.numel() == 0:  # a mean over no position: NaN without a word (round 25, Y105; CausalLM refuses it, W39)
        raise ArgumentValueError("linear_cross_entropy: labels hold no position (shape "
                                 f"{tuple(labels.shape)}), so the loss would be a mean over no target (NaN); give at "
                                 f"least one position, or leave out a batch with nothing to score")
    check_some_target(y, ignore_index, "linear_cross_entropy: ")  # NaN without a word (round 24, W115)
    return chunked_cross_entropy(h, weight, y, ignore_index, chunk)


@torch.compiler.disable  # as linear_cross_entropy: compiled models (CausalLM.forward) call it eagerly
def chunked_cross_entropy(h: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, ignore_index: int,
                          chunk: int | None) -> torch.Tensor:
    """``linear_cross_entropy`` of arguments already checked: h (N, D), W (V, D), y (N,) in range. No checks:
    ``CausalLM.forward`` calls it with labels ``check_labels`` scanned once (a second scan is a second GPU sync)."""
    chunk = chunk_positions(weight.shape[0]) if chunk is None else chunk
    if not (torch.is_grad_enabled() and (h.requires_grad or weight.requires_grad)):
        nll = _token_nll(h, weight, y, ignore_index, chunk)
        n_valid = int((y != ignore_index).sum())
        return nll.sum() / n_valid if n_valid else torch.full((), float("nan"), device=h.device)
    return _LinearCrossEntropy.apply(h, weight, y, ignore_index, chunk)


@torch.no_grad()
def linear_token_nll(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                     ignore_index: int = IGNORE_INDEX, chunk: int | None = None) -> torch.Tensor:
    """Per-position NLL in nats (fp32, same shape as ``targets``; 0 at ``ignore_index``), no gradient. The arguments
    are checked as ``linear_cross_entropy``'s (round 22: a target past V ended in torch's gather error)."""
    h, y, chunk = check_head_arguments("linear_token_nll", hidden, weight, targets, ignore_index, chunk)
    check_label_values(y, weight.shape[0], ignore_index, "the head's rows, V")
    return _token_nll(h, weight, y, ignore_index, chunk).view(targets.shape)


def _token_nll(h: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, ignore_index: int,
               chunk: int | None) -> torch.Tensor:
    """Per-position NLL (N,) fp32 of checked arguments h (N, D), W (V, D), y (N,); chunk None: the default."""
    chunk = chunk_positions(weight.shape[0]) if chunk is None else chunk
    with torch.no_grad():
        out = torch.empty(y.shape, dtype=torch.float32, device=h.device)  # (N,)
        for a in range(0, h.shape[0], chunk):
            z = _chunk_logits(h[a:a + chunk], weight)  # (C, V)
            y_c = y[a:a + chunk]
            v_c = y_c != ignore_index
            safe_y = torch.where(v_c, y_c, torch.zeros_like(y_c)).unsqueeze(1)  # (C, 1)
            target = z.gather(1, safe_y).squeeze(1)  # (C,)
            zmax = z.amax(dim=1, keepdim=True)  # (C, 1); one exp per logit (torch.logsumexp costs ~2x on CPU)
            lse = zmax.squeeze(1) + z.sub_(zmax).exp_().sum(dim=1).log()  # (C,)
            out[a:a + chunk] = (lse - target) * v_c
    return out


def check_head_arguments(api: str, hidden, weight, labels, ignore_index, chunk) -> tuple:
    """(h (N, D), y (N,), chunk) of ``api``'s arguments, each checked in O(1) (types, shapes, dtypes; the labels'
    values are ``check_label_values``'): one line naming the argument, what it is and what it must be (issue 30
    round 22, S519 a (D, V) head, S520 float labels, S523 float64 hidden with a float32 head, S524 ``chunk=0`` read
    as unset; a bool is no ignore_index or chunk)."""
    from ..integers import is_integer
    from ..value_rules import check_whole

    for name, t in (("hidden", hidden), ("weight", weight)):
        if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point or t.dim() < 1:
            shown = f"{t.dtype} {tuple(t.shape)}" if isinstance(t, torch.Tensor) else type(t).__name__
            raise ArgumentTypeError(f"{api}: {name} must be a floating-point tensor, got {shown}")
    D = hidden.shape[-1]
    if weight.dim() != 2 or weight.shape[1] != D:
        hint = "; it looks transposed: pass weight.T" if weight.dim() == 2 and weight.shape[0] == D else ""
        raise ArgumentValueError(f"{api}: weight must be the (V, {D}) head (D = hidden's last size {D}), got "
                                 f"{tuple(weight.shape)}{hint}")
    if hidden.dtype != weight.dtype and not torch.is_autocast_enabled(hidden.device.type):
        raise ArgumentTypeError(f"{api}: hidden is {hidden.dtype} and weight {weight.dtype}; outside torch.autocast "
                                f"they must share a dtype: cast one (hidden.to(weight.dtype))")
    if hidden.dtype != weight.dtype and torch.float64 in (hidden.dtype, weight.dtype):
        # autocast casts no float64 tensor: torch's "expected m1 and m2 to have the same dtype" (round 24, W678)
        raise ArgumentTypeError(f"{api}: hidden is {hidden.dtype} and weight {weight.dtype}; torch.autocast does not "
                                f"cast float64, so they must share a dtype there too: cast one "
                                f"(hidden.to(weight.dtype))")
    if hidden.device != weight.device:
        raise ArgumentValueError(f"{api}: hidden is on {hidden.device} and weight on {weight.device}; move them to "
                                 f"one device")
    check_label_type(labels, f"{api}: labels")
    if labels.shape != hidden.shape[:-1]:  # equal counts were paired by flat order: hidden (2, 3, D) with labels
        # (3, 2) scored one sequence's positions against another's targets without a word (round 26, Q83, Q114)
        raise ArgumentValueError(f"{api}: labels {tuple(labels.shape)} do not match hidden states "
                                 f"{tuple(hidden.shape)} (one label per position: labels of shape hidden.shape[:-1], "
                                 f"{tuple(hidden.shape[:-1])}); pass the targets in the hidden states' order")
    h, y = hidden.reshape(-1, D), labels.reshape(-1)  # (N, D), (N,)
    if y.device != h.device:
        raise ArgumentValueError(f"{api}: labels are on {y.device} and hidden on {h.device}; move them to one device")
    if not is_integer(ignore_index):
        raise ArgumentTypeError(f"{api}: ignore_index must be a whole number (the label to leave out, {IGNORE_INDEX} "
                                f"by default), got {type(ignore_index).__name__} {ignore_index!r:.40}")
    if not -2**63 <= ignore_index < 2**63:  # compared with int64 labels: torch's raw "int too big to convert" (Q85)
        raise ArgumentValueError(f"{api}: ignore_index must be a whole number in the labels' int64 range [-2**63, "
                                 f"2**63), got {ignore_index!r:.40}; pass the label to leave out ({IGNORE_INDEX} by "
                                 f"default)")
    if chunk is not None:
        chunk = check_whole(api, "chunk", chunk, 1, fix="pass the positions per chunk, or None for the default")
    return h, y, chunk
