"""``leviathan bench``'s inputs (issue 30 round 15): an empty ``--only`` was read as "every section" (A34), running
train, modes, generator, memory, decode and hf for 85 s where ``--config ''`` is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli_error  # noqa: E402

pytestmark = [pytest.mark.reliability]


@pytest.mark.parametrize("only", ["", " , "])
def test_bench_refuses_an_empty_only(tmp_path, only):
    """A34: one line, before any timing."""
    line = cli_error(["bench", "--quick", "--config", "tiny", "--only", only, "--cache-dir", tmp_path / "bc"])
    assert line.startswith("error: --only is empty; name the sections to run (of train, "), line
    assert not (tmp_path / "bc").exists()


@pytest.fixture
def books(tmp_path, monkeypatch) -> Path:
    """A tiny Gutenberg folder (train, valid) as ``$LEVIATHAN_DATA``, so bench trains its BPE on it."""
    from reliability_support import write_corpus

    root = tmp_path / "books"
    for split, seed in (("train", 0), ("valid", 1)):
        folder = write_corpus(root / "gutenberg" / split, num_docs=20, seed=seed)
        for doc in folder.iterdir():
            doc.rename(doc.with_suffix(".txt"))
    monkeypatch.setenv("LEVIATHAN_DATA", str(root))
    return root


def _cache(tmp_path: Path, vocab: int = 300) -> tuple[Path, Path]:
    from leviathan.bench.data import bench_tokenizer

    cache = tmp_path / "bc"
    bench_tokenizer(f"bpe:{vocab}", cache, log=lambda msg: None)
    (folder,) = cache.glob(f"bpe-{vocab}-*")
    return cache, folder


def test_bench_refuses_a_cached_tokenizer_it_did_not_train(books, data, tmp_path):
    """A43: tokenizer.json and its record replaced by another BPE's were measured as bench's own; A42: the line
    says it is bench's cache and to delete it."""
    from leviathan.bench.data import bench_tokenizer
    from leviathan.errors import UserError

    cache, folder = _cache(tmp_path)
    for name in ("tokenizer.json", "leviathan_tokenizer.json"):
        (folder / name).write_bytes((data / name).read_bytes())
    with pytest.raises(UserError) as info:
        bench_tokenizer("bpe:300", cache, log=lambda msg: None)
    assert f"bench's cached tokenizer in {str(folder)!r} is not the one bench trained" in str(info.value)
    assert f"delete the folder {str(folder)!r} and run bench again" in str(info.value)


def test_a_damaged_cached_tokenizer_names_the_cache_fix_in_a_real_bench(books, tmp_path):
    """A41: a tokenizer.json of bench's cache that is not JSON: the fix was 'pass a valid tokenizer.json or a
    built-in name', which bench does not take."""
    from reliability_support import cli

    cache, folder = _cache(tmp_path, 512)  # the tiny configuration's tokenizer
    (folder / "tokenizer.json").write_text('{"garbage": 1')
    proc = cli(["bench", "--quick", "--config", "tiny", "--only", "decode", "--cache-dir", cache])
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: bench's cached tokenizer in {str(folder)!r}") and "delete the folder" in line, line
    assert "built-in name" not in line


def test_bench_json_with_a_long_legal_name_is_written(books, tmp_path):
    """Round 17 (D73): ``bench --json <250-byte name>`` was refused as "the file name is too long for the file system",
    a name the file system takes: the hidden temporary file written beside it (``.NAME.tmpPID``) was the name past
    the limit. A long name's temporary file is short now (``io._temporary_of``), and the result is written."""
    import json

    from reliability_support import cli

    out = tmp_path / ("y" * 245 + ".json")
    out.touch()  # the file system takes the name
    out.unlink()
    proc = cli(["bench", "--quick", "--config", "tiny", "--only", "train", "--threads", "1", "--json", out,
                "--cache-dir", tmp_path / "bc"])
    assert proc.returncode == 0 and "error" not in proc.stderr, proc.stderr
    assert isinstance(json.loads(out.read_text()), dict)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["bc", "books", out.name])


@pytest.mark.parametrize("argv, said", [
    (["--only", "decode", "--config", "tiny", "--decode-tokens", "1000000000"],
     "error: --decode-tokens 1,000,000,000 is more than configuration 'tiny' has positions for (64 positions, 32 of "
     "them the prompt's); pass --decode-tokens 32 or fewer"),
    (["--only", "train", "--config", "tiny,tiny"], "error: --config names 'tiny' twice; name each configuration once"),
    (["--only", "train", "--config", "bpe8k-d128,experiments"],
     "error: --config names 'bpe8k-d128' twice (the group 'experiments' includes it); name each configuration once")])
def test_bench_refuses_decode_tokens_past_the_positions_and_a_config_named_twice(tmp_path, argv, said):
    """D339: ``--decode-tokens 1000000000`` on the tiny model (64 positions) was taken and decoded on without end;
    D342: ``--config tiny,tiny`` benchmarked tiny twice and the table kept one. Both are one line before any work (no
    BPE trained into the cache)."""
    line = cli_error(["bench", "--quick", *argv, "--cache-dir", tmp_path / "bc"])
    assert line == said, line
    assert not (tmp_path / "bc").exists()


def test_bench_decodes_no_further_than_the_models_positions_by_default():
    """D339: the default 128 new tokens (without --quick) ran past the tiny model's 64 positions; the default is now
    what the positions leave after the 32-token prompt."""
    from leviathan.bench.configs import BenchOptions
    from leviathan.bench.sections import decode

    decode.check_decode_tokens(BenchOptions(configs=("tiny",), sections=("decode",), decode_tokens=32))
    assert decode._room("tiny") == 32 and decode._room("paper") == 512 - 32
