"""Reading prepared data: a validated memmap per split and a resumable, rank-sharded batch loader.

    ds = TokenDataset("data/stdlib", "train")          # ds.tokens: np.memmap (N,), ds.meta: PreparedMeta
    loader = BatchLoader(ds, seq_len=256, batch_size=32, seed=0, rank=r, world_size=w)
    x, y = loader.next_batch()                         # int64 (B, T) each; y[:, t] == x[:, t + 1]
    state = loader.state_dict()                        # plain JSON ints (and the shuffle mode)
    loader.load_state_dict(state)                      # the next batches are exactly the same again

Windows. The split is cut into ``num_windows = (N - 1) // T`` windows; window i covers tokens ``[i*T, i*T + T +
1)``: its first T tokens are the inputs x, its last T the targets y. Inputs never overlap and every token after the
first is a target exactly once per epoch; the tail that does not fill a window is dropped. Windows cross document
boundaries (documents are separated by eot in the file).

Order. ``shuffle="windows"`` (default): epoch e visits all windows in a permutation drawn from
``numpy.random.default_rng([seed, e])``, epochs following each other forever: one global sequence stream that
depends only on (seed, data, seq_len). ``shuffle="none"``: file order (evaluation). ``shuffle="buffer"``: the
paper's setup, a shuffle buffer of ``shuffle_buffer`` sequences (default 10,000) over the windows in file order
(each output takes a pseudo-random slot and refills it with the next window: a local shuffle only).

Ranks. Rank r of w takes the global stream positions ``[r::w]`` (at step k, ``p + r + j*w`` for ``j < batch_size``,
p = k * batch_size * w), so w ranks with batch b see exactly the sequences one rank with batch w*b sees (tested).

Resume. ``state_dict()`` records the global stream position, the seed, seq_len, num_windows and the shuffle mode
(plus the buffer for ``shuffle="buffer"``); ``load_state_dict`` checks they match and continues from there. The
position is global, so resuming with another world size or batch size continues the same stream.

Footguns: ids are stored as uint16/uint32 and returned as int64 (what embedding layers index
with); ``TokenDataset`` checks the file length and a sample of ids against meta.json, so a
truncated copy or a data dir from another tokenizer fails loudly instead of training on garbage.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from ..integers import is_integer
from ..value_rules import api_check, check_read_path, whole_problem
from ..errors import UserError, not_a_file
from ..seeds import seed_problem
from .companions import check_file, file_digest
from .meta import DATA_DIR_FIX, read_meta

__all__ = ["TokenDataset", "BatchLoader", "SHUFFLE_MODES"]

SHUFFLE_MODES = ("windows", "buffer", "none")
_SPLIT_ALIASES = {"valid": "val", "validation": "val", "dev": "val"}
_FULL_CHECK_TOKENS = 64_000_000  # at most this many ids are scanned for ids >= vocab_size


def _claim_while_mapped(folder: Path, tokens: np.ndarray) -> None:
    """Claim ``folder`` as read (``locking.reading``) for as long as the memory map ``tokens`` (or any view of it, a
    BatchLoader's) lives: ``prepare(..., overwrite=True)`` replaced a data folder a BatchLoader of the same process, or
    of another script, was reading, without a word, the loader going on through its map of the deleted files (issue
    30 round 27, S521; only ``train`` took the claim). The claim goes with the map (``weakref.finalize``), or with the
    process."""
    import weakref

    from ..locking import reading

    claim = reading(folder)
    claim.__enter__()
    weakref.finalize(tokens, claim.__exit__, None, None, None)


class TokenDataset:
    """One split of a prepared data dir as a read-only memmap: ``.tokens`` (N,) uint16/uint32, ``.meta`` (PreparedMeta),
    ``.vocab_size``, ``.eot_id``, ``.num_tokens``, ``.data_dir``, ``.split``, ``.num_bytes`` (the split's UTF-8 bytes)."""

    def __init__(self, data_dir: str | os.PathLike, split: str = "train", *, check_ids: bool = True):
        check_read_path("TokenDataset", "data_dir", data_dir, DATA_DIR_FIX)  # M336 (round 20)
        self.data_dir = Path(data_dir)
        self.meta = read_meta(self.data_dir)
        split = _SPLIT_ALIASES.get(split, split)
        splits = self.meta.splits
        if split not in splits:
            raise UserError(f"{self.data_dir} has no split {split!r} (has: {', '.join(splits)}); use one of those")
        self.split = split
        info = splits[split]
        self.vocab_size = self.meta.vocab_size
        self.eot_id = self.meta.eot_id
        self.dtype = np.dtype(self.meta.dtype)
        self.num_bytes = info.bytes or 0
        path = self.data_dir / info.file
        self.path = path
        if not path.is_file():  # a pipe or a folder there was "is missing" (issue 30 round 23, U394, U402)
            raise UserError(f"{path} {not_a_file(path) or 'is missing'}; the data dir is incomplete; re-run "
                            f"`leviathan prepare` "
                            f"(with --overwrite) to rebuild it")
        size = path.stat().st_size
        if size % self.dtype.itemsize:
            raise UserError(f"{path} is {size} bytes, not a multiple of {self.dtype.itemsize} ({self.dtype.name}): "
                            f"the file is truncated or damaged; re-copy it or re-run `leviathan prepare --overwrite`")
        n = size // self.dtype.itemsize
        expected = info.tokens
        other = "uint16" if self.dtype.itemsize == 4 else "uint32"
        if expected is not None and expected != n and expected * np.dtype(other).itemsize == size:
            # round 7 (B13): meta.json's dtype edited from uint16 to uint32 blamed the token file
            raise UserError(f"{self.data_dir / 'meta.json'}: field 'dtype' is {self.dtype.name!r}, but {path.name}'s "
                            f"{size:,} bytes are the {int(expected):,} tokens meta.json records as {other}: meta.json "
                            f"was edited or damaged; restore it (dtype {other!r}), or re-run `leviathan prepare "
                            f"--overwrite`")
        if expected is not None and expected != n and self._recorded_file(path):
            # round 9 (M18): the count edited in meta.json blamed the token file ("truncated or from another
            # preparation") although the file is the one meta.json's own digest records
            raise UserError(f"{self.data_dir / 'meta.json'}: field 'splits.{split}.tokens' is {expected!r}, but "
                            f"{path.name}, the file prepared with this meta.json (its sha256 is the one recorded), "
                            f"holds {n:,} tokens: meta.json was edited or damaged; restore it, or re-run `leviathan "
                            f"prepare --overwrite`")
        if expected is not None and expected != n:
            raise UserError(f"{path} holds {n:,} tokens but meta.json says {int(expected):,}: the file is truncated "
                            f"or from another preparation; re-copy the data dir or re-run `leviathan prepare --overwrite`")
        check_file(self.data_dir, self.meta.files, path.name)  # the token file prepared with this meta.json
        self.tokens = (np.memmap(path, dtype=self.dtype, mode="r", shape=(n,)) if n
                       else np.zeros(0, dtype=self.dtype))
        if n:
            _claim_while_mapped(self.data_dir, self.tokens)
        if check_ids:
            self._check_ids()

    def _recorded_file(self, path: Path) -> bool:
        """Whether meta.json records a digest for ``path`` and the file has it (so meta.json's numbers are the
        ones to doubt, not the file)."""
        files = self.meta.files
        return isinstance(files, dict) and files.get(path.name) is not None and \
            file_digest(path) == files[path.name]

    def _check_ids(self) -> None:
        """Scan all ids (or, above 64M tokens, 256 evenly spaced blocks) for ids >= vocab_size."""
        n = len(self.tokens)
        if n == 0:
            return
        if n <= _FULL_CHECK_TOKENS:
            blocks = [(0, n)]
        else:
            block = _FULL_CHECK_TOKENS // 256
            blocks = [(int(s), int(s) + block) for s in np.linspace(0, n - block, 256)]
        for start, stop in blocks:
            chunk = self.tokens[start:stop]
            if int(chunk.max()) >= self.vocab_size:
                first = int(np.argmax(chunk >= self.vocab_size))
                raise UserError(f"{self.path}: token id {int(chunk[first])} at position {start + first:,} is >= vocab_size "
                                f"{self.vocab_size} from meta.json: the file belongs to another tokenizer or is "
                                f"damaged; re-run `leviathan prepare --overwrite`")

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def num_tokens(self) -> int:
        return len(self.tokens)

    def tokenizer(self):
        """The tokenizer this data was prepared with."""
        from .tokenizer import load_tokenizer

        return load_tokenizer(self.data_dir)

    def __repr__(self) -> str:
        return (f"TokenDataset({str(self.data_dir)!r}, {self.split!r}: {len(self):,} tokens, "
                f"{self.meta.tokenizer}, vocab {self.vocab_size:,})")


def corpus_ids(data_dir: str | os.PathLike) -> np.ndarray:
    """Sorted ids (int64) that occur in any split of a prepared data dir: the output vocabulary of a
    restricted softmax (``data.softmax: corpus``), the same for every model trained on this data."""
    meta = read_meta(data_dir)
    seen = np.zeros(meta.vocab_size, dtype=bool)
    for split in meta.splits:
        tokens = TokenDataset(data_dir, split, check_ids=False).tokens
        if len(tokens):
            seen |= np.bincount(tokens, minlength=seen.size)[:seen.size] > 0
    return np.flatnonzero(seen)


# --------------------------------------------------------------------------------------------


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on uint64 (vectorised): a fixed pseudo-random function of the counter."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def _whole(value, name: str, minimum: int) -> int:
    """``value`` as an int when it is a whole number >= ``minimum`` (a float that is one, such as 32.0, too), else the
    UserError naming ``name``: ``BatchLoader(..., seed=nan)`` ended in int()'s "cannot convert float NaN to integer"
    (issue 30 round 18, G199)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    api_check("BatchLoader", name, whole_problem(value, minimum, f"a whole number >= {minimum}"),
              f"pass {name} as a whole number, e.g. {name}={max(minimum, 1)}")
    return int(value)


def _token_array(dataset) -> np.ndarray:
    """The 1-D integer ids >= 0 of a token array given to ``BatchLoader`` (a TokenDataset's own ids are checked
    against meta.json's vocabulary where it is read). Float ids were cut to other ids by ``astype(int64)`` (297.8
    trained as 297) and negative ids returned in batches, both without a word (issue 30 round 18, G200, G201)."""
    tokens = np.asarray(dataset)
    if tokens.ndim != 1:
        raise UserError(f"BatchLoader needs a 1-D token array, got shape {tokens.shape}")
    if not np.issubdtype(tokens.dtype, np.integer):
        api_check("BatchLoader", "dataset", f"token ids must be integers, got an array of {tokens.dtype}",
                  "pass the ids as integers (np.asarray(ids, dtype=np.int64)): fractional values would be cut to "
                  "other ids")
    if len(tokens) and np.issubdtype(tokens.dtype, np.signedinteger) and int(tokens.min()) < 0:
        first = int(np.argmax(tokens < 0))
        api_check("BatchLoader", "dataset", f"token id {int(tokens[first])} at position {first:,} is negative",
                  "pass token ids >= 0 (the ids a tokenizer gives)")
    return tokens


def _seed(value) -> int:
    """``value`` when it is a seed (``seeds.seed_problem``: an integer in [0, 2**32 - 1]), else the UserError naming
    it: ``seed=-1`` was taken and ended in numpy's "expected non-negative integer" at the first batch (round 18,
    G198)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    api_check("BatchLoader", "seed", seed_problem(value), "pass an integer seed such as 0")
    return int(value)


def _check_batch_fits(batch_size: int, world_size: int, num_windows: int) -> None:
    """UserError when one global batch (``batch_size * world_size`` sequences) needs more windows than the data has:
    ``BatchLoader('data1', 32, 10**6)`` over 447 windows returned a (1000000, 32) batch, each window about 2,237 times
    in it, without a word, while a seq_len past the data is refused (issue 30 round 20, M288)."""
    ranks = f" x world_size {world_size}" if world_size > 1 else ""
    api_check("BatchLoader", "batch_size", f"one batch of {batch_size:,} sequences{ranks} is more than the data's "
              f"{num_windows:,} windows (of seq_len tokens): each window would appear several times in one batch"
              if batch_size * world_size > num_windows else None,
              f"use a batch_size of at most {num_windows // world_size:,}, a shorter seq_len, or more data")


LOADER_FORMAT = 1  # the "format" of ``BatchLoader.state_dict()`` (and of state.json's loader)


class BatchLoader:
    """Deterministic, resumable (x, y) batches of int64 (batch_size, seq_len); see module docstring."""

    def __init__(self, dataset, seq_len: int, batch_size: int, seed: int = 0, rank: int = 0,
                 world_size: int = 1, shuffle: str = "windows", shuffle_buffer: int = 10_000):
        """Parameters: the loader's settings, each one saved in its resume state and checked there."""
        if isinstance(dataset, (str, os.PathLike)):
            dataset = TokenDataset(dataset, "train")
        tokens = dataset.tokens if isinstance(dataset, TokenDataset) else _token_array(dataset)
        self.dataset = dataset
        self.tokens = tokens
        self.seq_len, self.batch_size = _whole(seq_len, "seq_len", 1), _whole(batch_size, "batch_size", 1)
        self.rank, self.world_size = _whole(rank, "rank", 0), _whole(world_size, "world_size", 1)
        self.seed = _seed(seed)
        if self.seq_len < 1 or self.batch_size < 1:
            raise UserError(f"seq_len and batch_size must be >= 1, got {seq_len} and {batch_size}")
        if not 0 <= self.rank < self.world_size:
            raise UserError(f"rank {rank} is not in [0, world_size={world_size})")
        if shuffle not in SHUFFLE_MODES:
            raise UserError(f"shuffle={shuffle!r} is not one of {', '.join(SHUFFLE_MODES)}")
        self.shuffle = shuffle
        self.num_windows = (len(tokens) - 1) // self.seq_len if len(tokens) else 0
        if self.num_windows < 1:
            name = f"{dataset.path}" if isinstance(dataset, TokenDataset) else "the token array"
            raise UserError(f"{name} has {len(tokens):,} tokens, fewer than seq_len + 1 = {self.seq_len + 1}; "
                            f"use a shorter seq_len or more data")
        _check_batch_fits(self.batch_size, self.world_size, self.num_windows)
        shuffle_buffer = _whole(shuffle_buffer, "shuffle_buffer", 1) if shuffle == "buffer" else 0
        self.shuffle_buffer = min(shuffle_buffer, self.num_windows)
        self.position = 0  # global stream position: sequences consumed by all ranks together
        self._perm_epoch, self._perm = -1, None
        self._buffer: np.ndarray | None = None
        if shuffle == "buffer":
            self._buffer = np.arange(self.shuffle_buffer, dtype=np.int64)  # the stream's first windows

    # ----------------------------------------------------------------------------------------
    # the global stream

    @property
    def epoch(self) -> int:
        """Epochs (passes over all windows) completed by the global stream."""
        return self.position // self.num_windows

    def __len__(self) -> int:
        """Batches per epoch for this rank (the stream itself never ends)."""
        return self.num_windows // (self.batch_size * self.world_size)

    def _permutation(self, epoch: int) -> np.ndarray:
        if epoch != self._perm_epoch:
            self._perm = np.random.default_rng([self.seed, epoch]).permutation(self.num_windows)
            self._perm_epoch = epoch
        return self._perm

    def _windows(self, positions: np.ndarray) -> np.ndarray:
        """Window index at each global stream position (``windows`` / ``none`` modes)."""
        if self.shuffle == "none":
            return positions % self.num_windows
        out = np.empty_like(positions)
        epochs = positions // self.num_windows
        for e in np.unique(epochs):
            sel = epochs == e
            out[sel] = self._permutation(int(e))[positions[sel] % self.num_windows]
        return out

    def _take_buffer(self, count: int) -> np.ndarray:
        """Advance the shuffle buffer by ``count`` outputs from ``self.position``; return their windows."""
        buf, size = self._buffer, self.shuffle_buffer
        counters = np.arange(self.position, self.position + count, dtype=np.uint64)
        slots = (_mix64(counters ^ _mix64(np.array([self.seed], dtype=np.uint64))) % np.uint64(size)).astype(np.int64)
        out = np.empty(count, dtype=np.int64)
        for k in range(count):  # sequential by nature: each output refills the slot it emptied
            s = slots[k]
            out[k] = buf[s]
            buf[s] = (size + self.position + k) % self.num_windows  # next window of the stream
        return out

    # ----------------------------------------------------------------------------------------

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The next (x, y) for this rank: int64 (batch_size, seq_len) each, y shifted by one token."""
        g = self.batch_size * self.world_size  # global batch
        if self.shuffle == "buffer":
            windows = self._take_buffer(g)[self.rank::self.world_size]
        else:
            positions = self.position + self.rank + self.world_size * np.arange(self.batch_size, dtype=np.int64)
            windows = self._windows(positions)
        self.position += g
        starts = windows * self.seq_len
        idx = starts[:, None] + np.arange(self.seq_len + 1)[None, :]  # (B, T+1)
        chunk = torch.from_numpy(np.asarray(self.tokens[idx]).astype(np.int64))
        return chunk[:, :-1].contiguous(), chunk[:, 1:].contiguous()

    def __iter__(self):
        while True:
            yield self.next_batch()

    def state_dict(self) -> dict:
        state = {"format": LOADER_FORMAT, "position": int(self.position), "seed": self.seed, "seq_len": self.seq_len,
                 "num_windows": int(self.num_windows), "shuffle": self.shuffle}
        if self.shuffle == "buffer":
            state["shuffle_buffer"] = int(self.shuffle_buffer)
            state["buffer"] = [int(v) for v in self._buffer]
        return state

    def load_state_dict(self, state: dict) -> None:
        """Resume where ``state_dict()`` left off. Every field is checked as state.json's ``loader`` is
        (``checkpoint.state._loader``): ``format`` too, 1 or absent (a state of before the field); -5 was taken
        without a word (issue 30 round 28, U410)."""
        fmt = state.get("format", LOADER_FORMAT) if isinstance(state, dict) else None
        if not is_integer(fmt) or fmt != LOADER_FORMAT:  # True == 1 to Python: no writer writes it; np.int64(1) is 1
            what = f"its format is {fmt!r:.40}" if isinstance(state, dict) else f"it is {type(state).__name__}"
            raise UserError(f"BatchLoader.load_state_dict: state: {what}, expected a dict of format {LOADER_FORMAT}; "
                            f"pass a state that BatchLoader.state_dict() returned")
        for key in ("seed", "seq_len", "num_windows", "shuffle") + (("shuffle_buffer",) if self.shuffle == "buffer" else ()):
            mine = getattr(self, key)
            if key in state and state[key] != mine:
                raise UserError(f"cannot resume the data loader: the saved {key} is {state[key]!r} but this run has "
                                f"{mine!r}; resume with the same data, seq_len, seed and shuffle settings")
        if "position" not in state:
            raise UserError("loader state has no 'position'; it was not written by BatchLoader.state_dict()")
        # -5 read as a position ended in "'NoneType' object is not subscriptable" at the next batch, 'abc' in int()'s
        # ValueError (issue 30 round 18, G204, G206): the rule of state.json's loader.position (E113)
        api_check("BatchLoader.load_state_dict", "position", whole_problem(state["position"], 0, "a whole number >= 0"),
                  "pass a state that BatchLoader.state_dict() returned (position counts the sequences read)")
        self.position = int(state["position"])
        if self.shuffle == "buffer":
            buf = state.get("buffer")
            if buf is None or len(buf) != self.shuffle_buffer:
                raise UserError("loader state lacks the shuffle buffer contents; it was saved by another shuffle mode")
            self._buffer = np.asarray(buf, dtype=np.int64)
