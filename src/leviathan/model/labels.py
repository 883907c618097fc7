"""Labels given to ``CausalLM.forward`` checked before the loss reads them.

    check_labels(labels, input_ids, vocab_size)   # ValueError / TypeError naming the label and the valid range

A label outside [0, vocab_size) (other than the ignored -100) ended in torch's ``IndexError: Target 999 is out of
bounds`` on the CPU and a device-side assert on a GPU, which names neither the argument nor the range (issue 30
round 8); float labels, or labels of another shape than the inputs, likewise reached torch's own messages. Labels
that are all -100 gave a loss of NaN without a word (torch's mean over zero targets; round 18, G262): refused.
"""

from __future__ import annotations

import torch

from ..errors import ArgumentTypeError, ArgumentValueError

IGNORE_INDEX = -100  # a label that marks a position to leave out of the loss (torch's default ignore_index)


@torch.compiler.disable
def check_labels(labels: torch.Tensor, input_ids: torch.Tensor, vocab_size: int) -> None:
    """TypeError for labels that are not an integer tensor, ValueError for a shape other than ``input_ids``' or a
    label outside [0, vocab_size) that is not ``IGNORE_INDEX`` (kept out of compiled graphs: it reads values). Both
    are UserErrors too (``errors.ArgumentTypeError``, ``ArgumentValueError``; issue 30 round 22)."""
    check_label_type(labels, "labels")
    if labels.shape != input_ids.shape:
        raise ArgumentValueError(f"labels must have the shape of input_ids {tuple(input_ids.shape)} (one target per "
                                 f"position), got {tuple(labels.shape)}")
    if labels.numel() == 0:
        return
    check_label_values(labels, vocab_size)
    check_some_target(labels)


def check_some_target(labels: torch.Tensor, ignore_index: int = IGNORE_INDEX, api: str = "") -> None:
    """ValueError (a UserError too) when every one of the (non-empty) ``labels`` is ``ignore_index``: the mean over no
    target is a NaN loss without a word (round 18, G262, in ``CausalLM.forward``; round 24, W115, in
    ``linear_cross_entropy``). One scan of the labels."""
    if labels.numel() and bool((labels == ignore_index).all()):
        raise ArgumentValueError(f"{api}every label is {ignore_index} (ignored), so the loss would be a mean over no "
                                 f"target (NaN); give at least one target id, or leave out a batch with nothing to "
                                 f"score")


def check_label_type(labels, name: str) -> None:
    """TypeError (a UserError too) unless ``labels`` is an integer tensor: float labels reached torch's "gather():
    Expected dtype int32/int64 for index" in ``linear_cross_entropy`` (issue 30 round 22, S520). O(1)."""
    if not isinstance(labels, torch.Tensor) or labels.dtype.is_floating_point or labels.dtype.is_complex \
            or labels.dtype == torch.bool:
        shown = labels.dtype if isinstance(labels, torch.Tensor) else type(labels).__name__
        raise ArgumentTypeError(f"{name} must be an integer tensor (torch.long) of target ids, got {shown}")
    if labels.dtype != torch.int64:  # uint16 (the token files' dtype), uint8, int32: torch's raw "lt_cpu not
        raise ArgumentTypeError(f"{name} are {labels.dtype}; target ids are torch.long (int64), as torch's "
                                f"cross-entropy takes them: pass labels.long()")  # implemented", "gather(): Expected
        # dtype int32/int64", "expected target dtype to be Long or Byte" (issue 30 round 26, Q82, Q113, Q185)
    if labels.is_meta:  # the range check's .item() was torch's raw RuntimeError (round 25, beside Y52)
        from ..meta_device import refuse_meta

        refuse_meta(labels, name, "pass target ids with values (on the CPU or a GPU)")


@torch.compiler.disable
def check_label_values(labels: torch.Tensor, vocab_size: int, ignore_index: int = IGNORE_INDEX,
                       what: str = "the model's vocab_size") -> None:
    """ValueError (a UserError too) naming the first label outside [0, vocab_size) that is not ``ignore_index``: torch
    said ``IndexError: Target 999 is out of bounds`` (a device-side assert on a GPU), naming neither the label nor the
    range (issue 30 round 8; ``linear_cross_entropy``'s gather likewise, round 22, S517). One scan of the labels."""
    bad = ((labels < 0) | (labels >= vocab_size)) & (labels != ignore_index)
    if bool(bad.any()):
        raise ArgumentValueError(f"label {int(labels[bad][0])} is outside [0, {vocab_size}) ({what}; {ignore_index} "
                                 f"marks a position to ignore); check the tokenizer matches the model")


@torch.compiler.disable
def check_input_ids(input_ids: torch.Tensor, vocab_size: int) -> None:
    """ValueError for an input id outside [0, vocab_size) of a table embedding: torch said ``IndexError: index out of
    range in self`` on the CPU (a device-side assert on a GPU), naming neither the id nor the range (issue 30 round 11,
    S147c; the generator checks its own ids, ``digits.check_ids``). Kept out of compiled graphs: it reads values."""
    if input_ids.numel() and not input_ids.dtype.is_floating_point:
        bad = (input_ids < 0) | (input_ids >= vocab_size)
        if bool(bad.any()):
            raise ArgumentValueError(f"input id {int(input_ids[bad][0])} is outside [0, {vocab_size}) (the model's "
                                     f"vocab_size); check the tokenizer matches the model")



OUTSIDE_MODES = ("raise", "nan")  # what scoring does with a target outside a restricted softmax


def check_outside(outside) -> None:
    """ValueError unless ``outside`` is one of ``OUTSIDE_MODES``: ``token_losses(..., outside='nope')`` (and
    ``CausalLM.token_nll``) scored as 'raise' without a word, so a misspelt 'nan' raised on the first target outside
    the softmax instead of marking it (issue 30 round 21, P394)."""
    if not isinstance(outside, str) or outside not in OUTSIDE_MODES:
        raise ArgumentValueError(f"outside must be 'raise' (a target outside the restricted softmax is an error) or "
                                 f"'nan' (it scores NaN; drop those before averaging), got {outside!r:.40}")
