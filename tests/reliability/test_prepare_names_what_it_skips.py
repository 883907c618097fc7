"""``prepare`` of a corpus folder reads a linked subfolder, and names in one line (and in meta.json) what it passes
over (issue 30 round 26, P60, P61).

A link to a folder (``more -> ../more``) was skipped without a word and not even counted (``os.walk`` does not follow
one, while a link to a file is read); an extension-less README was left out, counted only in meta.json's
``source_stats.skipped_files``, which nothing printed. The rule now (``data.sources._folder_files``): a linked folder
is followed as a linked file is read, each folder once (a link back up, or to a folder read already, is skipped and
named: no endless walk); a file no reader takes is named with the fix, in a ``note: skipped ...`` line
(``prepare.skipped_note``) and in ``source_stats.skipped_file_names`` / ``skipped_links``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, write_corpus  # noqa: E402

from leviathan.data.sources import open_source  # noqa: E402


def _prepare(tmp_path: Path, corpus: Path, out: str) -> tuple[str, dict]:
    proc = cli(["prepare", corpus, "--out", tmp_path / out, "--tokenizer", "bpe:300", "--no-progress"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr, json.loads((tmp_path / out / "meta.json").read_text())["source_stats"]


def test_a_linked_folder_is_read_and_a_link_back_up_named(tmp_path):
    corpus = write_corpus(tmp_path / "cf2", num_docs=8)
    write_corpus(tmp_path / "more", num_docs=3, seed=1)
    os.symlink("../more", corpus / "more")
    os.symlink("..", tmp_path / "more" / "loop")  # would walk tmp_path, the corpus among it, if followed
    err, stats = _prepare(tmp_path, corpus, "d")
    assert "(11 files)" in err and stats["documents"] == 11, err
    notes = [line for line in err.splitlines() if line.startswith("note: skipped")]
    assert notes == [f"note: skipped 1 link(s) to a folder read already ({corpus}/more/loop), each folder read "
                     f"once"], err
    assert stats["skipped_links"] == [f"{corpus}/more/loop"]


def test_a_file_no_reader_takes_is_named(tmp_path):
    corpus = write_corpus(tmp_path / "cf3", num_docs=8)
    (corpus / "README").write_text("an extension-less text\n")
    (corpus / "image.png").write_bytes(b"\x89PNG....")
    err, stats = _prepare(tmp_path, corpus, "d")
    line = next(line for line in err.splitlines() if line.startswith("note: skipped"))
    assert "skipped 2 file(s) no reader takes" in line and f"{corpus}/README" in line and ".txt" in line, line
    assert stats["skipped_files"] == 2 and stats["skipped_file_names"] == [f"{corpus}/README", f"{corpus}/image.png"]


def test_a_folder_reached_twice_is_read_once(tmp_path):
    corpus = write_corpus(tmp_path / "c", num_docs=2)
    os.symlink(".", corpus / "again")
    src = open_source(corpus)
    assert len(list(src)) == 2 and src.stats.skipped_links == [f"{corpus}/again"]
