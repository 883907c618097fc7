"""``prepare`` reads each real file of a corpus once, and names the links it passes over (issue 30 round 27, R84).

A corpus folder holding a.txt, ``b.txt -> a.txt`` and ``sub/c.txt -> ../a.txt`` was prepared as four documents, a.txt
three times, once per name, without a word (exit 0): round 26 read a linked folder once and named the link (P60), but
a file reached again through a link was another document. Now ``data.sources._once_each`` keeps each real file
once (its own name, not a link's), in a folder's walk and in a glob's matches alike; the names left out are in the
``note: skipped ...`` line (``prepare.skipped_note``) and in meta.json's ``source_stats.skipped_file_links``. A
byte-identical copy (not a link) stays the user's own document, as round 27's R85 found right.
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
    assert notes == [f"note: skipped 2 link(s) to a file read already ({corpus}/sub/c.txt, {corpus}/z-link.txt), "
                     f"each file read once"], proc.stderr


def test_a_glob_matching_a_file_and_a_link_to_it_reads_it_once(tmp_path):
    from leviathan.data.sources import open_source

    corpus = write_corpus(tmp_path / "cg", num_docs=3)
    first = sorted(corpus.iterdir())[0]
    os.symlink(first.name, corpus / "0-link.txt")  # sorted before the file it names: the file's own name is kept
    src = open_source(str(corpus / "*.txt"))
    assert sum(1 for _ in src) == 3
    assert src.stats.skipped_file_links == [str(corpus / "0-link.txt")]
