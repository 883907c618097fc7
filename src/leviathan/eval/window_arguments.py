"""What ``token_losses`` / ``evaluate`` take from a Python caller, checked before the first forward.

    check_windows(model, tokens, seq_len, batch_size)   # ValueError naming the argument and what to pass
    check_num_bytes(num_bytes)                          # the text's size in bytes: a number >= 0, or None
    check_text_bytes(num_bytes, len(tokens))            # ... that the tokens can encode (evaluate's; round 25)
    check_shard(shard)                                  # (rank, world) with 0 <= rank < world

The CLI's ``eval`` takes whole numbers from its flags and refuses a window past the model's positions
(``stream.run_seq_len``); the library took what it was given (issue 30 round 17): ``seq_len=32.0`` ended in
"'float' object cannot be interpreted as an integer" inside ``window_batches`` (E103), ``num_bytes=-5`` returned
bpb -11305.7 (E105), float token ids 0.7 above the true ones were cut to integers by ``astype(int64)`` and scored as
the true ids (E106), and ``seq_len=200`` on a model of 64 positions was scored without a word (E107; ``generate``
refuses a prompt past the positions since round 16, C102); 2-D tokens were named as the model's ``input_ids`` of a
shape never passed (round 22, S77). Each is refused; a whole-number numpy scalar is a whole
number (``integers.is_integer``).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ArgumentTypeError, ArgumentValueError
from ..value_rules import whole_problem
from ..positions import model_positions


def check_windows(model, tokens: np.ndarray, seq_len, batch_size) -> None:
    """ValueError for the first argument of a scoring call that is not what it must be (module docstring)."""
    for name, value in (("seq_len", seq_len), ("batch_size", batch_size)):
        problem = whole_problem(value, 1, "a positive integer")
        if problem is not None:
            raise ArgumentValueError(f"{name} {problem}; pass a whole number such as 32")  # E103
    if tokens.ndim != 1:  # S77: a (10, 20) array was "input_ids must be a (batch, length) tensor ..., got (1, 9, 20)"
        raise ArgumentValueError(
            f"tokens must be a 1-D stream of token ids (documents one after another, as a split's .bin "
            f"holds them), got an array of shape {tokens.shape}; pass one stream (tokens.ravel() joins "
            f"the rows of a 2-D array in order)")
    if not np.issubdtype(tokens.dtype, np.integer):  # E106: 5.7 was read as id 5
        raise ArgumentValueError(
            f"tokens must be integer token ids, got an array of {tokens.dtype}; pass the ids as integers "
            f"(np.asarray(ids, dtype=np.int64)): fractional values would be cut to other ids")
    limit = model_positions(model)
    if limit is not None and seq_len > limit:  # E107: as `leviathan eval --seq-len` and generate refuse it
        raise ArgumentValueError(
            f"seq_len {seq_len} exceeds the model's max_position_embeddings ({limit}); pass seq_len <= "
            f"{limit} (the run's data.seq_len is the context it was trained with)")


def check_num_bytes(num_bytes) -> None:
    """ValueError unless ``num_bytes`` is None or a finite number >= 0 (0: unknown, bpb None; E105). An infinite or
    NaN byte count gave bpb None without a word, as if none had been given (issue 30 round 18, G328)."""
    if num_bytes is None:
        return
    if not isinstance(num_bytes, numbers.Real) or isinstance(num_bytes, bool) or not num_bytes >= 0 \
            or not math.isfinite(num_bytes):
        raise ArgumentValueError(
            f"num_bytes must be the UTF-8 size in bytes of the text the tokens encode (a finite number "
            f">= 0), or None for no bits per byte, got {num_bytes!r:.40}")


def check_text_bytes(num_bytes, num_tokens: int) -> None:
    """ValueError (a UserError too) unless ``evaluate``'s ``num_bytes`` (checked by ``check_num_bytes``) is None or a size the
    ``num_tokens`` of a stream can encode: a text token covers at least half a byte (a word-start marker) and a
    document of at least one byte ends with one end-of-text token, so tokens <= 3 x bytes; and at most
    ``MAX_BYTES_PER_TOKEN`` bytes a token. meta.json's splits are held to these counts (``data.meta``); the caller's
    were not: 0 bytes for 200 tokens gave bpb None and 1 byte bpb 1,535 without a word (issue 30 round 25, Y431,
    Y432). Unknown is None (``EvalStream`` gives None for a split without a byte count)."""
    from ..data.meta import MAX_BYTES_PER_TOKEN
    from ..errors import ArgumentValueError

    if num_bytes is None or (num_tokens <= 3 * num_bytes <= 3 * MAX_BYTES_PER_TOKEN * num_tokens):
        return
    raise ArgumentValueError(f"num_bytes {num_bytes!r:.40} is no size of the text {num_tokens:,} tokens encode "
                             f"(it is at least a third of the tokens, as a token covers at least half a byte and one "
                             f"end-of-text token ends each document, and at most {MAX_BYTES_PER_TOKEN:,} bytes a "
                             f"token); pass the UTF-8 size of the text the tokens encode, or None when it is unknown "
                             f"(bits per byte are then left out)")


def check_shard(shard) -> None:
    """ValueError (TypeError for another shape) unless ``shard`` is ``(rank, world)`` with whole numbers
    0 <= rank < world: ``shard=(0, 0)`` ended in Python's "slice step cannot be zero", and ``(2, 2)`` or ``(-1, 2)``
    scored other ranks' batches (or none) without a word, so the ranks' arrays no longer summed to the whole stream's
    (issue 30 round 21, P395, P396)."""
    if not isinstance(shard, (tuple, list)) or len(shard) != 2:
        raise ArgumentTypeError(
            f"shard must be a pair (rank, world), got {shard!r:.40}; pass e.g. shard=(0, 1) for one "
            f"process, or (dist.get_rank(), dist.get_world_size())")
    rank, world = shard
    if whole_problem(world, 1, "a positive integer") is not None:
        raise ArgumentValueError(
            f"shard (rank, world): world {world!r:.20} must be a whole number >= 1 (the processes that "
            f"score the stream); pass e.g. shard=(0, 1)")
    if whole_problem(rank, 0, "a whole number") is not None or rank >= world:
        raise ArgumentValueError(
            f"shard (rank, world): rank {rank!r:.20} must be a whole number in [0, {world}) (one of the "
            f"{world} processes); pass each process its own rank")


AUTOCAST_DTYPES = ("float32", "bfloat16", "float16")  # what a scoring call's autocast runs in


def check_dtype(dtype) -> None:
    """ValueError (TypeError for a text) unless ``dtype`` is None or a torch floating dtype autocast runs in:
    ``evaluate(..., dtype='bfloat16')`` ended in torch's "set_autocast_dtype(): argument 'dtype' (position 2) must be
    torch.dtype, not str" (issue 30 round 18, G327)."""
    import torch

    if dtype is None or dtype in tuple(getattr(torch, name) for name in AUTOCAST_DTYPES):
        return
    hint = f" (the name of torch.{dtype}: pass torch.{dtype})" if isinstance(dtype, str) and hasattr(torch, dtype) \
        else ""
    error = ArgumentTypeError if not isinstance(dtype, torch.dtype) else ArgumentValueError  # round 35 (AI162)
    raise error(f"dtype must be None or one of torch.{', torch.'.join(AUTOCAST_DTYPES)}, got {dtype!r:.40}{hint}; "
                f"pass e.g. dtype=torch.bfloat16")


def check_sums(total_nats, num_predicted) -> None:
    """ValueError unless ``summarize``'s sums can be a loss: ``num_predicted`` a whole number >= 1 and
    ``total_nats`` a number >= 0 (NaN and infinity pass: a diverged model's sum, reported as such). ``summarize(5.0,
    0)`` returned loss NaN and ``summarize(-5.0, 10)`` loss -0.5, perplexity 0.61 without a word, values every reader
    of a row refuses (issue 30 round 21, P392, P393)."""
    problem = whole_problem(num_predicted, 1, "a whole number >= 1")
    if problem is not None:
        raise ArgumentValueError(f"num_predicted {problem} (a loss is a mean over predicted tokens); pass their count "
                         f"(len(token_losses(...)))")
    if not isinstance(total_nats, numbers.Real) or isinstance(total_nats, bool) or total_nats < 0:
        raise ArgumentValueError(
            f"total_nats must be the summed negative log-likelihood of the predicted tokens (a number "
            f">= 0: each token's loss is >= 0), got {total_nats!r:.40}; pass token_losses(...).sum()")
