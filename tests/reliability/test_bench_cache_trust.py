"""bench's cached BPE must be the one its folder is named for (issue 30 round 23, T8, T9).

T8: the cache folder of bpe:512 with its record (bench_cache.json) deleted and another BPE's tokenizer.json and
leviathan_tokenizer.json (a data folder's bpe:300) copied in; T9: the same files with the record rewritten to their
sha256. Both were measured as "data tiny: bpe:512 (300 ids)", exit 0: the record proves only that the files are the
ones recorded. The cached tokenizer's recorded request and size are now checked against the folder's.
"""

from __future__ import annotations

import json

import pytest

from reliability_support import cli
from test_bench_inputs import _cache, books  # noqa: F401  (books: a fixture)

pytestmark = [pytest.mark.reliability]


def _swap_in_another_bpe(folder, data, record: str) -> None:
    """Put ``data``'s BPE (bpe:300) into bench's cache ``folder``; ``record``: 'deleted' (T8) or 'rewritten' (T9)."""
    from leviathan.bench.data import CACHE_RECORD
    from leviathan.checkpoint.state import fingerprints

    for name in ("tokenizer.json", "leviathan_tokenizer.json"):
        (folder / name).write_bytes((data / name).read_bytes())
    if record == "deleted":
        (folder / CACHE_RECORD).unlink()
    else:
        (folder / CACHE_RECORD).write_text(json.dumps({"files": fingerprints(folder, (CACHE_RECORD,))}) + "\n")


@pytest.mark.parametrize("record", ["deleted", "rewritten"], ids=["T8", "T9"])
def test_another_bpe_in_the_cache_is_refused_whatever_its_record_says(books, data, tmp_path, record):
    from leviathan.bench.data import bench_tokenizer
    from leviathan.errors import UserError

    cache, folder = _cache(tmp_path, 512)
    _swap_in_another_bpe(folder, data, record)
    with pytest.raises(UserError) as info:
        bench_tokenizer("bpe:512", cache, log=lambda msg: None)
    assert str(info.value) == (f"bench's cached tokenizer in {str(folder)!r} is not the one bench trained: the folder "
                               f"caches bpe:512, but it holds 'bpe:300' (300 ids); delete the folder {str(folder)!r} "
                               f"and run bench again (it trains the tokenizer anew)")


def test_a_real_bench_refuses_the_swapped_cache_in_one_line(books, data, tmp_path):
    """T8 as it was found: a real process, one line, exit 2, nothing measured."""
    cache, folder = _cache(tmp_path, 512)
    _swap_in_another_bpe(folder, data, "deleted")
    proc = cli(["bench", "--quick", "--config", "tiny", "--only", "train", "--cache-dir", cache])  # train reads tiny
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        f"error: bench's cached tokenizer in {str(folder)!r} is not the one bench trained"), proc.stderr
    assert "data tiny" not in proc.stdout + proc.stderr


def test_a_cache_without_its_record_is_still_used_when_it_is_the_named_bpe(books, tmp_path):
    """T10 (right): a record-less cache (bench before the record, or the record lost) of the right BPE is used."""
    from leviathan.bench.data import CACHE_RECORD, bench_tokenizer

    cache, folder = _cache(tmp_path, 512)
    (folder / CACHE_RECORD).unlink()
    tok = bench_tokenizer("bpe:512", cache, log=lambda msg: None)
    assert tok.name == "bpe:512" and tok.vocab_size <= 512
