"""A data folder a BatchLoader (a TokenDataset) reads is claimed, so ``prepare --overwrite`` refuses to replace it
(issue 30 round 27, S521).

``prepare('corpus2', 'dx', 'bpe:300', overwrite=True)`` replaced a data folder a BatchLoader of the same process was
reading, without a word (the loader went on through its memory map of the deleted files), and a second script's
prepare the same way: only ``train`` took a reader claim (``locking.reading``, round 8's H1). Now a TokenDataset
claims its folder for as long as its memory map lives (``loader._claim_while_mapped``), and ``locking.held_by_another``
counts this process's own reader claims (not its own writer locks): the overwrite is one line naming the reader,
nothing deleted; once the loader is dropped the claim goes with it.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from reliability_support import cli, tree_hashes  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

pytestmark = [pytest.mark.reliability]


def _claims(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.startswith(".reader-")]


def test_prepare_overwrite_of_a_folder_a_loader_of_this_process_reads_is_refused(data, tmp_path):
    from leviathan.data.loader import BatchLoader
    from leviathan.data.prepare import prepare

    dx = Path(shutil.copytree(data, tmp_path / "dx"))
    loader = BatchLoader(str(dx), 16, 2)
    loader.next_batch()
    before = {k: v for k, v in tree_hashes(dx).items() if not k.startswith(".reader-")}
    with pytest.raises(UserError) as info:
        prepare(str(data.parent / "corpus"), dx, tokenizer=str(data), overwrite=True, progress=False,
                log=lambda msg: None)
    said = str(info.value)
    assert f"would delete {str(dx)!r}, but this process is reading it" in said and "nothing was deleted" in said, said
    assert "drop the BatchLoader or TokenDataset reading it first" in said and "\n" not in said
    assert {k: v for k, v in tree_hashes(dx).items() if not k.startswith(".reader-")} == before
    del loader
    gc.collect()
    assert _claims(dx) == []  # the claim went with the loader: the folder may be replaced now
    prepare(str(data.parent / "corpus"), dx, tokenizer=str(data), overwrite=True, progress=False, log=lambda m: None)


def test_another_processs_prepare_overwrite_names_this_reader(data, tmp_path):
    from leviathan.data.loader import BatchLoader

    dx = Path(shutil.copytree(data, tmp_path / "dx"))
    loader = BatchLoader(str(dx), 16, 2)
    proc = cli(["prepare", data.parent / "corpus", "--out", dx, "--tokenizer", data, "--overwrite", "--no-progress"],
               cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"but process {os.getpid()}" in proc.stderr and "is reading it" in proc.stderr, proc.stderr
    assert loader.next_batch() is not None
