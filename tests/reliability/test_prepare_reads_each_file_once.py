"""``prepare`` reads each real file of a corpus once, and names the links it passes over (issue 30 round 27, R84).

A corpus folder holding a.txt, ``b.txt -> a.txt`` and ``sub/c.txt -> ../a.txt`` was prepared as four documents, a.txt
three times, once per name, without a word (exit 0): round 26 read a linked folder once and named the link (P60), but
a file reached again through a link was another document. Now ``data.sources._once_each`` keeps each real file
once (its own name, not a link's), in a folder's walk and in a glob's matches alike; the names left out are in the
``note: skipped ...`` line (``prepare.skipped_note``) and in meta.json's ``source_stats.skipped_file_links``. A
byte-identical copy (not a link) stays the user's own document, as round 27's R85 found right.

Round 28 (T19, T21): a hard link (one inode, two names: ``os.path.realpath`` does not tell it) was read twice, and so
was a file two sources name (``'corpus/*.txt' corpus``, two globs both matching b0.txt): one file is now known by its
(device, inode) (``sources._file_key``), within a source and across the sources of one list (``_once_across``), and
the note says "more name(s) of a file read already".
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, write_corpus  # noqa: E402


def test_a_file_reached_through_two_links_is_read_once_and_the_links_named(tmp_path):
    corpus = write_corpus(tmp_path / "cf5", num_docs=4)
    first = sorted(corpus.iterdir())[0]
    (corpus / "sub").mkdir()
    os.symlink(first.name, corpus / "z-link.txt")
    os.symlink(f"../{first.name}", corpus / "sub" / "c.txt")
    proc = cli(["prepare", corpus, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--no-progress"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads((tmp_path / "d" / "meta.json").read_text())["source_stats"]
    assert stats["documents"] == 4, stats
    assert stats["skipped_file_links"] == [str(corpus / "sub" / "c.txt"), str(corpus / "z-link.txt")], stats
    notes = [line for line in proc.stderr.splitlines() if line.startswith("note: skipped")]
    assert notes == [f"note: skipped 2 more name(s) of a file read already ({corpus}/sub/c.txt, {corpus}/z-link.txt: "
                     f"a link, or a source naming it again), each file read once"], proc.stderr


def test_a_glob_matching_a_file_and_a_link_to_it_reads_it_once(tmp_path):
    from leviathan.data.sources import open_source

    corpus = write_corpus(tmp_path / "cg", num_docs=3)
    first = sorted(corpus.iterdir())[0]
    os.symlink(first.name, corpus / "0-link.txt")  # sorted before the file it names: the file's own name is kept
    src = open_source(str(corpus / "*.txt"))
    assert sum(1 for _ in src) == 3
    assert src.stats.skipped_file_links == [str(corpus / "0-link.txt")]


def test_a_hard_link_is_read_once_and_named(tmp_path):
    corpus = write_corpus(tmp_path / "cl3", num_docs=3)
    first = sorted(corpus.iterdir())[0]
    os.link(first, corpus / "hard.txt")
    proc = cli(["prepare", corpus, "--out", tmp_path / "d", "--tokenizer", "bpe:300", "--no-progress"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads((tmp_path / "d" / "meta.json").read_text())["source_stats"]
    assert stats["documents"] == 3 and stats["skipped_file_links"] == [str(corpus / "hard.txt")], stats
    assert f"note: skipped 1 more name(s) of a file read already ({corpus}/hard.txt: " in proc.stderr, proc.stderr


def test_a_file_two_sources_name_is_read_once(tmp_path):
    from leviathan.data.sources import open_source

    corpus = write_corpus(tmp_path / "corpus", num_docs=3)
    names = sorted(p.name for p in corpus.iterdir())
    for spec, twice in (([str(corpus / "*.txt"), str(corpus)], [str(corpus / n) for n in names]),
                        ([str(corpus / "*.txt"), str(corpus / names[0])[:-1] + "*"], [str(corpus / names[0])])):
        src = open_source(spec)
        assert sum(1 for _ in src) == 3, spec
        assert src.stats.skipped_file_links == twice, spec
