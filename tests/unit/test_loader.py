"""TokenDataset validation and BatchLoader: windows, determinism, rank sharding, exact resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from leviathan.data.loader import BatchLoader, TokenDataset
from leviathan.errors import UserError

VOCAB = 5000


def _data_dir(root: Path, n_train: int = 4001, n_val: int = 300, dtype=np.uint16, vocab: int = VOCAB) -> Path:
    """A hand-made data dir whose token i is i % vocab: window contents reveal their position."""
    root.mkdir(parents=True, exist_ok=True)
    splits = {}
    for name, n in (("train", n_train), ("val", n_val)):
        (np.arange(n) % vocab).astype(dtype).tofile(root / f"{name}.bin")
        splits[name] = {"file": f"{name}.bin", "tokens": n, "documents": 1, "bytes": n * 3}
    meta = {"format": 1, "tokenizer": "cl100k_base", "vocab_size": vocab, "dtype": np.dtype(dtype).name,
            "eot_id": vocab - 1, "splits": splits, "source": "test", "fingerprint": "0" * 64, "created": "now"}
    (root / "meta.json").write_text(json.dumps(meta))
    return root


@pytest.fixture
def ds(tmp_path):
    return TokenDataset(_data_dir(tmp_path / "d"), "train")


def _starts(x: torch.Tensor) -> list[int]:
    return x[:, 0].tolist()


def test_dataset_view(ds):
    assert len(ds) == 4001 and ds.vocab_size == VOCAB and ds.eot_id == VOCAB - 1 and ds.tokens.dtype == np.uint16
    assert ds.meta.tokenizer == "cl100k_base" and ds.num_bytes == 4001 * 3
    assert len(TokenDataset(ds.data_dir, "valid")) == 300  # alias of val


def test_batches_are_shifted_windows(ds):
    loader = BatchLoader(ds, seq_len=16, batch_size=4, seed=0)
    assert loader.num_windows == 250  # (4001 - 1) // 16
    x, y = loader.next_batch()
    assert x.shape == y.shape == (4, 16) and x.dtype == y.dtype == torch.int64
    assert torch.equal(y, x + 1)  # tokens are consecutive integers here
    assert all(s % 16 == 0 for s in _starts(x))


def test_an_epoch_visits_every_window_once_and_epochs_differ(ds):
    loader = BatchLoader(ds, seq_len=16, batch_size=10, seed=3)
    epoch0 = [s for _ in range(25) for s in _starts(loader.next_batch()[0])]
    epoch1 = [s for _ in range(25) for s in _starts(loader.next_batch()[0])]
    assert sorted(epoch0) == sorted(epoch1) == list(range(0, 4000, 16))
    assert epoch0 != epoch1 and loader.epoch == 2
    again = BatchLoader(ds, seq_len=16, batch_size=10, seed=3)
    assert [s for _ in range(25) for s in _starts(again.next_batch()[0])] == epoch0
    other = BatchLoader(ds, seq_len=16, batch_size=10, seed=4)
    assert [s for _ in range(25) for s in _starts(other.next_batch()[0])] != epoch0


@pytest.mark.parametrize("shuffle", ["windows", "buffer", "none"])
def test_ranks_see_the_single_rank_stream(ds, shuffle):
    world, b = 3, 2
    single = BatchLoader(ds, seq_len=8, batch_size=world * b, seed=1, shuffle=shuffle, shuffle_buffer=50)
    ranks = [BatchLoader(ds, seq_len=8, batch_size=b, seed=1, rank=r, world_size=world, shuffle=shuffle,
                         shuffle_buffer=50) for r in range(world)]
    for _ in range(60):  # crosses epochs (500 windows / 6 per step)
        x_all, _ = single.next_batch()
        parts = [r.next_batch()[0] for r in ranks]
        for r in range(world):
            assert torch.equal(parts[r], x_all[r::world])


@pytest.mark.parametrize("shuffle", ["windows", "buffer", "none"])
def test_resume_is_exact(ds, shuffle):
    kw = dict(seq_len=8, batch_size=7, seed=5, shuffle=shuffle, shuffle_buffer=40)
    loader = BatchLoader(ds, **kw)
    for _ in range(30):
        loader.next_batch()
    state = json.loads(json.dumps(loader.state_dict()))  # plain JSON
    expected = [loader.next_batch() for _ in range(90)]  # crosses an epoch boundary
    fresh = BatchLoader(ds, **kw)
    fresh.load_state_dict(state)
    for want, got in zip(expected, (fresh.next_batch() for _ in range(90))):
        assert torch.equal(want[0], got[0]) and torch.equal(want[1], got[1])


def test_resume_with_another_world_size_continues_the_stream(ds):
    one = BatchLoader(ds, seq_len=8, batch_size=4, seed=2)
    for _ in range(5):
        one.next_batch()
    state = one.state_dict()
    want, _ = one.next_batch()
    halves = []
    for r in range(2):
        ld = BatchLoader(ds, seq_len=8, batch_size=2, seed=2, rank=r, world_size=2)
        ld.load_state_dict(state)
        halves.append(ld.next_batch()[0])
    assert torch.equal(halves[0], want[0::2]) and torch.equal(halves[1], want[1::2])


def test_shuffle_modes(ds):
    seq = BatchLoader(ds, seq_len=16, batch_size=5, seed=0, shuffle="none")
    assert _starts(seq.next_batch()[0]) == [0, 16, 32, 48, 64]
    buf = BatchLoader(ds, seq_len=16, batch_size=50, seed=0, shuffle="buffer", shuffle_buffer=20)
    seen = [s // 16 for _ in range(5) for s in _starts(buf.next_batch()[0])]
    assert seen != sorted(seen)  # shuffled ...
    assert max(abs(w - i) for i, w in enumerate(seen)) < 250  # ... but only locally
    assert len(set(seen[:100])) > 90
    state = buf.state_dict()
    assert state["shuffle"] == "buffer" and len(state["buffer"]) == 20


def test_resume_mismatch_is_a_user_error(ds):
    state = BatchLoader(ds, seq_len=8, batch_size=2, seed=0).state_dict()
    with pytest.raises(UserError, match="saved seq_len is 8"):
        BatchLoader(ds, seq_len=16, batch_size=2, seed=0).load_state_dict(state)
    with pytest.raises(UserError, match="saved shuffle"):
        BatchLoader(ds, seq_len=8, batch_size=2, seed=0, shuffle="none").load_state_dict(state)


def test_bad_loader_arguments(ds):
    with pytest.raises(UserError, match="fewer than seq_len"):
        BatchLoader(ds, seq_len=5000, batch_size=1, seed=0)
    with pytest.raises(UserError, match="rank 2"):
        BatchLoader(ds, seq_len=8, batch_size=1, seed=0, rank=2, world_size=2)
    with pytest.raises(UserError, match="shuffle"):
        BatchLoader(ds, seq_len=8, batch_size=1, seed=0, shuffle="random")


def test_damaged_data_dirs_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="no meta.json.*leviathan prepare"):
        TokenDataset(tmp_path, "train")
    d = _data_dir(tmp_path / "trunc")
    with open(d / "train.bin", "ab") as f:
        f.write(b"\x00")  # odd size for uint16
    with pytest.raises(UserError, match=r"train\.bin is 8003 bytes, not a multiple of 2"):
        TokenDataset(d, "train")
    d = _data_dir(tmp_path / "short")
    (d / "train.bin").write_bytes((d / "train.bin").read_bytes()[:-20])
    with pytest.raises(UserError, match="holds 3,991 tokens but meta.json says 4,001"):
        TokenDataset(d, "train")
    d = _data_dir(tmp_path / "ids", vocab=6000)
    meta = json.loads((d / "meta.json").read_text())
    meta["vocab_size"], meta["eot_id"] = 100, 0  # ids 100..3999 now exceed it
    (d / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(UserError, match="token id 100 at position 100 is >= vocab_size 100"):
        TokenDataset(d, "train")
    d = _data_dir(tmp_path / "foreign")
    (d / "meta.json").write_text(json.dumps({"format": 7, "whatever": True}))
    with pytest.raises(UserError, match="not a leviathan data dir"):
        TokenDataset(d, "train")
    d = _data_dir(tmp_path / "missing")
    (d / "val.bin").unlink()
    with pytest.raises(UserError, match=r"val\.bin is missing"):
        TokenDataset(d, "val")
    with pytest.raises(UserError, match="no split 'test'"):
        TokenDataset(d, "test")


def test_uint32_and_prepared_dirs(tmp_path):
    d = _data_dir(tmp_path / "u32", dtype=np.uint32, vocab=70000)
    ds = TokenDataset(d, "train")
    x, y = BatchLoader(ds, seq_len=32, batch_size=2, seed=0).next_batch()
    assert x.dtype == torch.int64 and torch.equal(y, x + 1)
    from leviathan.data.prepare import prepare

    (tmp_path / "c").mkdir()
    for i in range(5):
        (tmp_path / "c" / f"{i}.txt").write_text(f"document number {i} " * 20)
    prepare(tmp_path / "c", tmp_path / "p", "cl100k_base", val_fraction=0.0, progress=False, log=lambda m: None)
    ds = TokenDataset(tmp_path / "p", "train")
    assert ds.tokenizer().name == "cl100k_base"
    x, y = BatchLoader(tmp_path / "p", seq_len=16, batch_size=3, seed=0).next_batch()
    assert torch.equal(x[:, 1:], y[:, :-1])
